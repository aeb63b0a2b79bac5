"""A GEMM's m, n and k from the shapes the profiler recorded for the operator that launched it
(``record_shapes=True``), its dtype from the recorded input types, and its FLOPs and minimum bytes as the
course counts them (``rl.matmul``: 2mnk FLOPs; each operand read once, the product written once). Fused
attention's batch, heads, lengths and mask the same way (``attention_shape``, counted by ``rl.attention``).

    aten::mm        [m, k] @ [k, n]
    aten::addmm     bias, [m, k] @ [k, n]
    aten::bmm       [b, m, k] @ [b, k, n]          (b products, each with its own operands)
    aten::baddbmm   bias, [b, m, k] @ [b, k, n]
    aten::linear    x [..., k], weight [n, k]      (m: every leading dimension of x)
    aten::_scaled_mm  [m, k] @ [k, n]              (fp8 with scales)
"""

from __future__ import annotations

import math

from ..core.dtypes import canonical_dtype

# the profiler's 'Input type' names -> the course's dtypes
TYPE_NAMES = {"float": "fp32", "double": "fp64", "c10::half": "fp16", "c10::bfloat16": "bf16",
              "c10::float8_e4m3fn": "fp8", "c10::float8_e5m2": "fp8", "c10::float8_e4m3fnuz": "fp8",
              "c10::float8_e5m2fnuz": "fp8", "half": "fp16", "bfloat16": "bf16"}


def dtype_of(type_name):
    """The course's dtype for a recorded input type ('c10::BFloat16' -> 'bf16'), or None if not a float format."""
    if not isinstance(type_name, str):
        return None
    known = TYPE_NAMES.get(type_name.strip().lower())
    if known:
        return known
    try:
        return canonical_dtype(type_name.replace("c10::", ""))
    except ValueError:
        return None


def _pair(dims, i, j):
    a, b = dims[i], dims[j]
    ok = all(isinstance(x, tuple) and x and all(isinstance(v, int) and v > 0 for v in x) for x in (a, b))
    return (a, b) if ok else (None, None)


def mnk(op_name, dims):
    """(batch, m, n, k, input index of the first operand) of a matrix-multiply operator's recorded dims, or None
    where the operator is not one of the forms above or its dims do not fit it."""
    if not dims:
        return None
    name = op_name.split("::")[-1]
    if name in ("mm", "_scaled_mm") and len(dims) >= 2:
        a, b = _pair(dims, 0, 1)
        if a and len(a) == 2 and len(b) == 2 and a[1] == b[0]:
            return 1, a[0], b[1], a[1], 0
    elif name == "addmm" and len(dims) >= 3:
        a, b = _pair(dims, 1, 2)
        if a and len(a) == 2 and len(b) == 2 and a[1] == b[0]:
            return 1, a[0], b[1], a[1], 1
    elif name in ("bmm", "baddbmm"):
        first = 0 if name == "bmm" else 1
        if len(dims) > first + 1:
            a, b = _pair(dims, first, first + 1)
            if a and len(a) == 3 and len(b) == 3 and a[0] == b[0] and a[2] == b[1]:
                return a[0], a[1], b[2], a[2], first
    elif name == "linear" and len(dims) >= 2:
        a, b = _pair(dims, 0, 1)
        if a and len(b) == 2 and a[-1] == b[1]:
            return 1, math.prod(a[:-1]) or 1, b[0], a[-1], 0
    return None


# attention operators: (layout of Q, K, V's dims, index of is_causal among the concrete inputs)
ATTENTION_OPS = {"_flash_attention_forward": ("BSHD", 8), "_scaled_dot_product_flash_attention": ("BHSD", 4),
                 "_scaled_dot_product_efficient_attention": ("BHSD", 6),
                 "_scaled_dot_product_cudnn_attention": ("BHSD", 6)}


def attention_shape(op_name, dims, concrete):
    """(batch, heads, kv_heads, q_len, kv_len, head_dim, v_head_dim, causal) of a fused attention operator's
    recorded Q, K and V (``ATTENTION_OPS``: FlashAttention's [B, S, H, D], SDPA's [B, H, S, D]), or None."""
    form = ATTENTION_OPS.get(op_name.split("::")[-1])
    if form is None or not dims or len(dims) < 3:
        return None
    q, k, v = dims[:3]
    if not all(isinstance(x, tuple) and len(x) == 4 and all(isinstance(i, int) and i > 0 for i in x)
               for x in (q, k, v)):
        return None
    layout, causal_at = form
    if layout == "BSHD":
        (b, t, h, d), (_, s, hk, _), dv = q, k, v[3]
    else:
        (b, h, t, d), (_, hk, s, _), dv = q, k, v[3]
    if k[0] != b or v[0] != b or h % hk or k[3] != d:
        return None
    causal = bool(concrete) and len(concrete) > causal_at and concrete[causal_at] == "True"
    return b, h, hk, t, s, d, dv, causal


__all__ = ["ATTENTION_OPS", "TYPE_NAMES", "attention_shape", "dtype_of", "mnk"]
