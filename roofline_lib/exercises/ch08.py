"""Chapter 8: overhead-bound. Questions on measured numbers take the reader's overhead and bandwidth."""

from .. import get_accelerator
from .core import Question


def _calls_per_second(overhead):
    return 1.0 / overhead


def _flat_region_end(overhead, bandwidth):
    # fp64 vector add moves 24 bytes per element; memory time equals overhead at n = o * B / 24
    return overhead * bandwidth / 24


def _fused_speedup(overhead, bandwidth, calls=1000, n=16):
    separate = calls * max(overhead, 24 * n / bandwidth)
    fused = max(overhead, 24 * n * calls / bandwidth)
    return separate / fused


def _h100_flat_region(launch=5e-6):
    return launch * get_accelerator("H100").mem_bandwidth / 6  # fp16 add: 2 + 2 + 2 bytes per element


QUESTIONS = [
    Question("08.calls_per_second", "How many tiny numpy calls per second can your machine dispatch?",
             _calls_per_second, rtol=0.03, unit="calls/s"),
    Question("08.flat_region_end", "Up to how many elements does an fp64 vector add stay overhead-bound on your "
             "machine (memory time = per-call overhead)?", _flat_region_end, rtol=0.05, unit="elements",
             hint="24 bytes per element at the measured bandwidth"),
    Question("08.fused_speedup", "Predicted speed-up (three-term model) of fusing 1000 vector adds of 16 "
             "fp64 elements into one call on your machine.", _fused_speedup, rtol=0.05,
             hint="separate: 1000 x max(overhead, memory time of 16); fused: max(overhead, memory time of 16000)"),
    Question("08.h100_flat_region", "On an H100 SXM with a 5 us launch cost, below how many elements is an fp16 "
             "vector add launch-bound?", _h100_flat_region, rtol=0.03, unit="elements",
             hint="5e-6 s x 3.35e12 B/s / 6 bytes per element"),
]
