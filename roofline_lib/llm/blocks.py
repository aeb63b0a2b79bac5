"""One transformer layer as kernels: the workloads ``rl.prefill`` and ``rl.decode_step`` add up.

A step is a sum of per-layer operations (RMSNorm, QKV projection, RoPE, KV cache write, attention,
output projection, residual add, MLP projections, SiLU x up, LM head ...), each counted as its own
kernel that reads its inputs and writes its outputs once. Each part carries its ``kind``
(``llm.parts``): its name, the category of its bytes, how it shards, whether it fuses.

The sizes reaching this module were checked once by the public function that called it
(``llm.prefill``, ``llm.decode_step``), and the model's shapes when its file was read, so the
operations here are built without checking again: that is what keeps one decode step fast.
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import BYTES_PER_ELEMENT
from ..roofline.workloads import Workload, attention_counts, causal_pairs, elementwise_counts, matmul_counts, total
from ..specs.models import expected_experts_touched
from . import parts as k

# FLOPs per element of the elementwise ops (rough counts; these ops are memory-bound by a wide margin)
RMSNORM_FLOPS = 4  # square, accumulate, scale by 1/rms, multiply by the weight
ROPE_FLOPS = 3  # x*cos + rotate(x)*sin
SILU_MUL_FLOPS = 5  # x * sigmoid(x) (exp, add, divide, multiply), then * up
GELU_FLOPS = 8  # the tanh form: cube, multiply-add, tanh, add, two multiplies (GPT-2/3's MLP)


def _part(kind, flops, nbytes, dt):
    return Workload.trusted(kind.name, flops, nbytes, dt.compute, (), kind.category, kind)


def _mm(kind, tokens, n_out, n_in, dt):
    """Activations [tokens, n_in] @ weights [n_in, n_out]."""
    return matmul_counts(tokens, n_out, n_in, dt.compute, dt.weight, dt.compute, dt.compute, kind.name,
                         kind.category, kind)


def _elementwise(kind, n, flops_per_element, inputs, dt):
    return elementwise_counts(n, dt.compute, flops_per_element, inputs, 1, kind.name, kind.category, kind)


def _kv_write(tokens, elements_per_token, dt):
    """Store the new tokens' K and V (read in the activation dtype, written in the cache dtype)."""
    return _part(k.KV_WRITE, 0 * tokens,
                 tokens * elements_per_token * (BYTES_PER_ELEMENT[dt.compute] + BYTES_PER_ELEMENT[dt.kv]), dt)


def pairs(q_len, kv_len, causal, window=None):
    """Query-key pairs: the new q_len queries are the last of kv_len positions; with a sliding ``window`` each
    (causal) query sees at most ``window`` keys, itself included."""
    if window is None:
        return causal_pairs(q_len, kv_len) if causal else q_len * kv_len
    def seen(n):  # sum over positions 1 .. n of min(position, window)
        n = np.asarray(n, float)
        return np.where(n <= window, n * (n + 1) / 2, window * (window + 1) / 2 + (n - window) * window)
    return seen(kv_len) - seen(np.asarray(kv_len) - q_len)


def keys_read(q_len, kv_len, window=None):
    """Cached positions the new queries read: all of them, or with a window the last q_len + window - 1."""
    return kv_len if window is None else np.minimum(kv_len, q_len + window - 1)


# ---------------------------------------------------------------- one layer's blocks

def attention_block(m, batch, q_len, kv_len, dt, *, causal, window=None):
    """Norm, projections, RoPE, cache write, attention and residual of one layer (``window``: a sliding-window
    layer's, whose queries see at most that many positions)."""
    h, H, Hkv, d = m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim
    tokens = batch * q_len
    act, kv = BYTES_PER_ELEMENT[dt.compute], BYTES_PER_ELEMENT[dt.kv]
    parts = [_elementwise(k.RMSNORM, tokens * h, RMSNORM_FLOPS, 1, dt)]
    if m.mla:
        parts += _mla_attention(m, batch, q_len, kv_len, dt, causal=causal)
    else:
        parts += [
            _mm(k.QKV_PROJECTION, tokens, (H + 2 * Hkv) * d, h, dt),
            _elementwise(k.ROPE, tokens * (H + Hkv) * d, ROPE_FLOPS, 1, dt),
            _kv_write(tokens, 2 * Hkv * d, dt),
            _part(k.ATTENTION, *attention_counts(batch, H, Hkv, pairs(q_len, kv_len, causal, window), q_len,
                                                 keys_read(q_len, kv_len, window), d, d, act, kv), dt),
            _mm(k.OUTPUT_PROJECTION, tokens, h, H * d, dt),
        ]
    parts.append(_elementwise(k.RESIDUAL, tokens * h, 1, 2, dt))
    return total("attention block", parts)


