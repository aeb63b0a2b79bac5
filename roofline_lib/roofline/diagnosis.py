"""Which bottleneck does a kernel's time respond to? The course's one rule for telling, from timings.

Run the kernel as it is, then with more FLOPs (bytes unchanged), then with more bytes (FLOPs
unchanged). A kernel limited by compute slows in proportion to its FLOPs, one limited by memory
in proportion to its bytes, and one limited by overhead by neither. Chapter 01 applies the rule to
the model's own times, chapter 07 to measured ones.

    verdict, r_flops, r_bytes = rl.diagnosis.classify_response(t, t_2x_flops, t_2x_bytes, 2, 2)
    rl.diagnosis.diagnose(r_flops, r_bytes)      # the rule alone, on two responses
"""

from __future__ import annotations

import math

import numpy as np

# a response below FLAT means the time did not move; at RESPONDS or above it moved clearly;
# one response must beat the other by MARGIN for a verdict. On the model's times (chapter 01) these
# thresholds never name the wrong bound, and they name one from half or twice the ridge point outwards
# (tests/test_diagnosis.py).
FLAT, RESPONDS, MARGIN = 0.25, 0.5, 0.3
VERDICTS = ("compute", "memory", "overhead", "near the knee")


def response(t_base, t_more, factor):
    """log(t_more / t_base) / log(factor): 1 when the time grows in proportion, 0 when it does not move."""
    return math.log(t_more / t_base) / math.log(factor)


def diagnose(flop_response, byte_response):
    """The verdict for two responses (see ``response``): "overhead" (neither moves the time),
    "compute" or "memory" (one moves it clearly more than the other), or "near the knee" (both
    move it: the rule tells bottlenecks apart only away from the ridge point)."""
    if flop_response < FLAT and byte_response < FLAT:
        return "overhead"
    if flop_response >= RESPONDS and flop_response - byte_response >= MARGIN:
        return "compute"
    if byte_response >= RESPONDS and byte_response - flop_response >= MARGIN:
        return "memory"
    return "near the knee"


def classify_response(t_base, t_more_flops, t_more_bytes, flop_factor, byte_factor):
    """Which bottleneck a kernel's time responds to.

    t_base         time of the kernel as it is
    t_more_flops   time with ``flop_factor`` times the FLOPs (bytes as unchanged as possible)
    t_more_bytes   time with ``byte_factor`` times the bytes (FLOPs unchanged)
    Returns (verdict, flop_response, byte_response); see ``response`` and ``diagnose``.

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapter 07.
    """
    for name, value in (("t_base", t_base), ("t_more_flops", t_more_flops), ("t_more_bytes", t_more_bytes)):
        if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive time in seconds, got {value!r}")
    for name, value in (("flop_factor", flop_factor), ("byte_factor", byte_factor)):
        if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 1):
            raise ValueError(f"{name} must be > 1, got {value!r}")
    r_flops = response(t_base, t_more_flops, flop_factor)
    r_bytes = response(t_base, t_more_bytes, byte_factor)
    return diagnose(r_flops, r_bytes), r_flops, r_bytes


__all__ = ["classify_response", "diagnose", "FLAT", "MARGIN", "RESPONDS", "response", "VERDICTS"]
