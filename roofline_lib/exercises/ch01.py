"""Chapter 01 questions: time bounds, arithmetic intensity and the ridge point."""

from ..roofline.bounds import estimate
from ..roofline.workloads import Workload
from ..specs.hardware import get_accelerator
from .core import Question

BOUND_CHOICES = ("compute", "memory")

# The kernel of questions 01.t_math_h100 ... 01.gap_h100: 4 TFLOP (bf16) that move 10 GB.
KERNEL_FLOPS, KERNEL_BYTES = 4e12, 10e9


# The chapter's example kernel (H200, A100 40GB), for 01.predict_a100_lower ... 01.slow_kernel
EXAMPLE_FLOPS, EXAMPLE_BYTES = 1.8e12, 10e9
MEASURED_EXAMPLE = 5.1e-3          # seconds, the "measured" time of 01.slow_kernel


def _example():
    return Workload("example kernel", EXAMPLE_FLOPS, EXAMPLE_BYTES, "bf16")


def _sparse_slip():
    # the notes divide 2.5e12 FLOP by 624e12: which of the A100's figures is that?
    a100 = get_accelerator("A100 80GB SXM4")
    used = 624e12
    if used == a100.sparse_flops_by_dtype.get("bf16") and used != a100.peak_flops("bf16"):
        return "sparse"
    return "nothing"


def _slow_kernel():
    est = estimate(_example(), "H200")
    if MEASURED_EXAMPLE > est.no_overlap:
        return "rates"
    return "overlap" if MEASURED_EXAMPLE > est.lower else "wrong"


def _kernel():
    return Workload("kernel", KERNEL_FLOPS, KERNEL_BYTES, "bf16")


def _kernel_on_h100():
    return estimate(_kernel(), "H100 SXM5")


