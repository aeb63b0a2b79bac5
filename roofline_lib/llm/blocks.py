"""One transformer layer as kernels: the workloads ``rl.prefill`` and ``rl.decode_step`` add up.

A step is a sum of named per-layer operations (RMSNorm, QKV projection, RoPE, KV cache write,
attention, output projection, residual add, MLP projections, SiLU x up, LM head ...), each counted
as its own kernel that reads its inputs and writes its outputs once. Each part carries its
``category`` (``CATEGORIES``): where the bytes it moves come from.

The sizes reaching this module were checked once by the public function that called it
(``llm.prefill``, ``llm.decode_step``), and the model's shapes when its file was read, so the
operations here are built without checking again: that is what keeps one decode step fast.
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import BYTES_PER_ELEMENT, canonical_dtype
from ..roofline.workloads import Workload, causal_pairs, elementwise_counts, matmul_counts, total
from ..specs.models import expected_experts_touched

# FLOPs per element of the elementwise ops (rough counts; these ops are memory-bound by a wide margin)
RMSNORM_FLOPS = 4  # square, accumulate, scale by 1/rms, multiply by the weight
ROPE_FLOPS = 3  # x*cos + rotate(x)*sin
SILU_MUL_FLOPS = 5  # x * sigmoid(x) (exp, add, divide, multiply), then * up

ATTENTION_WEIGHTS = "attention weights"
MLP_WEIGHTS = "MLP / expert weights"
KV_CACHE = "KV cache"
LM_HEAD = "LM head + embedding"
SMALL_OPS = "norms, RoPE, residuals"
# Where a step's bytes come from, in the order the LLM explorer draws them.
CATEGORIES = (ATTENTION_WEIGHTS, MLP_WEIGHTS, KV_CACHE, LM_HEAD, SMALL_OPS)


class Dtypes:
    """The three dtypes of a step: weights as stored, the KV cache as stored, and the compute dtype
    (whose peak applies; activations are stored in it too)."""

    def __init__(self, weight_dtype, kv_dtype, compute_dtype):
        self.w = canonical_dtype(weight_dtype)
        self.kv = canonical_dtype(kv_dtype)
        self.act = canonical_dtype(compute_dtype)


def _mm(name, tokens, n_out, n_in, dt, category=ATTENTION_WEIGHTS):
    """Activations [tokens, n_in] @ weights [n_in, n_out]."""
    return matmul_counts(tokens, n_out, n_in, dt.act, dt.w, dt.act, dt.act, name, category)


def _norm(name, n, dt):
    return elementwise_counts(n, dt.act, RMSNORM_FLOPS, 1, 1, name, SMALL_OPS)


def _residual(n, dt):
    return elementwise_counts(n, dt.act, 1, 2, 1, "residual add", SMALL_OPS)


def _silu_mul(name, n, dt):
    return elementwise_counts(n, dt.act, SILU_MUL_FLOPS, 2, 1, name, MLP_WEIGHTS)


def _kv_write(tokens, elements_per_token, dt):
    """Store the new tokens' K and V (read in the activation dtype, written in the cache dtype)."""
    return Workload("KV cache write", 0 * tokens, tokens * elements_per_token
                    * (BYTES_PER_ELEMENT[dt.act] + BYTES_PER_ELEMENT[dt.kv]), dt.act, (), KV_CACHE)


def pairs(q_len, kv_len, causal):
    """Query-key pairs: the new q_len queries are the last of kv_len positions."""
    return causal_pairs(q_len, kv_len) if causal else q_len * kv_len


# ---------------------------------------------------------------- one layer's blocks

def attention_block(m, batch, q_len, kv_len, dt, *, causal):
    """Norm, projections, RoPE, cache write, attention and residual of one layer."""
    h, H, Hkv, d = m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim
    tokens = batch * q_len
    act, kv = BYTES_PER_ELEMENT[dt.act], BYTES_PER_ELEMENT[dt.kv]
    parts = [_norm("RMSNorm", tokens * h, dt)]
    if m.mla:
        parts += _mla_attention(m, batch, q_len, kv_len, dt, causal=causal)
    else:
        parts += [
            _mm("QKV projection", tokens, (H + 2 * Hkv) * d, h, dt),
            elementwise_counts(tokens * (H + Hkv) * d, dt.act, ROPE_FLOPS, 1, 1, "RoPE", SMALL_OPS),
            _kv_write(tokens, 2 * Hkv * d, dt),
            Workload("attention (reads KV cache)",
                     2 * batch * H * pairs(q_len, kv_len, causal) * 2 * d,
                     act * tokens * H * d * 2 + kv * batch * kv_len * Hkv * 2 * d, dt.act, (), KV_CACHE),
            _mm("output projection", tokens, h, H * d, dt),
        ]
    parts.append(_residual(tokens * h, dt))
    return total("attention block", parts)


