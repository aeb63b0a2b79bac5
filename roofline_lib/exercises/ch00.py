"""Chapter 00: the demo question, and one question of each kind the chapters ask."""

from ..dtypes import bytes_per_element
from ..hardware import get_accelerator
from ..roofline import estimate
from ..workloads import matmul
from .core import Question

# The matmul of 00.intensity_4096 ... 00.bound_h200: square, 4096 on each side, bf16.
SIDE = 4096


def _square_on_h200():
    return estimate(matmul(SIDE, SIDE, SIDE, "bf16"), "H200")


QUESTIONS = [
    Question(
        "00.demo_bytes",
        "How many bytes do one million (1e6) bf16 numbers occupy in memory?",
        lambda: bytes_per_element("bf16") * 1e6,
        unit="byte",
        hint="a bf16 number is 16 bits",
    ),
    Question(
        "00.bf16_bytes",
        "How many bytes does one bf16 number occupy in memory?",
        lambda: bytes_per_element("bf16"),
        unit="byte",
        hint="bf16 is a 16-bit format.",
    ),
    Question(
        "00.ridge_h200",
        "Ridge point of the H200 for dense bf16: peak FLOP/s divided by memory bandwidth.",
        lambda: get_accelerator("H200").ridge_point("bf16"),
        unit="FLOP/byte",
        hint="divide FLOP/s by byte/s, both in base units.",
    ),
    Question(
        "00.intensity_4096",
        "Arithmetic intensity of a 4096 x 4096 x 4096 bf16 matmul that reads both inputs and writes "
        "the output once.",
        lambda: matmul(SIDE, SIDE, SIDE, "bf16").intensity,
        unit="FLOP/byte",
        hint="2·M·N·K FLOPs over (M·K + K·N + M·N) elements of 2 bytes each.",
    ),
    Question(
        "00.t_math_h200",
        "T_math of that matmul on the H200: its FLOPs divided by the bf16 peak.",
        lambda: _square_on_h200().t_math,
        unit="s",
        hint="2·4096³ FLOPs at the dense bf16 peak.",
    ),
    Question(
        "00.bound_h200",
        "Is that matmul compute-bound or memory-bound on the H200?",
        lambda: _square_on_h200().bound,
        kind="choice",
        choices=("compute", "memory"),
        hint="compare its arithmetic intensity with the H200's ridge point.",
    ),
]
