"""Fusion as traffic: the same math as one kernel or several, and the intermediates that cross memory.

    rl.llm.gated_mlp_chain(tokens, hidden, intermediate, fused=True)
    rl.llm.attention_chain(batch, heads, kv_heads, q_len, kv_len, head_dim, fused=False)

Each kernel of a chain is a Workload part; unfused chains write their intermediates to memory and
read them back, fused ones keep them on chip (chapter 06).
"""

from __future__ import annotations

from ..core.checks import positive
from ..core.dtypes import bytes_per_element, canonical_dtype
from ..roofline.workloads import Workload, attention_counts, elementwise, matmul
from .blocks import SILU_MUL_FLOPS, pairs


def gated_mlp_chain(tokens, hidden, intermediate, dtype="bf16", *, fused=False):
    """The gated MLP x -> down(silu(gate(x)) * up(x)) as kernels.

    Unfused (5 kernels): gate matmul writes G, up matmul writes U, SiLU reads G writes A,
    multiply reads A and U writes P, down matmul reads P: [tokens, intermediate] arrays cross
    memory 8 times, and x is read twice. Fused (2 kernels): one gate+up matmul whose epilogue
    applies SiLU and the multiply writes only P, which the down matmul reads (2 crossings).

    Taught in chapter 06 (notebooks/06_optimizations.ipynb)."""
    n, h, i = positive("tokens", tokens), positive("hidden", hidden), positive("intermediate", intermediate)
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
    cross memory 4 times.

    Taught in chapter 06 (notebooks/06_optimizations.ipynb)."""
    B, H, Hkv = positive("batch", batch), positive("heads", heads), positive("kv_heads", kv_heads)
    T, S, d = positive("q_len", q_len), positive("kv_len", kv_len), positive("head_dim", head_dim)
    size = bytes_per_element(dtype)
    n_pairs = pairs(T, S, causal)
    if fused:
        return Workload.trusted("fused attention (FlashAttention)",
                                *attention_counts(B, H, Hkv, n_pairs, T, S, d, d, size, size), canonical_dtype(dtype))
    scores = size * B * H * T * S  # stored in full even with a causal mask
    return sum([
        Workload("QK^T matmul", 2 * B * H * n_pairs * d, size * B * (T * H * d + S * Hkv * d) + scores,
                 canonical_dtype(dtype)),
        Workload("softmax", 5 * B * H * n_pairs, 2 * scores, canonical_dtype(dtype)),
        Workload("PV matmul", 2 * B * H * n_pairs * d, scores + size * B * (S * Hkv * d + T * H * d),
                 canonical_dtype(dtype)),
    ])


__all__ = ["attention_chain", "gated_mlp_chain"]