def _mla_attention(m, batch, q_len, kv_len, dt, *, causal):
    """Multi-head latent attention. Decode (one query per sequence): the K and V up-projections are
    absorbed into the query and output side and attention runs over the cached latent (every head
    shares it, like one K/V head of width r + rope, whose values are the latent's first r channels).
    Prefill: K and V are decompressed for all positions and attention is ordinary multi-head."""
    a, h, H = m.mla, m.hidden_size, m.num_heads
    r, nope, rope, dv = a.kv_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim
    tokens = batch * q_len
    act, kv = BYTES_PER_ELEMENT[dt.compute], BYTES_PER_ELEMENT[dt.kv]
    n_pairs = pairs(q_len, kv_len, causal)
    if a.q_lora_rank:
        parts = [_mm(k.Q_DOWN, tokens, a.q_lora_rank, h, dt),
                 _elementwise(k.RMSNORM, tokens * a.q_lora_rank, RMSNORM_FLOPS, 1, dt),
                 _mm(k.Q_PROJECTION, tokens, H * (nope + rope), a.q_lora_rank, dt)]
    else:
        parts = [_mm(k.Q_PROJECTION, tokens, H * (nope + rope), h, dt)]
    parts += [
        _mm(k.KV_DOWN, tokens, r + rope, h, dt),
        _elementwise(k.RMSNORM, tokens * r, RMSNORM_FLOPS, 1, dt),
        _elementwise(k.ROPE, tokens * (H + 1) * rope, ROPE_FLOPS, 1, dt),
        _kv_write(tokens, r + rope, dt),
    ]
    if _absorbed(q_len):
        # scores over r + rope channels, values over the latent's r: the cache is read once, as K (its
        # values are the same bytes), so only d_qk = r + rope counts on the KV side
        flops = 2 * batch * H * n_pairs * ((r + rope) + r)
        nbytes = act * tokens * H * (r + rope) + kv * batch * kv_len * (r + rope) + act * tokens * H * r
        parts += [
            _mm(k.K_UP_ABSORBED, tokens, r, nope, dt).repeated(H).renamed(k.K_UP_ABSORBED.name),
            _part(k.ATTENTION, flops, nbytes, dt),
            _mm(k.V_UP_ABSORBED, tokens, dv, r, dt).repeated(H).renamed(k.V_UP_ABSORBED.name),
        ]
    else:
        parts += [
            _mm(k.KV_UP, batch * kv_len, H * (nope + dv), r, dt),
            # decompressed K and V are activations: every head has its own, in the compute dtype
            _part(k.ATTENTION, *attention_counts(batch, H, H, n_pairs, q_len, kv_len, nope + rope, dv, act, act),
                  dt),
        ]
    parts.append(_mm(k.OUTPUT_PROJECTION, tokens, h, H * dv, dt))
    return parts


def _absorbed(q_len):
    """MLA runs in absorbed form for decode (one query per sequence), decompressed for prefill."""
    return bool(np.all(np.asarray(q_len) == 1))


_DENSE = (k.MLP_GATE_UP, k.MLP_SILU_MUL, k.MLP_DOWN)
_SHARED = (k.SHARED_GATE_UP, k.SHARED_SILU_MUL, k.SHARED_DOWN)


