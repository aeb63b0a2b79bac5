"""Sympy derivations of the FLOPs, bytes and arithmetic intensity of matmul and attention.

Everything here is built from symbols and counted, not restated: the FLOPs of a
matmul are a sum over its index space, the bytes are the sizes of the tensors
that cross the memory interface, attention is two matmuls per (batch, head).
The tests prove these expressions equal to the numeric ``rl.matmul`` and
``rl.attention`` (symbolically, and at random points), so the notebooks can
derive a formula step by step and then check it against this module.

Conventions: bytes per element are symbols (``b_X``, ``b_Y``, ``b_Z`` for a
matmul, ``b`` for attention) so one expression covers every dtype; put
``b = 1`` to count *elements* instead of bytes. Mind which one a formula means:
a ratio of FLOPs to elements moved is twice the intensity in FLOP/byte in bf16
(2 bytes per element), a slip that is easy to make with attention.
"""

from __future__ import annotations

import sympy as sp

from ..core.checks import positive
from ..core.dtypes import bytes_per_element
from ..specs.hardware import get_accelerator

# ------------------------------------------------------------------ symbols

M, N, K = sp.symbols("M N K", positive=True)
b_X, b_Y, b_Z = sp.symbols("b_X b_Y b_Z", positive=True)  # bytes per element of X, Y and Z
i, j, k = sp.symbols("i j k", integer=True, positive=True)  # summation indices

B, H, H_kv, G = sp.symbols("B H H_kv G", positive=True)  # batch, query heads, kv heads, group H/H_kv
T, S = sp.symbols("T S", positive=True)  # query length, kv length
d_qk, d_v = sp.symbols("d_qk d_v", positive=True)  # head dims of Q/K and of V/O
b = sp.Symbol("b", positive=True)  # bytes per element of Q, K, V, O
R = sp.Symbol("R", positive=True)  # a chip's ridge point, FLOP/byte
n = sp.Symbol("n", positive=True)  # side of a square matmul


# ------------------------------------------------------------------ matmul

def matmul_flops():
    """X[M,K] @ Y[K,N]: Z[i,j] = sum_k X[i,k] Y[k,j], one multiply and one add per (i, j, k).

    Taught in chapter 03 (notebooks/03_matmul_intensity.ipynb); also used in chapter 04."""
    return sp.Sum(2, (k, 1, K), (j, 1, N), (i, 1, M)).doit()


def tensor_bytes(bytes_per_elem, *shape):
    """Bytes of a dense tensor: the product of its shape times the size of one element."""
    return bytes_per_elem * sp.Mul(*shape)


def matmul_bytes(x=b_X, y=b_Y, z=b_Z):
    """Read X [M,K] and Y [K,N] once, write Z [M,N] once (the ideal a tiled kernel reaches).

    Taught in chapter 03 (notebooks/03_matmul_intensity.ipynb)."""
    return tensor_bytes(x, M, K) + tensor_bytes(y, K, N) + tensor_bytes(z, M, N)


def matmul_intensity(x=b_X, y=b_Y, z=b_Z):
    """FLOP per byte of a matmul; ``x, y, z`` are the bytes per element of X, Y and Z."""
    return sp.simplify(matmul_flops() / matmul_bytes(x, y, z))


def dtype_bytes(dtype, b_dtype=None, out_dtype=None):
    """{b_X: .., b_Y: .., b_Z: ..} for a matmul in ``dtype`` (Y and Z default to it), as sympy numbers."""
    sizes = [bytes_per_element(d) for d in (dtype, b_dtype or dtype, out_dtype or dtype)]
    return dict(zip((b_X, b_Y, b_Z), (sp.nsimplify(s) for s in sizes), strict=True))


def matmul_intensity_for(dtype="bf16", b_dtype=None, out_dtype=None):
    """The matmul intensity with the bytes per element of real dtypes put in.

    Taught in chapter 03 (notebooks/03_matmul_intensity.ipynb)."""
    return sp.simplify(matmul_intensity().subs(dtype_bytes(dtype, b_dtype, out_dtype)))


def large_M_limit(expr):
    """The intensity when M grows without bound (a batch of tokens much larger than the weights' sides).

    Taught in chapter 03 (notebooks/03_matmul_intensity.ipynb)."""
    return sp.simplify(sp.limit(expr, M, sp.oo))


def critical_M(dtype="bf16", b_dtype=None, out_dtype=None, ridge=R):
    """The M at which a matmul's intensity equals ``ridge`` (a symbol, or a chip's ridge point).

    Solved from intensity(M) = ridge. It exists only where N and K are large
    enough that the M -> infinity limit lies above the ridge; otherwise the
    matmul never becomes compute-bound and the returned M is negative.

    Taught in chapter 03 (notebooks/03_matmul_intensity.ipynb).
    """
    expr = matmul_intensity_for(dtype, b_dtype, out_dtype)
    solutions = sp.solve(sp.Eq(expr, ridge), M)
    if len(solutions) != 1:  # intensity is a Moebius function of M: one root
        raise ValueError(f"expected one solution for the critical M, got {solutions}")
    return sp.simplify(solutions[0])


