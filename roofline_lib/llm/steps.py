"""LLM inference as workloads: the FLOPs and bytes of prefill and of one decode step.

    >>> import roofline_lib as rl
    >>> m = rl.get_model("llama-2-13b")
    >>> rl.prefill(m, batch=1, prompt_len=512)          # the whole prompt in one forward pass
    Workload('Llama-2-13B prefill', flops=13.103 TFLOP, bytes=35.413 GB, intensity=370 FLOP/B, dtype='bf16')
    >>> w = rl.decode_step(m, batch=1, context=544)     # one new token per sequence
    >>> rl.units.seconds(rl.estimate(w, "A100").lower)
    '12.833 ms'
    >>> parts = rl.llm.time_by_part(w, "A100")          # where the time goes

A step is a sum of per-layer operations (``blocks``, each part typed by ``parts``: RMSNorm, QKV projection, RoPE, KV
cache write, attention, output projection, residual add, MLP projections, SiLU x up, LM head ...),
each counted as its own kernel: it reads its inputs and writes its outputs once (the minimum
traffic, the ideal of a well-tiled kernel; real kernels can move more). Attention is counted as a
fused FlashAttention-style kernel: the score matrix never goes to memory
(``attention_chain(fused=False)`` counts the unfused version).

Three dtypes are separate: ``weight_dtype`` (how weights are stored: bf16, int8, fp8, int4 ...),
``kv_dtype`` (how the KV cache is stored) and ``compute_dtype`` (the matmul precision, whose peak
FLOP/s applies; also the activations' storage). Weight-only int4 with bf16 compute is
``weight_dtype="int4", compute_dtype="bf16"``.

Every size may be a numpy array: a sweep over (batch, context) is one call.

Conventions: ``context`` of a decode step is the number of positions the new token attends to,
itself included (the KV length read). Prefill computes logits for the last position of each
sequence only (what serving engines do). MoE layers read the weights of the experts the step's
tokens are routed to: under uniform independent routing, E(1 - (1 - k/E)^tokens) of E experts.
MLA (DeepSeek-V2) decode uses the absorbed form (attention over the cached latent, as inference
kernels do); MLA prefill decompresses K and V.
"""

from __future__ import annotations

import numpy as np

from ..core.checks import dtypes, non_negative, positive
from ..roofline.bounds import estimate
from ..specs.models import get_model
from .blocks import forward
from .parts import CATEGORIES, KINDS