def _dense_mlp_block(m, tokens, dt, intermediate=None, kinds=_DENSE, name="MLP block"):
    h, i = m.hidden_size, intermediate or m.intermediate_size
    gate_up, silu_mul, down = kinds
    if m.mlp == "plain":  # GPT-style: up, GELU, down (no gate)
        return total(name, [
            _mm(gate_up, tokens, i, h, dt),
            _elementwise(silu_mul, tokens * i, GELU_FLOPS, 1, dt),
            _mm(down, tokens, h, i, dt),
        ])
    return total(name, [
        _mm(gate_up, tokens, 2 * i, h, dt),
        _elementwise(silu_mul, tokens * i, SILU_MUL_FLOPS, 2, dt),
        _mm(down, tokens, h, i, dt),
    ])


def _moe_mlp_block(m, tokens, dt):
    """Router, the routed experts (weights read once per expert touched), shared experts, combine."""
    e, h = m.moe, m.hidden_size
    i, n_active = e.expert_intermediate_size, e.experts_per_token
    act, w = BYTES_PER_ELEMENT[dt.compute], BYTES_PER_ELEMENT[dt.weight]
    touched = expected_experts_touched(e.num_experts, n_active, tokens)
    routed = tokens * n_active  # token-expert assignments
    parts = [
        _mm(k.MOE_ROUTER, tokens, e.num_experts, h, dt),
        _part(k.MOE_GATE_UP, 2 * routed * h * 2 * i, act * routed * h + w * touched * h * 2 * i + act * routed * 2 * i,
              dt),
        _elementwise(k.MOE_SILU_MUL, routed * i, SILU_MUL_FLOPS, 2, dt),
        _part(k.MOE_DOWN, 2 * routed * i * h, act * routed * i + w * touched * i * h + act * routed * h, dt),
        _part(k.MOE_COMBINE, 2 * routed * h, act * (routed * h + tokens * h), dt),
    ]
    if e.shared_experts:
        parts.append(_dense_mlp_block(m, tokens, dt, e.shared_experts * i, _SHARED, "shared experts block"))
    return total("MoE block", parts)


def mlp_block(m, tokens, dt, moe):
    """One layer's MLP half as kernels: RMSNorm, the dense or mixture-of-experts MLP over ``tokens`` tokens, the
    residual add."""
    h = m.hidden_size
    body = _moe_mlp_block(m, tokens, dt) if moe else _dense_mlp_block(m, tokens, dt)
    return total("MLP block", [_elementwise(k.RMSNORM, tokens * h, RMSNORM_FLOPS, 1, dt), body,
                               _elementwise(k.RESIDUAL, tokens * h, 1, 2, dt)])


def forward(m, batch, q_len, kv_len, dt, *, causal, logits_per_sequence, name):
    """A forward pass of ``batch`` sequences, ``q_len`` new positions each, attending to ``kv_len``."""
    h, V = m.hidden_size, m.vocab_size
    tokens = batch * q_len
    embed = _part(k.EMBEDDING, 0 * tokens, tokens * h * (BYTES_PER_ELEMENT[dt.weight] + BYTES_PER_ELEMENT[dt.compute]),
                  dt)
    full = m.num_layers - m.sliding_layers
    parts = [embed, attention_block(m, batch, q_len, kv_len, dt, causal=causal).repeated(full)]
    if m.sliding_layers:  # gpt-oss: windowed layers between the full ones
        parts.append(attention_block(m, batch, q_len, kv_len, dt, causal=causal, window=m.sliding_window)
                     .repeated(m.sliding_layers))
    if m.dense_layers:
        parts.append(mlp_block(m, tokens, dt, moe=False).repeated(m.dense_layers))
    if m.moe_layers:
        parts.append(mlp_block(m, tokens, dt, moe=True).repeated(m.moe_layers))
    parts += [_elementwise(k.FINAL_NORM, tokens * h, RMSNORM_FLOPS, 1, dt),
              _mm(k.LM_HEAD_MATMUL, batch * logits_per_sequence, V, h, dt)]
    return total(name, parts)


__all__ = ["GELU_FLOPS", "RMSNORM_FLOPS", "ROPE_FLOPS", "SILU_MUL_FLOPS", "attention_block", "forward", "keys_read",
           "mlp_block", "pairs"]
