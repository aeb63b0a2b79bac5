"""LLM inference as workloads: the FLOPs and bytes of prefill and of one decode step.

    m = rl.get_model("llama-2-13b")
    w = rl.prefill(m, batch=1, prompt_len=512)          # the whole prompt in one forward pass
    w = rl.decode_step(m, batch=1, context=544)         # one new token per sequence
    rl.estimate(w, "A100").lower                        # seconds
    time_by_part(w, "A100")                             # where the time goes

A step is a sum of named per-layer operations (RMSNorm, QKV projection, RoPE,
KV cache write, attention, output projection, residual add, MLP projections,
SiLU x up, LM head ...), each counted as its own kernel: it reads its inputs
and writes its outputs once (the minimum traffic, the ideal of a well-tiled
kernel; real kernels can move more). Attention is
counted as a fused FlashAttention-style kernel: the score matrix never goes to
memory (``attention_chain(fused=False)`` counts the unfused version).

Three dtypes are separate: ``weight_dtype`` (how weights are stored: bf16,
int8, fp8, int4 ...), ``kv_dtype`` (how the KV cache is stored) and
``compute_dtype`` (the matmul precision, whose peak FLOP/s applies; also the
activations' storage). Weight-only int4 with bf16 compute is
``weight_dtype="int4", compute_dtype="bf16"``.

Every size may be a numpy array: a sweep over (batch, context) is one call.

Conventions: ``context`` of a decode step is the number of positions the new
token attends to, itself included (the KV length read). Prefill computes
logits for the last position of each sequence only (what serving engines do).
MoE layers read the weights of the experts the step's tokens are routed to:
under uniform independent routing, E(1 - (1 - k/E)^tokens) of E experts.
MLA (DeepSeek-V2) decode uses the absorbed form (attention over the cached
latent, as inference kernels do); MLA prefill decompresses K and V.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .dtypes import bytes_per_element, canonical_dtype
from .hardware import get_accelerator
from .models import MLA, Model, MoE, expected_experts_touched, get_model, list_models, load_model
from .roofline import estimate
from .validation import positive
from .workloads import Workload, elementwise, matmul

# FLOPs per element of the elementwise ops (rough counts; these ops are memory-bound by a wide margin)
RMSNORM_FLOPS = 4  # square, accumulate, scale by 1/rms, multiply by the weight
ROPE_FLOPS = 3  # x*cos + rotate(x)*sin
SILU_MUL_FLOPS = 5  # x * sigmoid(x) (exp, add, divide, multiply), then * up


class _Dtypes:
    def __init__(self, weight_dtype, kv_dtype, compute_dtype):
        self.w = canonical_dtype(weight_dtype)
        self.kv = canonical_dtype(kv_dtype)
        self.act = canonical_dtype(compute_dtype)


def _mm(name, tokens, n_out, n_in, dt):
    """Activations [tokens, n_in] @ weights [n_in, n_out]."""
    return matmul(tokens, n_out, n_in, dtype=dt.act, b_dtype=dt.w, compute_dtype=dt.act, name=name)


def _norm(name, n, dt):
    return elementwise(n, dt.act, flops_per_element=RMSNORM_FLOPS, inputs=1, outputs=1, name=name)


def _residual(n, dt):
    return elementwise(n, dt.act, flops_per_element=1, inputs=2, outputs=1, name="residual add")


def _silu_mul(name, n, dt):
    return elementwise(n, dt.act, flops_per_element=SILU_MUL_FLOPS, inputs=2, outputs=1, name=name)


def _kv_write(tokens, elements_per_token, dt):
    """Store the new tokens' K and V (read in the activation dtype, written in the cache dtype)."""
    return Workload("KV cache write", 0 * tokens, tokens * elements_per_token
                    * (bytes_per_element(dt.act) + bytes_per_element(dt.kv)), dt.act)


def _repeat(workload, count):
    """``workload`` done ``count`` times (once per layer), its parts keeping their op names."""
    return sum(dataclasses.replace(p, flops=p.flops * count, bytes=p.bytes * count) for p in workload.leaves())


