"""The decode steps of a generation, summed in closed form.

t_math and t_mem of a decode step are both affine in the context (attention FLOPs and KV bytes grow by a
fixed amount per position; everything else does not change), so the sum of their maximum over consecutive
contexts is two arithmetic series split where the two lines cross (``sum_max_affine``). ``decode_time`` sums
a request's decode steps that way; ``weight_bytes_read`` is what a step reads whatever its token count.

Which context each step is charged is ``rl.measurements``' convention (chapter 10), kept here so that chapters 10
and 11 bound the same work: after the prefill of P prompt tokens, decode step i (i = 1 .. O) attends to P + i
positions, the prompt and output tokens 1 .. i. That is O steps where a tight count is O - 1 (the prefill already
yields the first token; step O makes a token O + 1 nobody reads), 1/O of the decode time, and the mean step sits
at P + (O + 1) / 2, half a position past the tight mean P + O / 2.
"""

from __future__ import annotations

import numpy as np

from ..core.checks import dtypes, positive
from ..llm.setup import setup
from ..llm.steps import decode_step_unchecked
from ..roofline.bounds import estimate
from ..specs.models import get_model

FIRST_DECODE_OFFSET = 1  # decode step 1 attends to the prompt and output token 1: P + 1 positions


def sum_max_affine(a, b, c, d, n):
    """sum over i = 0 .. n-1 of max(a + b i, c + d i), in closed form. Vectorised (arrays broadcast).

    The two lines cross at most once, so one of them wins on a prefix of the indices and the other
    on the rest: two arithmetic series."""
    a, b, c, d, n = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (a, b, c, d, n)))
    gap, slope = a - c, b - d  # the first line minus the second, at i = 0 and per step
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(slope != 0, -gap / np.where(slope != 0, slope, 1), 0.0)  # where the lines cross
    # indices [lo, hi) where the first line is the larger
    lo = np.where(slope > 0, np.clip(np.ceil(root), 0, n), 0.0)
    hi = np.where(slope < 0, np.clip(np.floor(root) + 1, 0, n), n)
    flat = slope == 0
    lo = np.where(flat, 0.0, lo)
    hi = np.where(flat, np.where(gap >= 0, n, 0.0), hi)

    def series(a0, step, start, stop):  # sum of a0 + step i for i in [start, stop)
        return (stop - start) * a0 + step * (stop * (stop - 1) - start * (start - 1)) / 2

    total = series(a, b, lo, hi) + series(c, d, 0, lo) + series(c, d, hi, n)
    return total.item() if total.ndim == 0 else total


def decode_lines(model, hw, batch, first_context, *, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """(t_math, its growth per position, t_mem, its growth per position) of the decode step of ``batch``
    sequences at ``first_context``: both terms are affine in the context. Vectorised.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
    return decode_lines_unchecked(s, positive("batch", batch, integer=True),
                                  positive("context", first_context, integer=True))


def decode_lines_unchecked(s, batch, first_context):
    """``decode_lines`` for a Setup and checked sizes."""
    if s.model.sliding_layers:  # the closed-form sums need terms affine in the context
        raise ValueError(f"{s.model.name}'s sliding-window layers stop growing at {s.model.sliding_window} positions, "
                         f"so its decode steps are not affine in the context; the closed-form request sums do not "
                         f"apply (rl.decode_step at each context does)")
    e0 = estimate(decode_step_unchecked(s.model, batch, first_context, s.dt), s.hw)
    e1 = estimate(decode_step_unchecked(s.model, batch, np.asarray(first_context) + 1, s.dt), s.hw)
    return e0.t_math, e1.t_math - e0.t_math, e0.t_mem, e1.t_mem - e0.t_mem


def decode_time(model, hw, batch, first_context, steps, *, weight_dtype="bf16", kv_dtype="bf16",
                compute_dtype="bf16"):
    """Sum of the lower bounds of ``steps`` decode steps of ``batch`` sequences at contexts
    first_context, first_context + 1, ..., first_context + steps - 1, on one chip. Closed form, vectorised."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
    return decode_time_unchecked(s, positive("batch", batch, integer=True),
                                 positive("context", first_context, integer=True),
                                 positive("output_len (decode steps)", steps, integer=True))


def decode_time_unchecked(s, batch, first_context, steps):
    """``decode_time`` for a Setup and checked sizes (one chip)."""
    return sum_max_affine(*decode_lines_unchecked(s, batch, first_context), steps)


def weight_bytes_read(model, context=1, *, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """Bytes a forward pass reads whatever its token count: 2 B(1) - B(2) of decode steps of batch 1 and 2
    (every other byte grows by the same amount per sequence). For dense models these are the weights the
    matmuls stream; for MoE, the experts one token touches.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb); also used in chapter 11."""
    return weight_bytes_read_unchecked(get_model(model), dtypes(weight_dtype, kv_dtype, compute_dtype),
                                       positive("context", context, integer=True))


def weight_bytes_read_unchecked(m, dt, context):
    """``weight_bytes_read`` for a Model, a Dtypes bundle and a checked context."""
    return 2 * decode_step_unchecked(m, 1, context, dt).bytes - decode_step_unchecked(m, 2, context, dt).bytes


__all__ = ["decode_lines", "decode_time", "sum_max_affine", "weight_bytes_read"]
