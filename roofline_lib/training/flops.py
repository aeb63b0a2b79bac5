"""FLOPs per trained token, in the course's count and in the conventions published figures use.

A training step runs every matmul three times: the forward (2 FLOPs per weight per token), and in the
backward one matmul for the gradient of the input and one for the gradient of the weight (2 each): 6 FLOPs per
weight per token, "6N". Attention's two matmuls (scores QK^T, then P V) have no weights: per token and layer
the forward costs 2 T H (d_qk + d_v) FLOPs for T attended positions, 4 T H d for d_qk = d_v = d, so 12 L H d T
per token for the whole step; a causal mask halves it (a query attends on average to half the sequence).

The course's count (``flops_per_token`` without a convention) takes N as the weights that multiply: the
attention and MLP projections of every layer (the experts a token is routed to, for a MoE) and the LM head,
which is a matmul whether or not it shares its matrix with the embedding; the embedding lookup, norms and biases
do no matmul. Recomputation adds a forward: all of it but the LM head (``recompute="full"``), or attention's
score and value matmuls only (``"selective"``, Korthikanti et al. 2022), or every other matmul of each layer
(``"every_other"``: torchtitan's selective activation checkpointing, whose per-op policy saves the attention
kernel's output and every matmul's but the 2nd, 4th and 6th of a block, so the K, output and MLP up projections
run a second forward; ``every_other_share`` of each kind, which the FLOP count sums by weights: a test holds
the two to one hand count).
MFU counts the model's FLOPs (no recomputation), HFU the hardware's (with it).

Conventions (``CONVENTIONS``; ``convert_flops`` converts a published FLOP/s between any two):

- ``"model"``: 6 N + 12 L H d T, N the multiplying weights: PaLM's definition (Chowdhery et al. 2022, App. B)
  with the embedding lookup left out, and Korthikanti et al.'s model FLOPs 72 B s l h^2 (1 + s/6h + V/12lh);
- ``"causal"``: 6 N + 6 L H d T: the work a causal kernel cannot skip (the course's bound uses it);
- ``"palm"``: 6 N + 12 L H Q T with N every parameter, as PaLM writes it;
- ``"6N"``: 6 x every parameter, no attention (the quick estimate; Kaplan et al. 2020's C = 6N);
- ``"torchtitan"``: 6 (N - embedding) + 12 L H Q T (torchtitan's ``get_num_flop_per_token``);
- ``"megatron2021"``: Narayanan et al. 2021's Eq. 3, 96 B s l h^2 (1 + s/6h + V/16lh) per iteration for a GPT:
  the recomputed forward included (a hardware count), attention full. Its accounting (four passes over the
  layers' matmuls, three over the LM head) on the model's own shapes: Eq. 3 exactly for a multi-head GPT;
- ``"megatron_model"``: the same as ``"model"`` (Korthikanti et al.'s name for it);
- ``"megatron-core"``: Megatron-LM's ``num_floating_point_operations`` as its 2024 tables used it (GQA and
  SwiGLU exact, logits counted, attention full): the same as ``"model"``. Since March 2025 (commit 8873b55)
  Megatron-LM halves attention ("causal mask"): a newer log is ``"megatron-bridge"``'s count;
- ``"megatron-bridge"`` (NeMo 2.x's flop calculators) and ``"ml-engineering"`` (stas00's benchmark): causal
  attention, GQA and SwiGLU exact, the LM head counted, the embedding not: the same as ``"causal"``;
- ``"llm-foundry"``: 6 N + 12 L d_model T, N every parameter (``collect_results.py``; MPT is multi-head, so
  d_model = H Q and this is ``"palm"``);
- ``"llama3-paper"``: the Llama 3 paper's TFLOP/s per GPU, whose count is not published where it was checked:
  taken as ``"model"`` (an assumption, said where it is used).
"""

from __future__ import annotations

import typing
import warnings

import numpy as np

from ..core.checks import positive
from ..core.units import SECONDS_PER_DAY, SECONDS_PER_HOUR
from ..specs.hardware import Accelerator, get_accelerator
from ..specs.models import get_model

RECOMPUTE = ("none", "selective", "full")  # Korthikanti et al.'s three: what the search and the explorer offer
# every mode a step accepts: theirs, and torchtitan's selective checkpointing (every other matmul of a layer again)
RECOMPUTE_MODES = (*RECOMPUTE, "every_other")