def _pairs(q_len, kv_len, causal):
    """Query-key pairs: the new q_len queries are the last of kv_len positions."""
    if causal:
        return q_len * kv_len - q_len * (q_len - 1) / 2
    return q_len * kv_len


# ---------------------------------------------------------------- one layer's blocks

def _attention_block(m, batch, q_len, kv_len, dt, *, causal):
    """Norm, projections, RoPE, cache write, attention and residual of one layer."""
    h, H, Hkv, d = m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim
    tokens = batch * q_len
    act, kv = bytes_per_element(dt.act), bytes_per_element(dt.kv)
    parts = [_norm("RMSNorm", tokens * h, dt)]
    if m.mla:
        parts += _mla_attention(m, batch, q_len, kv_len, dt, causal=causal)
    else:
        parts += [
            _mm("QKV projection", tokens, (H + 2 * Hkv) * d, h, dt),
            elementwise(tokens * (H + Hkv) * d, dt.act, flops_per_element=ROPE_FLOPS, name="RoPE"),
            _kv_write(tokens, 2 * Hkv * d, dt),
            Workload("attention (reads KV cache)",
                     2 * batch * H * _pairs(q_len, kv_len, causal) * 2 * d,
                     act * tokens * H * d * 2 + kv * batch * kv_len * Hkv * 2 * d, dt.act),
            _mm("output projection", tokens, h, H * d, dt),
        ]
    parts.append(_residual(tokens * h, dt))
    return sum(parts)


def _mla_attention(m, batch, q_len, kv_len, dt, *, causal):
    """Multi-head latent attention. Decode (q_len < kv_len or absorbed): the K and V
    up-projections are absorbed into the query and output side and attention runs over the
    cached latent (every head shares it, like one K/V head of width r + rope). Prefill:
    K and V are decompressed for all positions and attention is ordinary multi-head."""
    a, h, H = m.mla, m.hidden_size, m.num_heads
    r, nope, rope, dv = a.kv_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim
    tokens = batch * q_len
    act, kv = bytes_per_element(dt.act), bytes_per_element(dt.kv)
    pairs = _pairs(q_len, kv_len, causal)
    if a.q_lora_rank:
        parts = [_mm("Q down-projection", tokens, a.q_lora_rank, h, dt),
                 _norm("RMSNorm", tokens * a.q_lora_rank, dt),
                 _mm("Q projection", tokens, H * (nope + rope), a.q_lora_rank, dt)]
    else:
        parts = [_mm("Q projection", tokens, H * (nope + rope), h, dt)]
    parts += [
        _mm("KV down-projection (latent)", tokens, r + rope, h, dt),
        _norm("RMSNorm", tokens * r, dt),
        elementwise(tokens * (H + 1) * rope, dt.act, flops_per_element=ROPE_FLOPS, name="RoPE"),
        _kv_write(tokens, r + rope, dt),
    ]
    if _absorbed(q_len, kv_len):
        parts += [
            (_mm("K up-projection (absorbed)", tokens, r, nope, dt) * H).renamed("K up-projection (absorbed)"),
            Workload("attention (reads KV cache)", 2 * batch * H * pairs * ((r + rope) + r),
                     act * tokens * H * (r + rope) + kv * batch * kv_len * (r + rope) + act * tokens * H * r,
                     dt.act),
            (_mm("V up-projection (absorbed)", tokens, dv, r, dt) * H).renamed("V up-projection (absorbed)"),
        ]
    else:
        parts += [
            _mm("KV up-projection", batch * kv_len, H * (nope + dv), r, dt),
            Workload("attention (reads KV cache)", 2 * batch * H * pairs * ((nope + rope) + dv),
                     act * (tokens * H * (nope + rope) + batch * kv_len * H * (nope + rope + dv)
                            + tokens * H * dv), dt.act),
        ]
    parts.append(_mm("output projection", tokens, h, H * dv, dt))
    return parts


