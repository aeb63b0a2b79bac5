"""Chapter 7: measure your machine. Questions on measured numbers take the reader's own
measurement as context, as plain numbers (``peak_fp64=..., bandwidth=...``, times), so the check
follows their machine and a grader can read the context back from the notebook."""

import math

from .. import Accelerator, attainable_flops, dot, estimate, get_accelerator, vector_add
from ..diagnosis import classify_response
from .core import Question


def _machine(peak_fp64, bandwidth):
    """The reader's measured roofline, rebuilt from its two numbers (FLOP/s, byte/s)."""
    return Accelerator(name="your machine", peak_flops_by_dtype={"fp64": peak_fp64}, mem_bandwidth=bandwidth,
                       mem_capacity=1.0)  # capacity plays no part in these questions


def _ridge(peak_fp64, bandwidth):
    return _machine(peak_fp64, bandwidth).ridge_point("fp64")


def _vector_add_time(peak_fp64, bandwidth, n=10**7):
    return float(estimate(vector_add(n, "fp64"), _machine(peak_fp64, bandwidth)).lower)


def _smallest_compute_bound_matmul(peak_fp64, bandwidth):
    # square fp64 matmul: 2 n^3 FLOPs over 3 * 8 n^2 bytes -> intensity n / 12
    return math.ceil(12 * _ridge(peak_fp64, bandwidth))


def _dot_fraction(peak_fp64, bandwidth, n, seconds):
    w = dot(n, "fp64")
    return float((w.flops / seconds) / attainable_flops(w.intensity, _machine(peak_fp64, bandwidth), "fp64"))


def _diagnosis(t_base, t_more_flops, t_more_bytes, flop_factor, byte_factor):
    return classify_response(t_base, t_more_flops, t_more_bytes, flop_factor, byte_factor)[0]


def _h200_vs_here(peak_fp64, bandwidth):
    return get_accelerator("H200").ridge_point("fp64") / _ridge(peak_fp64, bandwidth)


QUESTIONS = [
    Question("07.ridge_measured", "Ridge point (FLOP/byte) of your measured machine in fp64: peak / bandwidth.",
             _ridge, unit="FLOP/byte", hint="divide the measured fp64 matmul FLOP/s by the memory roof in byte/s"),
    Question("07.vector_add_time", "Roofline time of an fp64 vector add of 10^7 elements on your measured machine.",
             _vector_add_time, unit="s", hint="3 arrays x 8 bytes x n, at the measured bandwidth"),
    Question("07.smallest_compute_bound_matmul",
             "Smallest square fp64 matmul size n that reaches the ridge of your machine (intensity n/12).",
             _smallest_compute_bound_matmul, rtol=0.05, hint="2n^3 / (3 * 8 * n^2) = n/12 FLOP/byte"),
    Question("07.dot_fraction", "Fraction of the roof your measured np.dot reached (achieved FLOP/s / attainable).",
             _dot_fraction, rtol=0.05, hint="achieved = 2n / seconds; attainable at its intensity (about 1/8)"),
    Question("07.diagnosis", "Your diagnostic experiment's verdict: 'compute', 'memory', 'overhead' or "
             "'near the knee'.", _diagnosis, kind="choice",
             choices=("compute", "memory", "overhead", "near the knee"),
             hint="how much did each knob move the time, per factor it changed (log ratio / log factor)?"),
    Question("07.h200_ridge_ratio", "How many times higher is the H200's fp64 ridge than your machine's?",
             _h200_vs_here, rtol=0.03),
]