def every_other_share(m, kind):
    """The share of a layer kernel's forward that torchtitan's per-op selective checkpointing runs again
    (torchtitan/models/llama3/infra/parallelize.py, _apply_ac_to_transformer_block: a fresh count per block, every
    aten.mm whose count is even is recomputed: wq 1, wk 2, wv 3, wo 4, w1 5, w3 6, w2 7): of the fused q, k, v
    projection the K part, the output projection, the up half of the gate and up projection; none of the down
    projection or attention. Other matmuls (MLA, experts): half."""
    from ..llm import parts as k

    if kind is k.QKV_PROJECTION:
        return m.num_kv_heads / (m.num_heads + 2 * m.num_kv_heads)
    return {k.OUTPUT_PROJECTION: 1.0, k.MLP_GATE_UP: 0.5, k.MLP_DOWN: 0.0, k.ATTENTION: 0.0}.get(kind, 0.5)


def matmul_params(model):
    """Weights one token multiplies in a forward pass, split: ``(layers, lm_head)``. Layers: the q, k, v, o
    projections (MLA's down and up projections) and the MLP (a MoE's router, routed experts the token uses and
    shared experts); the LM head V x h. No embedding lookup, norm or bias (no matmul).

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapter 13."""
    m = get_model(model)
    return _layer_matmul_params(m), m.vocab_size * m.hidden_size


def _layer_matmul_params(m):
    h, H, d, g = m.hidden_size, m.num_heads, m.head_dim, m.num_kv_heads
    if m.mla is None:
        attention = h * H * d + 2 * h * g * d + H * d * h
    else:
        attention = m.attention_params_per_layer()
    i = m.intermediate_size
    dense = (3 if m.mlp == "gated" else 2) * h * i
    total = m.num_layers * attention + m.dense_layers * dense
    if m.moe:
        e = m.moe
        total += m.moe_layers * (h * e.num_experts + (e.experts_per_token + e.shared_experts) * 3 * h
                                 * e.expert_intermediate_size)
    return total


def _every_other_params(m):
    """Weights whose matmul torchtitan's per-op selective checkpointing runs again, every layer."""
    if m.mla is not None or m.moe is not None or m.mlp != "gated":
        return _layer_matmul_params(m) / 2
    h, H, d, g = m.hidden_size, m.num_heads, m.head_dim, m.num_kv_heads
    return m.num_layers * (h * g * d + H * d * h + h * m.intermediate_size)


def _attention_forward(m, seq_len):
    """Forward FLOPs per token of attention's score and value matmuls, every layer, without a mask."""
    if m.mla:
        d_qk, d_v = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim, m.mla.v_head_dim
    else:
        d_qk = d_v = m.head_dim
    per_position = 2 * m.num_heads * (d_qk + d_v)
    full = m.num_layers - m.sliding_layers
    windowed = m.sliding_layers * np.minimum(seq_len, m.sliding_window or 1)
    return per_position * (full * seq_len + windowed)


def _course(m, seq_len, causal, recompute):
    layers, head = _layer_matmul_params(m), m.vocab_size * m.hidden_size
    attention = _attention_forward(m, seq_len) * (0.5 if causal else 1.0)
    flops = 6 * (layers + head) + 3 * attention
    if recompute == "full":  # the forward again, but for the LM head (its output is the loss's, kept)
        flops = flops + 2 * layers + attention
    elif recompute == "selective":  # scores and values only
        flops = flops + attention
    elif recompute == "every_other":  # K, output and MLP up projections forward again (every_other_share)
        flops = flops + 2 * _every_other_params(m)
    return flops


def _embedding(m):
    return (m.vocab_size + m.position_embeddings) * m.hidden_size