def prefill(model, batch, prompt_len, *, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """The forward pass over ``prompt_len`` prompt tokens of ``batch`` sequences (causal attention);
    fills the KV cache and yields each sequence's first generated token. Vectorised.

    Taught in chapter 05 (notebooks/05_llm_inference.ipynb); also used in chapters 06, 11."""
    return prefill_unchecked(get_model(model), positive("batch", batch, integer=True),
                             positive("prompt_len", prompt_len, integer=True),
                             dtypes(weight_dtype, kv_dtype, compute_dtype))


def prefill_unchecked(m, batch, prompt_len, dt):
    """``prefill`` for a Model, checked sizes and a ``Dtypes`` bundle (what the modules above call)."""
    return forward(m, batch, prompt_len, prompt_len, dt, causal=True, logits_per_sequence=1,
                   name=f"{m.name} prefill")


def decode_step(model, batch, context, *, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """One decode step: one new token for each of ``batch`` sequences, attending to ``context``
    positions (the KV cache, the new token included). Reads every weight (MoE: the experts used)
    and the whole KV cache once. Vectorised.

    Taught in chapter 02 (notebooks/02_roofline_model.ipynb); also used in chapters 04, 05, 06, 08, 09, 10, 11."""
    return decode_step_unchecked(get_model(model), positive("batch", batch, integer=True),
                                 positive("context", context, integer=True),
                                 dtypes(weight_dtype, kv_dtype, compute_dtype))


def decode_step_unchecked(m, batch, context, dt):
    """``decode_step`` for a Model, checked sizes and a ``Dtypes`` bundle."""
    return forward(m, batch, 1, context, dt, causal=False, logits_per_sequence=1, name=f"{m.name} decode step")


def extend_step(model, batch, new_tokens, cached_len, *, logits_per_sequence=1, weight_dtype="bf16",
                kv_dtype="bf16", compute_dtype="bf16"):
    """A forward pass over ``new_tokens`` tokens of each of ``batch`` sequences whose first ``cached_len``
    positions are already in the KV cache (causal among the new tokens; each attends to the cached positions
    too): a chunk of a chunked prefill, the uncached suffix of a prompt under prefix caching, or a speculative
    verify step (the last accepted token and k drafted ones, ``logits_per_sequence=k + 1``).
    ``cached_len=0`` is ``prefill``; ``new_tokens=1`` is ``decode_step(context=cached_len + 1)``. Vectorised."""
    new_tokens = positive("new_tokens", new_tokens, integer=True)
    logits = positive("logits_per_sequence", logits_per_sequence, integer=True)
    if np.any(np.asarray(logits) > np.asarray(new_tokens)):
        raise ValueError(f"logits_per_sequence ({logits_per_sequence}) cannot exceed new_tokens ({new_tokens}): "
                         "logits come only from the positions the pass computes")
    return extend_step_unchecked(get_model(model), positive("batch", batch, integer=True), new_tokens,
                                 non_negative("cached_len (0: a plain prefill)", cached_len, integer=True),
                                 dtypes(weight_dtype, kv_dtype, compute_dtype), logits)


def extend_step_unchecked(m, batch, new_tokens, cached_len, dt, logits_per_sequence=1):
    """``extend_step`` for a Model, checked sizes and a ``Dtypes`` bundle."""
    return forward(m, batch, new_tokens, cached_len + new_tokens, dt, causal=True,
                   logits_per_sequence=logits_per_sequence, name=f"{m.name} extend step")


def time_by_part(workload, hw, dtype=None):
    """{part name: seconds} with each part at its own roofline bound, max(t_math, t_mem),
    parts of the same name (the same op in every layer) added up. Vectorised."""
    out = {}
    for p in estimate(workload, hw, dtype).parts:
        out[p.workload.name] = out.get(p.workload.name, 0) + p.lower
    return out


def category_of(part):
    """Which of ``CATEGORIES`` a part (a Workload of a prefill or decode step, or its name) belongs to:
    where the bytes it moves come from. The category is data the step sets on each part."""
    if isinstance(part, str):
        known = _category_by_name()
        if part not in known:
            raise ValueError(f"{part!r} is not a part of an LLM step; parts: {', '.join(sorted(known))}")
        return known[part]
    if not part.category:
        raise ValueError(f"part {part.name!r} has no category; time_by_category needs the parts of "
                         "rl.prefill or rl.decode_step")
    return part.category


def time_by_category(workload, hw, dtype=None):
    """{category: seconds}, every category of ``CATEGORIES`` present (0 where none), parts at their own
    roofline bound (parts of one name added first, as ``time_by_part`` adds them). Vectorised.

    Taught in chapter 05 (notebooks/05_llm_inference.ipynb)."""
    by_name, category = {}, {}
    for p in estimate(workload, hw, dtype).parts:
        name = p.workload.name
        by_name[name] = by_name.get(name, 0) + p.lower
        category.setdefault(name, category_of(p.workload))
    out = dict.fromkeys(CATEGORIES, 0)
    for name, seconds in by_name.items():
        out[category[name]] = out[category[name]] + seconds
    return out


def kernel_sum_time(workload, hw, dtype=None):
    """The step's time if its kernels run one after another, each at its own roofline bound:
    sum of max(t_math, t_mem) over parts. Lies between estimate().lower and .no_overlap (the
    no-overlap time at peak rates; neither is a bound on what real kernels take).

    Taught in chapter 05 (notebooks/05_llm_inference.ipynb)."""
    return sum(p.lower for p in estimate(workload, hw, dtype).parts)


def _category_by_name():
    """{part name: category} over every kind of part (for ``category_of(name)``)."""
    return {kind.name: kind.category for kind in KINDS}


__all__ = [
    "category_of", "decode_step", "extend_step", "kernel_sum_time", "prefill", "time_by_category", "time_by_part",
]