QUESTIONS = [
    Question(
        "01.t_math_h100",
        "A bf16 kernel does 4e12 FLOP and moves 10e9 bytes. T_math on an H100 SXM5, in seconds.",
        lambda: _kernel_on_h100().t_math,
        unit="s",
        hints=("T_math = FLOPs / dense peak FLOP/s",
               "4e12 / rl.get_accelerator('H100 SXM5').peak_flops('bf16'): the dense bf16 peak, in FLOP/s"),
    ),
    Question(
        "01.t_mem_h100",
        "The same kernel: T_mem (time to move its bytes through HBM) on an H100 SXM5, in seconds.",
        lambda: _kernel_on_h100().t_mem,
        unit="s",
        hints=("T_mem = bytes / memory bandwidth",
               "10e9 / rl.get_accelerator('H100 SXM5').mem_bandwidth: the HBM bandwidth, in byte/s"),
    ),
    Question(
        "01.bound_h100",
        "The same kernel on an H100 SXM5: 'compute' or 'memory' bound?",
        lambda: _kernel_on_h100().bound,
        kind="choice",
        choices=BOUND_CHOICES,
        hints=("compare T_math with T_mem, or the kernel's intensity with the chip's ridge point",
               "intensity = 4e12 / 10e9 FLOP/byte against h100.ridge_point('bf16'): above the ridge it is "
               "compute-bound"),
    ),
    Question(
        "01.gap_h100",
        "The same kernel on an H100 SXM5: the ratio of its no-overlap time to its lower bound.",
        lambda: float(_kernel_on_h100().no_overlap / _kernel_on_h100().lower),
        unit="",
        hints=("no overlap = T_math + T_mem, lower = max(T_math, T_mem); the ratio lies between 1 and 2",
               "(T_math + T_mem) / max(T_math, T_mem) with the two times above, or est.no_overlap / est.lower of "
               "rl.estimate"),
    ),
    Question(
        "01.predict_a100_lower",
        "Predict: the chapter's example kernel (1.8e12 FLOP, 10 GB, bf16) on an A100 40GB SXM4 (312 TFLOP/s dense "
        "bf16, 1.555 TB/s) instead of the A100 80GB SXM4: its lower-bound time, in seconds.",
        lambda: float(estimate(_example(), "A100 40GB SXM4").lower),
        unit="s",
        hints=("the 40GB part has the 80GB part's peak but less bandwidth: which term wins now?",
               "T_math = 1.8e12 / 312e12, T_mem = 10e9 / 1.555e12; the lower bound is the larger one"),
    ),
    Question(
        "01.fuse_bytes_h200",
        "Design: fusing the example kernel (1.8e12 FLOP, 10 GB, bf16) with its neighbour keeps its FLOPs and cuts "
        "its bytes. At most how many bytes may it move to be compute-bound on the H200 SXM?",
        lambda: EXAMPLE_FLOPS / get_accelerator("H200").ridge_point("bf16"),
        unit="byte",
        hints=("which intensity must the kernel reach, and what does that say about its bytes?",
               "Q = F / R with R = 989.4e12 / 4.8e12 FLOP/byte"),
    ),
    Question(
        "01.sparse_slip_a100",
        "Find the mistake: notes on a bf16 kernel of 2.5e12 FLOP and 12 GB on an A100 80GB SXM4 say "
        "'T_math = 2.5e12 / 624e12 = 4.0 ms, T_mem = 12e9 / 2.039e12 = 5.9 ms: memory-bound'. What went wrong: "
        "'sparse', 'bandwidth', 'units' or 'nothing'?",
        _sparse_slip,
        kind="choice",
        choices=("sparse", "bandwidth", "units", "nothing"),
        aliases={"sparsity": "sparse", "2:4 sparse": "sparse", "sparse peak": "sparse", "peak": "sparse",
                 "wrong bandwidth": "bandwidth", "unit": "units", "nothing wrong": "nothing", "none": "nothing"},
        why={"bandwidth": "2.039 TB/s is the A100 80GB SXM4's HBM2e bandwidth (1.555 would be the 40GB part).",
             "units": "both divisions are in base units (FLOP over FLOP/s, byte over byte/s): the times are right "
                      "for the figures used.",
             "nothing": "look up the A100's dense bf16 peak: with it T_math is 8.0 ms and the bound flips."},
        hints=("check each figure in the notes against the A100 80GB SXM4's datasheet: is each the one T_math needs?",
               "compare 624e12 with rl.get_accelerator('A100').peak_flops('bf16') and .sparse_flops_by_dtype; redo "
               "T_math with the dense peak"),
    ),
    Question(
        "01.slow_kernel",
        "Explain: the example kernel (1.8e12 FLOP, 10 GB) takes 5.1 ms on an H200, more than its lower bound "
        "(2.08 ms) and its no-overlap time (3.90 ms). Which explains it: 'overlap' (computation and data movement "
        "did not overlap), 'rates' (it ran below the peak rates or moved more than the minimum bytes), 'compute' "
        "(it is compute-bound) or 'wrong' (the lower bound is wrong)?",
        _slow_kernel,
        kind="choice",
        choices=("overlap", "rates", "compute", "wrong"),
        aliases={"no overlap": "overlap", "rate": "rates", "below peak": "rates", "compute-bound": "compute",
                 "compute bound": "compute", "bound wrong": "wrong"},
        why={"overlap": "with no overlap at all, at peak rates, it would take 3.90 ms: lost overlap alone cannot "
                        "make 5.1.",
             "compute": "its intensity, 180 FLOP/byte, is below the H200's ridge (206): it is memory-bound, and "
                        "a bound does not make a kernel slower than the no-overlap time.",
             "wrong": "a lower bound says the kernel cannot be faster than 2.08 ms. A slower kernel agrees with it."},
        hints=("which of the times assumes peak rates and the fewest bytes?",
               "T_math + T_mem already charges no overlap at all, at peak rates: what else can make a kernel slower "
               "than that?"),
    ),
]


__all__ = [
    "BOUND_CHOICES", "EXAMPLE_BYTES", "EXAMPLE_FLOPS", "KERNEL_BYTES", "KERNEL_FLOPS", "MEASURED_EXAMPLE",
    "QUESTIONS",
]
