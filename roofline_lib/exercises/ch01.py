"""Chapter 01 questions: time bounds, arithmetic intensity and the ridge point."""

from ..hardware import get_accelerator
from ..roofline import estimate
from ..workloads import Workload
from .core import Question

BOUND_CHOICES = ("compute", "memory")

# The kernel of questions 01.t_math_h100 ... 01.gap_h100: 4 TFLOP (bf16) that move 10 GB.
KERNEL_FLOPS, KERNEL_BYTES = 4e12, 10e9


def _kernel():
    return Workload("kernel", KERNEL_FLOPS, KERNEL_BYTES, "bf16")


def _kernel_on_h100():
    return estimate(_kernel(), "H100 SXM5")


QUESTIONS = [
    Question(
        "01.ridge_h200",
        "Ridge point of the H200 SXM for dense bf16: peak FLOP/s divided by memory bandwidth.",
        lambda: get_accelerator("H200").ridge_point("bf16"),
        unit="FLOP/byte",
        hint="dense bf16 peak (not the 2:4-sparse headline) over HBM bandwidth, both in SI units",
    ),
    Question(
        "01.t_math_h100",
        "A bf16 kernel does 4e12 FLOP and moves 10e9 bytes. T_math on an H100 SXM5, in seconds.",
        lambda: _kernel_on_h100().t_math,
        unit="s",
        hint="T_math = FLOPs / dense peak FLOP/s",
    ),
    Question(
        "01.t_mem_h100",
        "The same kernel: T_mem (time to move its bytes through HBM) on an H100 SXM5, in seconds.",
        lambda: _kernel_on_h100().t_mem,
        unit="s",
        hint="T_mem = bytes / memory bandwidth",
    ),
    Question(
        "01.bound_h100",
        "The same kernel on an H100 SXM5: 'compute' or 'memory' bound?",
        lambda: _kernel_on_h100().bound,
        kind="choice",
        choices=BOUND_CHOICES,
        hint="compare T_math with T_mem, or the kernel's intensity with the chip's ridge point",
    ),
    Question(
        "01.gap_h100",
        "The same kernel on an H100 SXM5: the ratio of its no-overlap time to its lower bound.",
        lambda: float(_kernel_on_h100().no_overlap / _kernel_on_h100().lower),
        unit="",
        hint="no overlap = T_math + T_mem, lower = max(T_math, T_mem); the ratio lies between 1 and 2",
    ),
    Question(
        "01.ridge_a100_80gb",
        "Ridge point (dense bf16) of the A100 80GB SXM4, the chip the source text names.",
        lambda: get_accelerator("A100 80GB SXM4").ridge_point("bf16"),
        unit="FLOP/byte",
        hint="the 80GB SXM4 part has 2.039 TB/s of HBM2e; 1.555 TB/s is the 40GB part",
    ),
    Question(
        "01.a100_slip_factor",
        "By what factor does using the A100 40GB bandwidth overstate the A100 80GB SXM4's ridge point?",
        lambda: get_accelerator("A100 40GB SXM4").ridge_point("bf16")
        / get_accelerator("A100 80GB SXM4").ridge_point("bf16"),
        unit="",
        hint="the peaks are equal, so the ratio of ridge points is the inverse ratio of bandwidths",
    ),
    Question(
        "01.flops_to_ridge_h200",
        "A bf16 kernel moves 1e9 bytes on an H200 SXM. At least how many FLOPs must it do to be compute-bound?",
        lambda: get_accelerator("H200").ridge_point("bf16") * 1e9,
        unit="FLOP",
        hint="compute-bound once intensity = FLOPs / bytes reaches the ridge point",
    ),
]