def _mla_attention(m, batch, q_len, kv_len, dt, *, causal):
    """Multi-head latent attention. Decode (one query per sequence): the K and V up-projections are
    absorbed into the query and output side and attention runs over the cached latent (every head
    shares it, like one K/V head of width r + rope). Prefill: K and V are decompressed for all
    positions and attention is ordinary multi-head."""
    a, h, H = m.mla, m.hidden_size, m.num_heads
    r, nope, rope, dv = a.kv_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim
    tokens = batch * q_len
    act, kv = BYTES_PER_ELEMENT[dt.act], BYTES_PER_ELEMENT[dt.kv]
    n_pairs = pairs(q_len, kv_len, causal)
    if a.q_lora_rank:
        parts = [_mm("Q down-projection", tokens, a.q_lora_rank, h, dt),
                 _norm("RMSNorm", tokens * a.q_lora_rank, dt),
                 _mm("Q projection", tokens, H * (nope + rope), a.q_lora_rank, dt)]
    else:
        parts = [_mm("Q projection", tokens, H * (nope + rope), h, dt)]
    parts += [
        _mm("KV down-projection (latent)", tokens, r + rope, h, dt),
        _norm("RMSNorm", tokens * r, dt),
        elementwise_counts(tokens * (H + 1) * rope, dt.act, ROPE_FLOPS, 1, 1, "RoPE", SMALL_OPS),
        _kv_write(tokens, r + rope, dt),
    ]
    if _absorbed(q_len):
        parts += [
            _mm("K up-projection (absorbed)", tokens, r, nope, dt).repeated(H).renamed("K up-projection (absorbed)"),
            Workload("attention (reads KV cache)", 2 * batch * H * n_pairs * ((r + rope) + r),
                     act * tokens * H * (r + rope) + kv * batch * kv_len * (r + rope) + act * tokens * H * r,
                     dt.act, (), KV_CACHE),
            _mm("V up-projection (absorbed)", tokens, dv, r, dt).repeated(H).renamed("V up-projection (absorbed)"),
        ]
    else:
        parts += [
            _mm("KV up-projection", batch * kv_len, H * (nope + dv), r, dt),
            Workload("attention (reads KV cache)", 2 * batch * H * n_pairs * ((nope + rope) + dv),
                     act * (tokens * H * (nope + rope) + batch * kv_len * H * (nope + rope + dv)
                            + tokens * H * dv), dt.act, (), KV_CACHE),
        ]
    parts.append(_mm("output projection", tokens, h, H * dv, dt))
    return parts


def _absorbed(q_len):
    """MLA runs in absorbed form for decode (one query per sequence), decompressed for prefill."""
    return bool(np.all(np.asarray(q_len) == 1))


def _dense_mlp_block(m, tokens, dt, intermediate=None, prefix="MLP"):
    h, i = m.hidden_size, intermediate or m.intermediate_size
    return total(f"{prefix} block", [
        _mm(f"{prefix} gate+up projection", tokens, 2 * i, h, dt, MLP_WEIGHTS),
        _silu_mul(f"{prefix} SiLU x up", tokens * i, dt),
        _mm(f"{prefix} down projection", tokens, h, i, dt, MLP_WEIGHTS),
    ])


def _moe_mlp_block(m, tokens, dt):
    """Router, the routed experts (weights read once per expert touched), shared experts, combine."""
    e, h = m.moe, m.hidden_size
    i, k = e.expert_intermediate_size, e.experts_per_token
    act, w = BYTES_PER_ELEMENT[dt.act], BYTES_PER_ELEMENT[dt.w]
    touched = expected_experts_touched(e.num_experts, k, tokens)
    routed = tokens * k  # token-expert assignments
    parts = [
        _mm("MoE router", tokens, e.num_experts, h, dt, MLP_WEIGHTS),
        Workload("MoE experts gate+up", 2 * routed * h * 2 * i,
                 act * routed * h + w * touched * h * 2 * i + act * routed * 2 * i, dt.act, (), MLP_WEIGHTS),
        _silu_mul("MoE experts SiLU x up", routed * i, dt),
        Workload("MoE experts down", 2 * routed * i * h,
                 act * routed * i + w * touched * i * h + act * routed * h, dt.act, (), MLP_WEIGHTS),
        Workload("MoE combine", 2 * routed * h, act * (routed * h + tokens * h), dt.act, (), MLP_WEIGHTS),
    ]
    if e.shared_experts:
        parts.append(_dense_mlp_block(m, tokens, dt, e.shared_experts * i, prefix="shared experts"))
    return total("MoE block", parts)


def mlp_block(m, tokens, dt, moe):
    h = m.hidden_size
    body = _moe_mlp_block(m, tokens, dt) if moe else _dense_mlp_block(m, tokens, dt)
    return total("MLP block", [_norm("RMSNorm", tokens * h, dt), body, _residual(tokens * h, dt)])


def forward(m, batch, q_len, kv_len, dt, *, causal, logits_per_sequence, name):
    """A forward pass of ``batch`` sequences, ``q_len`` new positions each, attending to ``kv_len``."""
    h, V = m.hidden_size, m.vocab_size
    tokens = batch * q_len
    embed = Workload("embedding lookup", 0 * tokens,
                     tokens * h * (BYTES_PER_ELEMENT[dt.w] + BYTES_PER_ELEMENT[dt.act]), dt.act, (), LM_HEAD)
    parts = [embed, attention_block(m, batch, q_len, kv_len, dt, causal=causal).repeated(m.num_layers)]
    if m.dense_layers:
        parts.append(mlp_block(m, tokens, dt, moe=False).repeated(m.dense_layers))
    if m.moe_layers:
        parts.append(mlp_block(m, tokens, dt, moe=True).repeated(m.moe_layers))
    parts += [_norm("final RMSNorm", tokens * h, dt), _mm("LM head", batch * logits_per_sequence, V, h, dt, LM_HEAD)]
    return total(name, parts)


__all__ = [
    "attention_block", "ATTENTION_WEIGHTS", "CATEGORIES", "Dtypes", "forward", "KV_CACHE", "LM_HEAD", "mlp_block",
    "MLP_WEIGHTS", "pairs", "RMSNORM_FLOPS", "ROPE_FLOPS", "SILU_MUL_FLOPS", "SMALL_OPS",
]