CONVENTIONS = {
    "model": lambda m, T: _course(m, T, False, "none"),
    "megatron_model": lambda m, T: _course(m, T, False, "none"),
    "causal": lambda m, T: _course(m, T, True, "none"),
    "palm": lambda m, T: 6 * m.n_active_params_with_embedding + 3 * _attention_forward(m, T),
    "6N": lambda m, T: 6 * m.n_active_params_with_embedding + 0 * T,
    "torchtitan": lambda m, T: 6 * (m.n_active_params_with_embedding - m.vocab_size * m.hidden_size)
    + 3 * _attention_forward(m, T),
    "megatron2021": lambda m, T: _course(m, T, False, "full"),
    "megatron-core": lambda m, T: _course(m, T, False, "none"),
    "megatron-bridge": lambda m, T: _course(m, T, True, "none"),
    "ml-engineering": lambda m, T: _course(m, T, True, "none"),
    "llm-foundry": lambda m, T: 6 * m.n_active_params_with_embedding + 12 * m.num_layers * m.hidden_size * T,
    "llama3-paper": lambda m, T: _course(m, T, False, "none"),
}


def _convention(name):
    if name not in CONVENTIONS:
        raise ValueError(f"unknown FLOP convention {name!r}; known: {', '.join(CONVENTIONS)}")
    return CONVENTIONS[name]


def _recompute(value):
    if value not in RECOMPUTE_MODES:
        raise ValueError(f"recompute must be one of {', '.join(map(repr, RECOMPUTE_MODES))}, got {value!r}")
    return value


def _seq_len(seq_len):
    return positive("seq_len", seq_len, integer=True)


def flops_per_token(model, seq_len, *, causal=False, recompute="none", convention=None):
    """FLOPs of training on one token of a ``seq_len`` sequence (forward and backward). Vectorised in seq_len.

    Without ``convention``: the course's count (module docstring), ``causal`` halving attention and
    ``recompute`` ("none", "selective", "full", "every_other") adding what is run again. With one
    (``CONVENTIONS``): that source's count, which fixes both (so they must stay at their defaults).

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapter 13."""
    m = get_model(model)
    T = _seq_len(seq_len)
    if convention is not None:
        if causal or recompute != "none":
            raise ValueError(f"convention {convention!r} fixes the mask and the recomputation; leave causal and "
                             "recompute at their defaults, or give no convention")
        return _convention(convention)(m, T)
    return _course(m, T, bool(causal), _recompute(recompute))