def _absorbed(q_len, kv_len):
    """MLA runs in absorbed form for decode (one query per sequence), decompressed for prefill."""
    return bool(np.all(np.asarray(q_len) == 1))


def _dense_mlp_block(m, tokens, dt, intermediate=None, prefix="MLP"):
    h, i = m.hidden_size, intermediate or m.intermediate_size
    return sum([
        _mm(f"{prefix} gate+up projection", tokens, 2 * i, h, dt),
        _silu_mul(f"{prefix} SiLU x up", tokens * i, dt),
        _mm(f"{prefix} down projection", tokens, h, i, dt),
    ])


def _moe_mlp_block(m, tokens, dt):
    """Router, the routed experts (weights read once per expert touched), shared experts, combine."""
    e, h = m.moe, m.hidden_size
    i, k = e.expert_intermediate_size, e.experts_per_token
    act, w = bytes_per_element(dt.act), bytes_per_element(dt.w)
    touched = expected_experts_touched(e.num_experts, k, tokens)
    routed = tokens * k  # token-expert assignments
    parts = [
        _mm("MoE router", tokens, e.num_experts, h, dt),
        Workload("MoE experts gate+up", 2 * routed * h * 2 * i,
                 act * routed * h + w * touched * h * 2 * i + act * routed * 2 * i, dt.act),
        _silu_mul("MoE experts SiLU x up", routed * i, dt),
        Workload("MoE experts down", 2 * routed * i * h,
                 act * routed * i + w * touched * i * h + act * routed * h, dt.act),
        Workload("MoE combine", 2 * routed * h, act * (routed * h + tokens * h), dt.act),
    ]
    if e.shared_experts:
        parts.append(_dense_mlp_block(m, tokens, dt, e.shared_experts * i, prefix="shared experts"))
    return sum(parts)


def _mlp_block(m, tokens, dt, moe):
    h = m.hidden_size
    body = _moe_mlp_block(m, tokens, dt) if moe else _dense_mlp_block(m, tokens, dt)
    return _norm("RMSNorm", tokens * h, dt) + body + _residual(tokens * h, dt)


def _forward(m, batch, q_len, kv_len, dt, *, causal, logits_per_sequence):
    h, V = m.hidden_size, m.vocab_size
    tokens = batch * q_len
    embed = Workload("embedding lookup", 0 * tokens,
                     tokens * h * (bytes_per_element(dt.w) + bytes_per_element(dt.act)), dt.act)
    parts = [embed, _repeat(_attention_block(m, batch, q_len, kv_len, dt, causal=causal), m.num_layers)]
    if m.dense_layers:
        parts.append(_repeat(_mlp_block(m, tokens, dt, moe=False), m.dense_layers))
    if m.moe_layers:
        parts.append(_repeat(_mlp_block(m, tokens, dt, moe=True), m.moe_layers))
    parts += [_norm("final RMSNorm", tokens * h, dt), _mm("LM head", batch * logits_per_sequence, V, h, dt)]
    return sum(parts)


# ---------------------------------------------------------------- public: prefill, decode