def critical_M_value(hw, N_value, K_value, dtype="bf16", b_dtype=None, out_dtype=None):
    """Numeric critical M of an N x K matmul on chip ``hw`` (whose ``dtype`` peak applies).

    Raises ValueError if the matmul never crosses the ridge for any M.

    Taught in chapter 02 (notebooks/02_roofline_model.ipynb); also used in chapters 03, 04.
    """
    hw = get_accelerator(hw)
    N_value, K_value = positive("N", N_value), positive("K", K_value)
    ridge = sp.nsimplify(hw.ridge_point(dtype), rational=True)
    value = critical_M(dtype, b_dtype, out_dtype).subs({R: ridge, N: N_value, K: K_value})
    limit = large_M_limit(matmul_intensity_for(dtype, b_dtype, out_dtype)).subs({N: N_value, K: K_value})
    if limit <= ridge:
        raise ValueError(f"an N={N_value:g}, K={K_value:g} matmul in {dtype} never reaches the {hw.name} ridge "
                         f"({float(ridge):.4g} FLOP/B): its intensity tends to {float(limit):.4g} FLOP/B as M grows")
    return float(value)


# ------------------------------------------------------------------ attention

def causal_pairs():
    """(query, key) pairs a causal mask keeps: the T queries are the last T of S positions,
    so query i (1..T) sees the first S - T + i keys.

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""
    return sp.expand(sp.Sum(S - T + i, (i, 1, T)).doit())


def attention_flops(causal=False):
    """Score Q K^T ([T,d_qk] @ [d_qk,S]) and value P V ([T,S] @ [S,d_v]) for each batch and query head.

    Built from the matmul count. A causal mask keeps only ``causal_pairs()`` of the T*S scores,
    and each kept score costs the same in both matmuls.

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb).
    """
    per_head = (matmul_flops().subs({M: T, N: S, K: d_qk}, simultaneous=True)
                + matmul_flops().subs({M: T, N: d_v, K: S}, simultaneous=True))
    flops = B * H * per_head
    if causal:
        flops = flops * causal_pairs() / (T * S)
    return sp.factor(flops)


def attention_bytes(bytes_per_elem=b):
    """Read Q [B,T,H,d_qk], K [B,S,H_kv,d_qk], V [B,S,H_kv,d_v]; write O [B,T,H,d_v].
    The T x S scores stay on chip (a fused kernel).

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""
    return (tensor_bytes(bytes_per_elem, B, T, H, d_qk) + tensor_bytes(bytes_per_elem, B, S, H_kv, d_qk)
            + tensor_bytes(bytes_per_elem, B, S, H_kv, d_v) + tensor_bytes(bytes_per_elem, B, T, H, d_v))


def attention_intensity(bytes_per_elem=b, causal=False):
    """FLOP per byte of attention (``bytes_per_elem=1``: FLOP per element moved, a ratio
    some texts quote in place of FLOP per byte).

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""
    return sp.factor(sp.simplify(attention_flops(causal) / attention_bytes(bytes_per_elem)))


def grouped(expr):
    """Write ``expr`` in terms of the group size G = H / H_kv (query heads per kv head).

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""
    return sp.simplify(expr.subs(H, G * H_kv))


def prefill_intensity(bytes_per_elem=b, causal=False):
    """Prefill: the queries are the whole prompt, T = S.

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""
    return sp.simplify(grouped(attention_intensity(bytes_per_elem, causal)).subs(S, T))


def decode_intensity(bytes_per_elem=b):
    """Decode: a few new queries against a long cache, T/S -> 0 (S -> infinity at fixed T).

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""
    return sp.simplify(sp.limit(grouped(attention_intensity(bytes_per_elem)), S, sp.oo))


def critical_prefill_T(bytes_per_elem=b, ridge=R):
    """The prompt length at which (non-causal) prefill attention reaches ``ridge``.

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""
    solutions = sp.solve(sp.Eq(prefill_intensity(bytes_per_elem), ridge), T)
    if len(solutions) != 1:
        raise ValueError(f"expected one solution for the critical T, got {solutions}")
    return sp.simplify(solutions[0])


# ------------------------------------------------------------------ numbers

def evaluate(expr, **values):
    """Put numbers in ``expr`` by symbol name (``evaluate(e, M=4096, N=4096, K=4096)``); returns a float.

    Every free symbol needs a value; a missing one raises ValueError naming it.
    """
    by_name = {s.name: s for s in expr.free_symbols}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise ValueError(f"{', '.join(unknown)} not in the expression; its symbols are: "
                         f"{', '.join(sorted(by_name))}")
    missing = sorted(set(by_name) - set(values))
    if missing:
        raise ValueError(f"no value given for {', '.join(missing)}")
    subs = {by_name[name]: sp.nsimplify(positive(name, value), rational=True) for name, value in values.items()}
    return float(expr.subs(subs))


__all__ = [
    "attention_bytes", "attention_flops", "attention_intensity", "B", "b", "b_X", "b_Y", "b_Z", "causal_pairs",
    "critical_M", "critical_M_value", "critical_prefill_T", "d_qk", "d_v", "decode_intensity", "dtype_bytes",
    "evaluate", "G", "grouped", "H", "H_kv", "i", "j", "K", "k", "large_M_limit", "M", "matmul_bytes",
    "matmul_flops", "matmul_intensity", "matmul_intensity_for", "N", "n", "prefill_intensity", "R", "S", "T",
    "tensor_bytes",
]