def convert_flops(model, seq_len, flops, from_convention, to_convention="model"):
    """A published FLOP/s (or FLOPs) counted one way, counted another: the tokens it stands for are the same.

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    m, T = get_model(model), _seq_len(seq_len)
    flops = positive("flops", flops)
    return flops * _convention(to_convention)(m, T) / _convention(from_convention)(m, T)


def _peak(hw, dtype):
    return get_accelerator(hw).peak_flops(dtype)


def _chip_like(value):
    return isinstance(value, str | Accelerator)


def _hw_second(name, hw, others, new_order):
    """(hw, *others) in the order the library now takes them. A call in the old order (the chip after the
    numbers: ``others`` ends with it) still works for one release and warns with the new order."""
    if _chip_like(hw) or not others or not _chip_like(others[-1]):
        return (hw, *others)
    warnings.warn(f"rl.training.{name} takes the chip second now: {name}({new_order}); the old order, with the chip "
                  "after the numbers, works for one release more", DeprecationWarning, stacklevel=3)
    return (others[-1], hw, *others[:-1])


def mfu(model, hw, tokens_per_s_per_chip, seq_len, *, dtype="bf16", convention="causal"):
    """Model FLOPs utilisation of a training run: model FLOPs per token x tokens/s per chip / the chip's dense
    peak for ``dtype``: the FLOPs the model needs (no recomputation), not those the hardware ran. The course
    counts attention causal (what a decoder needs): MFU (causal); ``convention="palm"`` gives MFU (PaLM), PaLM's
    count (every parameter, attention full; "model" counts attention full but leaves the embedding out). For an FP8
    run divide by ``mixed_peak_flops`` rather than either peak alone.

    The same quantity as ``rl.mfu`` (FLOPs / seconds / peak), from what a training log reports: a token rate
    and a model, counted in a named convention. ``rl.mfu(workload, seconds, hw)`` takes a Workload and a measured
    time instead (a kernel, an inference step); use it where you have built the work yourself.

    >>> import roofline_lib as rl
    >>> tokens_per_s = 1920 * 2048 / 60.1 / 2240       # MT-NLG: 2,240 A100s, 1,920 x 2,048 tokens in 60.1 s
    >>> f'{rl.training.mfu("gpt-530b", "A100", tokens_per_s, 2048, convention="palm"):.1%}'  # PaLM's Table 3
    '30.2%'

    Taught in chapter 12 (notebooks/12_training_step.ipynb).
    """
    hw, tokens_per_s_per_chip = _hw_second("mfu", hw, (tokens_per_s_per_chip,),
                                           "model, hw, tokens_per_s_per_chip, seq_len")
    m, T = get_model(model), _seq_len(seq_len)
    rate = positive("tokens_per_s_per_chip", tokens_per_s_per_chip)
    return rate * _convention(convention)(m, T) / _peak(hw, dtype)


def hfu(model, hw, tokens_per_s_per_chip, seq_len, *, dtype="bf16", recompute="none", causal=False):
    """Hardware FLOPs utilisation: the FLOPs the chip ran (``recompute`` included) per token x tokens/s / peak."""
    hw, tokens_per_s_per_chip = _hw_second("hfu", hw, (tokens_per_s_per_chip,),
                                           "model, hw, tokens_per_s_per_chip, seq_len")
    rate = positive("tokens_per_s_per_chip", tokens_per_s_per_chip)
    return rate * flops_per_token(model, seq_len, causal=causal, recompute=recompute) / _peak(hw, dtype)


def mixed_peak_flops(model, hw, seq_len, *, matmul_dtype="fp8", other_dtype="bf16"):
    """The peak an FP8 (or other low-precision) run can reach on ``hw``: the FLOP-weighted harmonic mean of the
    peaks, with the layers' weight matmuls at ``matmul_dtype`` and the rest of the causal count (attention's score
    and value matmuls, the LM head) at ``other_dtype``: the causal FLOPs per token over the time they take at
    those peaks. FP8 recipes keep attention and the output head in bf16 (DeepSeek-V3 technical report,
    arXiv:2412.19437, Sec. 3.3: "the embedding module, the output head, MoE gating modules, normalization
    operators, and attention operators"); memory-bound work is not in the count at all. An FP8 run's MFU against
    this peak says how close it came to what its formats allow; against the FP8 peak it reads low, against the
    bf16 peak high. Vectorised in seq_len.

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    m, T = get_model(model), _seq_len(seq_len)
    layers = _layer_matmul_params(m)
    if m.moe:  # a MoE's router stays in high precision too (the report's "MoE gating modules")
        layers -= m.moe_layers * m.hidden_size * m.moe.num_experts
    low = 6 * layers + 0 * T  # the layers' weight matmuls, forward and backward
    total = _course(m, T, True, "none")
    return total / (low / _peak(hw, matmul_dtype) + (total - low) / _peak(hw, other_dtype))


class TrainingTime(typing.NamedTuple):
    """How long a training run takes: wall-clock seconds and days, and chip-hours (what a bill counts)."""

    seconds: object
    days: object
    chip_hours: object


def time_to_train(model, hw, tokens, n_chips, seq_len, *, mfu, dtype="bf16", convention="causal"):
    """Time to train ``model`` on ``tokens`` tokens with ``n_chips`` chips running at ``mfu`` (a fraction in
    (0, 1]) of their dense ``dtype`` peak: tokens x FLOPs per token / (n_chips x peak x mfu). Vectorised.

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    hw, tokens, n_chips = _hw_second("time_to_train", hw, (tokens, n_chips),
                                     "model, hw, tokens, n_chips, seq_len, mfu=...")
    m, T = get_model(model), _seq_len(seq_len)
    tokens = positive("tokens", tokens)
    n = positive("n_chips", n_chips, integer=True)
    u = positive("mfu", mfu)
    if np.any(np.asarray(u) > 1):
        raise ValueError(f"mfu is a fraction of the peak, in (0, 1]; got {mfu!r} (a percentage? divide by 100)")
    seconds = tokens * _convention(convention)(m, T) / (n * _peak(hw, dtype) * u)
    seconds = float(seconds) if np.ndim(seconds) == 0 else seconds  # a plain number for one run
    return TrainingTime(seconds, seconds / SECONDS_PER_DAY, seconds * n / SECONDS_PER_HOUR)


__all__ = ["CONVENTIONS", "RECOMPUTE", "TrainingTime", "convert_flops", "flops_per_token", "hfu", "matmul_params",
           "mfu", "mixed_peak_flops", "time_to_train"]