def prefill(model, batch, prompt_len, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """The forward pass over ``prompt_len`` prompt tokens of ``batch`` sequences (causal attention);
    fills the KV cache and yields each sequence's first generated token. Vectorised."""
    m = get_model(model)
    batch = positive("batch", batch, integer=True)
    prompt_len = positive("prompt_len", prompt_len, integer=True)
    dt = _Dtypes(weight_dtype, kv_dtype, compute_dtype)
    w = _forward(m, batch, prompt_len, prompt_len, dt, causal=True, logits_per_sequence=1)
    return w.renamed(f"{m.name} prefill")


def decode_step(model, batch, context, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """One decode step: one new token for each of ``batch`` sequences, attending to ``context``
    positions (the KV cache, the new token included). Reads every weight (MoE: the experts used)
    and the whole KV cache once. Vectorised."""
    m = get_model(model)
    batch = positive("batch", batch, integer=True)
    context = positive("context", context, integer=True)
    dt = _Dtypes(weight_dtype, kv_dtype, compute_dtype)
    w = _forward(m, batch, 1, context, dt, causal=False, logits_per_sequence=1)
    return w.renamed(f"{m.name} decode step")


def extend_step(model, batch, new_tokens, cached_len, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16",
                logits_per_sequence=1):
    """A forward pass over ``new_tokens`` tokens of each of ``batch`` sequences whose first ``cached_len``
    positions are already in the KV cache (causal among the new tokens; each attends to the cached positions
    too): a chunk of a chunked prefill, the uncached suffix of a prompt under prefix caching, or a speculative
    verify step (the last accepted token and k drafted ones, ``logits_per_sequence=k + 1``).
    ``cached_len=0`` is ``prefill``; ``new_tokens=1`` is ``decode_step(context=cached_len + 1)``. Vectorised."""
    m = get_model(model)
    batch = positive("batch", batch, integer=True)
    new_tokens = positive("new_tokens", new_tokens, integer=True)
    cached = np.asarray(cached_len, dtype=float) if not isinstance(cached_len, bool) else np.array(np.nan)
    if cached.size == 0 or not np.all(np.isfinite(cached)) or np.any(cached < 0) or np.any(cached != np.round(cached)):
        raise ValueError(f"cached_len must be a whole number of positions >= 0 (0: a plain prefill); "
                         f"got {cached_len!r}")
    cached = cached.item() if cached.ndim == 0 else cached
    logits = positive("logits_per_sequence", logits_per_sequence, integer=True)
    if np.any(np.asarray(logits) > np.asarray(new_tokens)):
        raise ValueError(f"logits_per_sequence ({logits_per_sequence}) cannot exceed new_tokens ({new_tokens}): "
                         "logits come only from the positions the pass computes")
    dt = _Dtypes(weight_dtype, kv_dtype, compute_dtype)
    w = _forward(m, batch, new_tokens, cached + new_tokens, dt, causal=True, logits_per_sequence=logits)
    return w.renamed(f"{m.name} extend step")


def time_by_part(workload, hw, dtype=None):
    """{part name: seconds} with each part at its own roofline bound, max(t_math, t_mem),
    parts of the same name (the same op in every layer) added up. Vectorised."""
    out = {}
    for p in estimate(workload, hw, dtype).parts:
        out[p.workload.name] = out.get(p.workload.name, 0) + p.lower
    return out


CATEGORIES = ("attention weights", "MLP / expert weights", "KV cache", "LM head + embedding",
              "norms, RoPE, residuals")


def category_of(part_name):
    """Which of ``CATEGORIES`` a part belongs to: where the bytes it moves come from."""
    if part_name.startswith("attention") or part_name == "KV cache write":
        return "KV cache"
    if part_name in ("LM head", "embedding lookup"):
        return "LM head + embedding"
    if part_name.startswith(("MLP", "MoE", "shared experts")):
        return "MLP / expert weights"
    if "projection" in part_name:
        return "attention weights"
    return "norms, RoPE, residuals"


def time_by_category(workload, hw, dtype=None):
    """{category: seconds}, every category of ``CATEGORIES`` present (0 where none), parts at their own
    roofline bound. Vectorised."""
    out = dict.fromkeys(CATEGORIES, 0)
    for name, seconds in time_by_part(workload, hw, dtype).items():
        out[category_of(name)] = out[category_of(name)] + seconds
    return out


def kernel_sum_time(workload, hw, dtype=None):
    """The step's time if its kernels run one after another, each at its own roofline bound:
    sum of max(t_math, t_mem) over parts. Lies between estimate().lower and .no_overlap (the
    no-overlap time at peak rates; neither is a bound on what real kernels take)."""
    return sum(p.lower for p in estimate(workload, hw, dtype).parts)


# ---------------------------------------------------------------- memory

def memory_required(model, batch, context, weight_dtype="bf16", kv_dtype="bf16"):
    """Bytes of weights plus the KV cache of ``batch`` sequences of ``context`` positions.
    Activations and the runtime's own memory are not included (see ``usable_memory``)."""
    m = get_model(model)
    return m.weight_bytes(weight_dtype) + m.kv_cache_bytes(batch, context, kv_dtype)


# vLLM's default share of GPU memory the engine may take (its --gpu-memory-utilization flag,
# default 0.9 in vllm/engine/arg_utils.py): the rest is left for other processes and headroom.
VLLM_GPU_MEMORY_UTILIZATION = 0.9
# A CUDA context alone takes roughly 0.3-0.5 GiB on a datacenter GPU before any tensor exists.
CUDA_CONTEXT_BYTES = 0.5 * 2**30


def usable_memory(hw, usable_fraction=1.0, reserved_bytes=0.0):
    """Bytes left for weights + KV cache on one chip.

    ``hw.mem_capacity`` is what the driver reports (nvidia-smi memory.total). A serving engine
    takes ``usable_fraction`` of it (vLLM: ``VLLM_GPU_MEMORY_UTILIZATION`` = 0.9) and, inside that,
    ``reserved_bytes`` go to the CUDA context, activations and workspace
    (``CUDA_CONTEXT_BYTES`` is the context alone). The defaults give the physical limit.
    """
    usable_fraction = positive("usable_fraction", usable_fraction)
    if np.any(np.asarray(usable_fraction) > 1):
        raise ValueError(f"usable_fraction is the share of the chip's memory for weights + KV cache, "
                         f"in (0, 1] (vLLM uses 0.9); got {usable_fraction}")
    if isinstance(reserved_bytes, bool) or not np.all(np.isfinite(reserved_bytes)) \
            or np.any(np.asarray(reserved_bytes) < 0):
        raise ValueError(f"reserved_bytes must be a finite number of bytes >= 0 "
                         f"(e.g. rl.llm.CUDA_CONTEXT_BYTES); got {reserved_bytes!r}")
    usable = get_accelerator(hw).mem_capacity * usable_fraction - reserved_bytes
    if np.any(np.asarray(usable) <= 0):
        raise ValueError(f"reserved_bytes ({reserved_bytes!r}) leaves no memory of "
                         f"{get_accelerator(hw).name} for weights and KV cache")
    return usable


def fits(model, hw, batch, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """Whether weights + KV cache fit in the usable memory of one chip (see ``usable_memory``). Vectorised."""
    need = memory_required(model, batch, context, weight_dtype, kv_dtype)
    return np.asarray(need) <= usable_memory(hw, usable_fraction, reserved_bytes)


def max_batch(model, hw, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """The most sequences of ``context`` positions whose KV cache fits beside the weights in the usable
    memory of one chip (0 where the weights alone do not fit; see ``usable_memory``). Vectorised over context."""
    m = get_model(model)
    free = usable_memory(hw, usable_fraction, reserved_bytes) - m.weight_bytes(weight_dtype)
    per_sequence = m.kv_cache_bytes(1, context, kv_dtype)
    result = np.floor(np.maximum(free, 0) / per_sequence).astype(int)
    return int(result) if result.ndim == 0 else result


# ---------------------------------------------------------------- fusion: intermediates in memory

def gated_mlp_chain(tokens, hidden, intermediate, dtype="bf16", *, fused=False):
    """The gated MLP x -> down(silu(gate(x)) * up(x)) as kernels.

    Unfused (5 kernels): gate matmul writes G, up matmul writes U, SiLU reads G writes A,
    multiply reads A and U writes P, down matmul reads P: [tokens, intermediate] arrays cross
    memory 8 times, and x is read twice. Fused (2 kernels): one gate+up matmul whose epilogue
    applies SiLU and the multiply writes only P, which the down matmul reads (2 crossings)."""
    n, h, i = tokens, hidden, intermediate
    size = bytes_per_element(dtype)
    if fused:
        return sum([
            Workload("gate+up matmul with SiLU x up epilogue", 2 * n * 2 * i * h + SILU_MUL_FLOPS * n * i,
                     size * (n * h + h * 2 * i + n * i), canonical_dtype(dtype)),
            matmul(n, h, i, dtype, name="down matmul"),
        ])
    return sum([
        matmul(n, i, h, dtype, name="gate matmul"),
        matmul(n, i, h, dtype, name="up matmul"),
        elementwise(n * i, dtype, flops_per_element=SILU_MUL_FLOPS - 1, name="SiLU"),
        elementwise(n * i, dtype, flops_per_element=1, inputs=2, outputs=1, name="multiply"),
        matmul(n, h, i, dtype, name="down matmul"),
    ])


def attention_chain(batch, heads, kv_heads, q_len, kv_len, head_dim, dtype="bf16", *, fused=False,
                    causal=False):
    """Attention as kernels. Fused (FlashAttention): Q, K, V read and O written once; the score
    matrix stays on chip. Unfused: S = QK^T is written, softmax reads S and writes P (scale and
    mask folded into the softmax kernel), PV reads P: the [batch, heads, q_len, kv_len] scores
    cross memory 4 times."""
    B, H, Hkv, T, S, d = batch, heads, kv_heads, q_len, kv_len, head_dim
    size = bytes_per_element(dtype)
    pairs = _pairs(T, S, causal)
    if fused:
        return Workload("fused attention (FlashAttention)", 4 * B * H * pairs * d,
                        size * B * (2 * T * H * d + 2 * S * Hkv * d), canonical_dtype(dtype))
    scores = size * B * H * T * S  # stored in full even with a causal mask
    return sum([
        Workload("QK^T matmul", 2 * B * H * pairs * d, size * B * (T * H * d + S * Hkv * d) + scores,
                 canonical_dtype(dtype)),
        Workload("softmax", 5 * B * H * pairs, 2 * scores, canonical_dtype(dtype)),
        Workload("PV matmul", 2 * B * H * pairs * d, scores + size * B * (S * Hkv * d + T * H * d),
                 canonical_dtype(dtype)),
    ])


# ---------------------------------------------------------------- FlashDecoding: an occupancy model

def sm_utilisation(blocks, compute_units):
    """Share of a chip's SMs busy when ``blocks`` equal thread blocks run in waves of
    ``compute_units``: blocks / (SMs x waves). Fewer blocks than SMs leaves SMs idle. Vectorised."""
    blocks = positive("blocks", blocks)
    units = positive("compute_units", compute_units, integer=True)
    waves = np.ceil(blocks / units)
    return blocks / (units * waves)


def decode_attention_blocks(model, batch, splits=1):
    """Thread blocks of a decode attention kernel: FlashAttention-2 launches one per (sequence,
    query head), since a decode step has a single query block; FlashDecoding also splits the KV
    sequence into ``splits`` chunks, each its own block (partial results merged afterwards)."""
    m = get_model(model)
    return positive("batch", batch) * m.num_heads * positive("splits", splits)


def flash_decoding_splits(model, hw, batch, context, min_chunk=256, max_splits=128):
    """How many KV splits the course's occupancy model gives FlashDecoding: the fewest whose SM utilisation
    (one block per SM) is within 85 % of the best over 1..max_splits, with chunks no shorter than
    ``min_chunk`` positions. A simplification of flash-attn's ``num_splits_heuristic``, which counts two
    blocks per SM and skips split counts that do not shorten the chunks (``flash_attn_num_splits``).
    Vectorised over batch and context."""
    hw = get_accelerator(hw)
    if hw.compute_units is None:
        raise ValueError(f"{hw.name} has no SM/CU count in its data file; the occupancy model needs one")
    base = np.asarray(decode_attention_blocks(model, batch), dtype=float)
    most = np.maximum(np.floor(positive("context", context) / positive("min_chunk", min_chunk)), 1)
    base, most = np.broadcast_arrays(base, np.minimum(most, max_splits))
    candidates = np.arange(1, max_splits + 1).reshape((-1,) + (1,) * base.ndim)
    util = sm_utilisation(base * candidates, hw.compute_units)
    util = np.where(candidates <= most, util, 0.0)
    good = util >= 0.85 * util.max(axis=0)
    splits = candidates[np.argmax(good, axis=0)].reshape(base.shape) if base.ndim else candidates[np.argmax(good)]
    splits = np.asarray(splits, dtype=float).reshape(base.shape)
    return float(splits) if splits.ndim == 0 else splits


def flash_attn_num_splits_heuristic(batch_nheads_mblocks, num_sms, num_n_blocks, max_splits=128):
    """flash-attn 2's ``num_splits_heuristic`` (csrc/flash_attn/flash_api.cpp), line for line: no split once
    the blocks fill 80 % of ``num_sms`` slots; otherwise the fewest *eligible* splits (ones that shorten each
    split's run of KV blocks) whose wave efficiency is within 85 % of the best."""
    batch_nheads_mblocks = int(positive("batch_nheads_mblocks", batch_nheads_mblocks, integer=True))
    num_sms = int(positive("num_sms", num_sms, integer=True))
    num_n_blocks = int(positive("num_n_blocks", num_n_blocks, integer=True))
    if batch_nheads_mblocks >= 0.8 * num_sms:
        return 1
    max_splits = min(int(max_splits), num_sms, num_n_blocks)

    def eligible(s):
        return s == 1 or -(-num_n_blocks // s) != -(-num_n_blocks // (s - 1))

    efficiency = {}
    for s in range(1, max_splits + 1):
        if eligible(s):
            waves = batch_nheads_mblocks * s / num_sms
            efficiency[s] = waves / math.ceil(waves)
    best = max(efficiency.values())
    return next(s for s, e in efficiency.items() if e >= 0.85 * best)


def flash_attn_num_splits(model, hw, batch, context, q_len=1):
    """The KV splits flash-attn 2 picks for a decode attention call (``set_params_splitkv``): blocks of
    64 queries, KV blocks of 256/128/64 positions for head_dim <= 64/<= 128/larger, and two thread
    blocks per SM (128 threads each). Scalars only."""
    m, hw = get_model(model), get_accelerator(hw)
    if hw.compute_units is None:
        raise ValueError(f"{hw.name} has no SM count in its data file; flash-attn's rule needs one")
    block_n = 256 if m.head_dim <= 64 else (128 if m.head_dim <= 128 else 64)
    n_blocks = math.ceil(positive("context", context, integer=True) / block_n)
    m_blocks = math.ceil(positive("q_len", q_len, integer=True) / 64)
    blocks = int(positive("batch", batch, integer=True)) * m.num_heads * m_blocks
    return flash_attn_num_splits_heuristic(blocks, 2 * hw.compute_units, n_blocks)


def decode_attention_time(model, hw, batch, context, kv_dtype="bf16", splits=1):
    """Time of one layer's decode attention if it streams the KV cache at the chip's bandwidth times
    the SM utilisation (the assumption: each busy SM draws at most its share, bandwidth / SMs)."""
    hw = get_accelerator(hw)
    m = get_model(model)
    if hw.compute_units is None:
        raise ValueError(f"{hw.name} has no SM/CU count in its data file; the occupancy model needs one")
    nbytes = m.kv_cache_bytes(batch, context, kv_dtype) / m.num_layers
    util = sm_utilisation(decode_attention_blocks(m, batch, splits), hw.compute_units)
    return nbytes / (hw.mem_bandwidth * util)


__all__ = [
    "CATEGORIES", "MLA", "Model", "MoE", "attention_chain", "category_of", "decode_attention_blocks",
    "decode_attention_time", "decode_step", "expected_experts_touched", "extend_step", "fits", "flash_decoding_splits",
    "gated_mlp_chain", "get_model", "kernel_sum_time", "list_models", "load_model", "max_batch",
    "memory_required", "prefill", "sm_utilisation", "time_by_category", "time_by_part",
]
