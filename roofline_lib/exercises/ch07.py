"""Chapter 7: measure your machine. Questions on measured numbers take the reader's own
measurement as context, as plain numbers (``peak_fp64=..., bandwidth=...``, times), so the check
follows their machine and a grader can read the context back from the notebook."""

import math

from ..roofline.bounds import estimate
from ..roofline.diagnosis import classify_response
from ..roofline.workloads import matmul, vector_add
from ..specs.hardware import Accelerator, get_accelerator
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


def _diagnosis(t_base, t_more_flops, t_more_bytes, flop_factor, byte_factor):
    return classify_response(t_base, t_more_flops, t_more_bytes, flop_factor, byte_factor)[0]


def _h200_vs_here(peak_fp64, bandwidth):
    return get_accelerator("H200").ridge_point("fp64") / _ridge(peak_fp64, bandwidth)


def _knee_bytes_response(times_ridge=3.0):
    """Time factor from doubling the bytes of an H100 bf16 kernel at 3 x the ridge (no overlap of the two terms)."""
    hw = get_accelerator("H100")
    peak, bandwidth = hw.peak_flops("bf16"), hw.mem_bandwidth
    nbytes = 1e9
    flops = times_ridge * hw.ridge_point("bf16") * nbytes
    return (flops / peak + 2 * nbytes / bandwidth) / (flops / peak + nbytes / bandwidth)


def _stream_elements(llc_bytes):
    """Fewest fp64 elements per STREAM array for the three arrays to be at least 4x the last-level cache."""
    return math.ceil(4 * llc_bytes / (3 * 8))


def _small_matmul_miss():
    """Why an 8 x 8 fp64 matmul misses its roofline time: the roofline has no term for the call itself."""
    w = matmul(8, 8, 8, "fp64")
    return "overhead" if w.bytes < 2**16 else "cache"   # 1,536 bytes sit in any L1: not a cache miss


def _vector_add_slip():
    """The slip in 'an fp64 vector add does 1 FLOP per 8 bytes': the bytes (two reads and a write: 24)."""
    w = vector_add(1, "fp64")
    return "bytes" if (w.flops, w.bytes) == (1, 24) else "flops"


QUESTIONS = [
    Question("07.vector_add_time", "Roofline time of an fp64 vector add of 10^7 elements on your measured machine.",
             _vector_add_time, unit="s",
             hints=("which term sets a vector add's time, its FLOPs or its bytes? Count the arrays that cross memory",
                    "3 arrays x 8 bytes x 10^7 elements / hw.mem_bandwidth, your measured byte/s")),
    Question("07.smallest_compute_bound_matmul",
             "Smallest square fp64 matmul size n that reaches the ridge of your machine (intensity n/12).",
             _smallest_compute_bound_matmul, rtol=0.05, rounding="up",
             hints=("2n^3 / (3 * 8 * n^2) = n/12 FLOP/byte",
                    "solve n / 12 >= hw.ridge_point('fp64') for n and round up: ceil(12 x your fp64 ridge)")),
    Question("07.diagnosis", "Your diagnostic experiment's verdict: 'compute', 'memory', 'overhead' or "
             "'near the knee'.", _diagnosis, kind="choice",
             choices=("compute", "memory", "overhead", "near the knee"),
             hints=("how much did each knob move the time, per factor it changed (log ratio / log factor)?",
                    "r = log(t_more / t_base) / log(factor) for each knob: both < 0.25: overhead; one >= 0.5 and 0.3 "
                    "above the other: that one")),
    Question("07.h200_ridge_ratio", "How many times higher is the H200's fp64 ridge than your machine's?",
             _h200_vs_here, rtol=0.03,
             hints=("two ridge points in the same dtype, fp64: the H200's from its datasheet, yours from your "
                    "measurement",
                    "rl.get_accelerator('H200').ridge_point('fp64') / hw.ridge_point('fp64'), hw your measured "
                    "machine")),
    Question("07.predict_knee_bytes", "Predict, then check: an H100 bf16 kernel at 3 x the ridge intensity whose "
             "compute and memory traffic do not overlap (time = T_math + T_mem). Doubling its bytes at fixed FLOPs "
             "multiplies its time by?", _knee_bytes_response, unit="x",
             hints=("at 3 x the ridge, how long is T_math next to T_mem? Doubling the bytes changes only one term",
                    "in units of T_mem: T_math = 3; the time goes from T_math + T_mem to T_math + 2 T_mem")),
    Question("07.design_stream_elements", "Design: the fewest fp64 elements per STREAM array for the three arrays "
             "together to be at least 4 x your machine's last-level cache (the profile's warning asks for it).",
             _stream_elements, rtol=0.01, unit="elements", rounding="up",
             hints=("the three arrays together, in bytes, must reach 4 x profile.llc_bytes; each element is an fp64",
                    "3 arrays x 8 bytes x n >= 4 x llc_bytes: n = ceil(4 x profile.llc_bytes / (3 x 8))")),
    Question("07.explain_small_matmul", "Explain: an 8 x 8 fp64 matmul runs ~60x slower than its roofline time. Why: "
             "'overhead' (the fixed cost of the call), 'cache' (its data was not in cache), 'compute' (it is "
             "compute-bound) or 'noise'?", _small_matmul_miss, kind="choice",
             choices=("overhead", "cache", "compute", "noise"), aliases={},
             hints=("how many bytes do three 8 x 8 fp64 matrices take, and how long do 1,024 FLOPs take at any peak?",
                    "1,536 bytes sit in L1 and the FLOPs take nanoseconds: which cost of a call does the roofline "
                    "have no term for?"),
             why={"cache": "three 8 x 8 fp64 matrices are 1,536 bytes: they sit in L1 after the warm-up.",
                       "compute": "1,024 FLOPs at 0.67 FLOP/byte: below the ridge, and a microsecond of any peak "
                                  "does them many times over.",
                       "noise": "the median of many repeats misses by the same factor each run: a fixed cost."}),
    Question("07.mistake_vector_add", "Find the mistake: 'an fp64 vector add z = x + y does 1 FLOP per 8 bytes: "
             "intensity 0.125 FLOP/byte.' What is wrong: the 'bytes', the 'flops', the 'dtype' or 'nothing'?",
             _vector_add_slip, kind="choice", choices=("bytes", "flops", "dtype", "nothing"), aliases={},
             hints=("check the FLOPs and the bytes of one element of z = x + y separately",
                    "x and y are read and z written, 8 bytes each: compare rl.vector_add(1, 'fp64').flops and .bytes "
                    "with 1 and 8"),
             why={"flops": "one add per element is 1 FLOP (a multiply-add would be 2).",
                       "dtype": "fp64 is 8 bytes per element: that part is right.",
                       "nothing": "count the arrays that cross memory per element: x, y and z."}),
]


__all__ = ["QUESTIONS"]
