"""Workloads: how many FLOPs an operation does and how many bytes it moves.

Every constructor accepts numpy arrays for its sizes, so a slider or a sweep
evaluates thousands of shapes at once. Bytes count what must cross the memory
interface at least once (each input read once, each output written once): the
minimum traffic, which a perfectly tiled kernel reaches and a roofline's lower
bound needs. Real kernels can move more: a tiled matmul re-reads its inputs once
per tile row or column, FlashAttention re-reads K and V once per query block,
unless the on-chip cache serves the repeats.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import non_negative, positive
from ..core.dtypes import BYTES_PER_ELEMENT, bytes_per_element, canonical_dtype
from ..core.units import eng


@dataclasses.dataclass(frozen=True)
class Workload:
    """FLOPs and bytes of one operation, or of several added together (``parts``).

    ``category`` says where an operation's bytes come from in a model (``rl.llm.CATEGORIES``: attention
    weights, KV cache, ...) and ``kind`` what the operation is (an ``rl.llm.parts.PartKind``: how it shards
    across chips, whether it fuses); the LLM steps set both on every part, so nothing depends on names.

    ``Workload(name, flops, bytes)`` checks what it is given: FLOPs finite and >= 0, bytes finite and > 0
    (numbers or numpy arrays), a known dtype. The library's own constructors, whose sizes were checked
    where they came in, build parts through ``Workload.trusted``.

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapters 02, 07.
    """

    name: str
    flops: object  # float or numpy array
    bytes: object  # float or numpy array
    dtype: str = "bf16"  # the compute dtype: whose peak FLOP/s applies
    parts: tuple = ()  # the leaf workloads a sum is made of
    category: str = ""
    kind: object = None  # a PartKind, for the parts of an LLM step

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ValueError(f"a Workload's name must be a string, got {self.name!r}")
        set_ = object.__setattr__
        set_(self, "flops", non_negative(f"flops of {self.name!r}", self.flops))
        set_(self, "bytes", positive(f"bytes of {self.name!r}", self.bytes))
        if self.dtype != "mixed":
            set_(self, "dtype", canonical_dtype(self.dtype))
        if not isinstance(self.parts, tuple) or not all(isinstance(p, Workload) for p in self.parts):
            raise ValueError(f"a Workload's parts must be a tuple of Workloads, got {self.parts!r}")

    @classmethod
    def trusted(cls, name, flops, nbytes, dtype, parts=(), category="", kind=None):
        """A Workload from figures the caller has already checked (the fast path of the library's steps)."""
        w = object.__new__(cls)
        set_ = object.__setattr__
        set_(w, "name", name)
        set_(w, "flops", flops)
        set_(w, "bytes", nbytes)
        set_(w, "dtype", dtype)
        set_(w, "parts", parts)
        set_(w, "category", category)
        set_(w, "kind", kind)
        return w

    @property
    def intensity(self):
        """Arithmetic intensity in FLOP per byte."""
        return self.flops / self.bytes

    def leaves(self):
        """The single operations this workload is made of (itself, if it is one)."""
        return self.parts or (self,)

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0:  # lets sum() start from 0
            return self
        if not isinstance(other, Workload):
            return NotImplemented
        return total(f"{self.name} + {other.name}", self.leaves() + other.leaves())

    __radd__ = __add__

    def __mul__(self, count):
        """``w * n``: the same operation done n times (n layers, n heads, ...); a sum's parts keep their
        names (each is still the same operation, now counted n times)."""
        count = positive("repeat count", count)
        return self.repeated(count)

    __rmul__ = __mul__

    def repeated(self, count):
        """``self * count`` for a count already checked (> 0, a number or an array)."""
        name = self.name if isinstance(count, np.ndarray) or count == 1 else f"{count:g} x {self.name}"
        if not self.parts:
            return Workload.trusted(name, self.flops * count, self.bytes * count, self.dtype, (), self.category,
                                    self.kind)
        return total(name, [Workload.trusted(p.name, p.flops * count, p.bytes * count, p.dtype, (), p.category,
                                             p.kind) for p in self.parts])

    def renamed(self, name):
        """The same workload (FLOPs, bytes, parts) under another name."""
        return Workload.trusted(name, self.flops, self.bytes, self.dtype, self.parts, self.category, self.kind)

    def __repr__(self):
        if np.ndim(self.flops) == 0 and np.ndim(self.bytes) == 0:
            return (f"Workload({self.name!r}, flops={eng(self.flops, 'FLOP')}, bytes={eng(self.bytes, 'B')}, "
                    f"intensity={self.intensity:.4g} FLOP/B, dtype={self.dtype!r})")
        return f"Workload({self.name!r}, shape={np.broadcast(self.flops, self.bytes).shape}, dtype={self.dtype!r})"


def total(name, parts):
    """One Workload made of ``parts`` (Workloads; a sum is opened into its leaves). Its FLOPs and bytes
    are the parts' added in order, exactly as ``parts[0] + parts[1] + ...`` adds them."""
    flops, nbytes = parts[0].flops, parts[0].bytes
    for p in parts[1:]:
        flops = flops + p.flops
        nbytes = nbytes + p.bytes
    leaves = tuple(leaf for p in parts for leaf in p.leaves())
    dtypes = {leaf.dtype for leaf in leaves}
    return Workload.trusted(name, flops, nbytes, parts[0].dtype if len(dtypes) == 1 else "mixed", leaves)


def causal_pairs(q_len, kv_len):
    """Query-key pairs a causal mask keeps when the q_len queries are the last q_len of kv_len positions:
    query i sees kv_len - q_len + i + 1 keys, so q_len * kv_len - q_len (q_len - 1) / 2 in all."""
    return q_len * kv_len - q_len * (q_len - 1) / 2


# ---------------------------------------------------------------- constructors for checked sizes
# The public constructors below check their input, then call these. Library code that has already
# checked its sizes (``rl.decode_step`` checks batch and context once) calls these directly.

def matmul_counts(M, N, K, a, b, out, compute, name, category="", kind=None):
    """X[M, K] @ Y[K, N] -> Z[M, N] with canonical dtype names and checked sizes."""
    nbytes = BYTES_PER_ELEMENT[a] * M * K + BYTES_PER_ELEMENT[b] * K * N + BYTES_PER_ELEMENT[out] * M * N
    return Workload.trusted(name, 2 * M * N * K, nbytes, compute, (), category, kind)


def elementwise_counts(n, dtype, flops_per_element, inputs, outputs, name, category="", kind=None):
    """An op over n elements with a canonical dtype name and checked sizes."""
    return Workload.trusted(name, flops_per_element * n, BYTES_PER_ELEMENT[dtype] * n * (inputs + outputs), dtype,
                            (), category, kind)


def attention_counts(batch, heads, kv_heads, pairs, q_len, kv_len, d_qk, d_v, q_size, kv_size, out_size=None):
    """(FLOPs, bytes) of fused attention, the one home of the formula: the score (Q K^T) and value (P V)
    matmuls over ``pairs`` query-key pairs per head, 2 B H pairs (d_qk + d_v) FLOPs; Q [B, T, H, d_qk] read,
    K [B, S, H_kv, d_qk] and V [B, S, H_kv, d_v] read, O [B, T, H, d_v] written once (the scores stay on
    chip). ``q_size``/``kv_size``/``out_size``: bytes per element of Q, of K and V, of O (default Q's)."""
    out_size = q_size if out_size is None else out_size
    flops = 2 * batch * heads * pairs * (d_qk + d_v)
    nbytes = batch * (q_size * q_len * heads * d_qk + kv_size * kv_len * kv_heads * (d_qk + d_v)
                      + out_size * q_len * heads * d_v)
    return flops, nbytes


def matmul(M, N, K, dtype="bf16", *, b_dtype=None, out_dtype=None, compute_dtype=None, name="matmul"):
    """X[M, K] @ Y[K, N] -> Z[M, N]: 2MNK FLOPs; reads X and Y once, writes Z once (the minimum traffic).

    ``dtype`` is X's dtype; Y (often the weights) and Z default to it. The
    compute dtype (whose peak applies) defaults to ``dtype``: with int4
    weights and bf16 activations pass ``dtype="bf16", b_dtype="int4"``.

    >>> import roofline_lib as rl
    >>> w = rl.matmul(4096, 4096, 4096)                 # bf16: 2 bytes per element
    >>> w.flops == 2 * 4096**3, w.bytes == 3 * 4096**2 * 2, round(w.intensity)
    (True, True, 1365)

    Taught in chapter 03 (notebooks/03_matmul_intensity.ipynb); also used in chapters 04, 07, 13, 15.
    """
    M, N, K = positive("M", M), positive("N", N), positive("K", K)
    a = canonical_dtype(dtype)
    b = canonical_dtype(b_dtype or a)
    out = canonical_dtype(out_dtype or a)
    compute = canonical_dtype(compute_dtype or a)
    return matmul_counts(M, N, K, a, b, out, compute, name)


def attention(batch, heads, kv_heads, q_len, kv_len, head_dim, v_head_dim=None,
              dtype="bf16", *, causal=False, name="attention"):
    """Score (Q K^T) and value (P V) matmuls of multi-/grouped-query attention.

    FLOPs: 2 * B * H * (pairs) * (d_qk + d_v), where pairs = T * S without a
    mask. With ``causal=True`` the T queries are the last T positions of the
    S keys, so query i sees S - T + i + 1 keys: pairs = T*S - T(T-1)/2 (half
    the square, plus the diagonal, for T = S). Softmax and scaling FLOPs are
    not counted; their exponentials (one per score) run on the special-function
    units, a separate ceiling: ``Accelerator.exp_time``.
    Bytes: read Q [B,T,H,d_qk], K [B,S,H_kv,d_qk], V [B,S,H_kv,d_v]; write
    O [B,T,H,d_v]; the T x S score matrix never leaves the chip (fused kernel).
    This is the minimum traffic: FlashAttention reads K and V once per block of
    queries, more than once when T is longer than one block.

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb); also used in chapter 07.
    """
    B = positive("batch", batch)
    H = positive("heads", heads)
    H_kv = positive("kv_heads", kv_heads)
    T, S = positive("q_len", q_len), positive("kv_len", kv_len)
    d_qk = positive("head_dim", head_dim)
    d_v = d_qk if v_head_dim is None else positive("v_head_dim", v_head_dim)
    if np.any(np.asarray(H) % np.asarray(H_kv) != 0):
        raise ValueError(f"heads ({heads}) must be a multiple of kv_heads ({kv_heads}): "
                         "each kv head serves a whole group of query heads")
    pairs = T * S
    if causal:
        if np.any(np.asarray(T) > np.asarray(S)):
            raise ValueError(f"causal attention needs q_len <= kv_len (the queries are the last "
                             f"q_len of the kv_len positions), got q_len={q_len}, kv_len={kv_len}")
        pairs = causal_pairs(T, S)
    size = bytes_per_element(dtype)
    flops, nbytes = attention_counts(B, H, H_kv, pairs, T, S, d_qk, d_v, size, size)
    return Workload.trusted(name, flops, nbytes, canonical_dtype(dtype))


def elementwise(n, dtype="bf16", *, flops_per_element=1, inputs=1, outputs=1, name="elementwise"):
    """An op that reads ``inputs`` arrays of n elements and writes ``outputs`` arrays.

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb)."""
    n = positive("n", n)
    flops_per_element = positive("flops_per_element", flops_per_element)
    inputs, outputs = positive("inputs", inputs, integer=True), positive("outputs", outputs, integer=True)
    return elementwise_counts(n, canonical_dtype(dtype), flops_per_element, inputs, outputs, name)


def vector_add(n, dtype="fp32"):
    """z = x + y over n elements: n FLOPs, reads 2n and writes n elements.

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapters 07, 08."""
    return elementwise(n, dtype, flops_per_element=1, inputs=2, outputs=1, name="vector add")


def dot(n, dtype="fp32"):
    """s = sum(x * y) over n elements: 2n FLOPs (multiply + add), reads 2n elements, writes 1.

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapter 07."""
    n = positive("n", n)
    size = bytes_per_element(dtype)
    return Workload.trusted("dot", 2 * n, size * (2 * n + 1), canonical_dtype(dtype))


__all__ = [
    "attention", "causal_pairs", "dot", "elementwise", "elementwise_counts", "matmul", "matmul_counts", "total",
    "vector_add", "Workload",
]
