"""Chapter 00: the demo question, warm-ups, and one question of each kind the chapters ask."""

from ..core.dtypes import bytes_per_element
from ..roofline.bounds import estimate
from ..roofline.workloads import matmul
from ..specs.hardware import get_accelerator
from .core import Question

# The matmul of 00.intensity_4096 ... 00.bound_h200: square, 4096 on each side, bf16.
SIDE = 4096


def _square_on_h200():
    return estimate(matmul(SIDE, SIDE, SIDE, "bf16"), "H200")


# 00.highest_ridge: five chips of the set-up table
RIDGE_CHIPS = ("A10", "B200", "H200 SXM", "L4", "TPU v6e")


def _highest_ridge():
    return max(RIDGE_CHIPS, key=lambda name: get_accelerator(name).ridge_point("bf16")).lower()


def _units_slip():
    # a classmate divides the FLOPs by "989.4" (the peak in TFLOP/s) instead of 989.4e12 FLOP/s
    flops = matmul(SIDE, SIDE, SIDE, "bf16").flops
    theirs = flops / (get_accelerator("H200").peak_flops("bf16") / 1e12)
    ratio = theirs / _square_on_h200().t_math
    return "units" if round(ratio / 1e12, 6) == 1 else "nothing"


QUESTIONS = [
    Question(
        "00.demo_bytes",
        "How many bytes do one million (1e6) bf16 numbers occupy in memory?",
        lambda: bytes_per_element("bf16") * 1e6,
        unit="byte",
        hints=("a bf16 number is 16 bits",
               "bytes per number (16 bits / 8 bits per byte, or rl.bytes_per_element('bf16')) times how many numbers"),
    ),
    Question(
        "00.bf16_bytes",
        "How many bytes does one bf16 number occupy in memory?",
        lambda: bytes_per_element("bf16"),
        unit="byte",
        hints=("bf16 is a 16-bit format.",
               "divide its bits by the 8 bits in a byte; rl.bytes_per_element('bf16') gives the same."),
    ),
    Question(
        "00.ridge_h200",
        "Ridge point of the H200 for dense bf16: peak FLOP/s divided by memory bandwidth.",
        lambda: get_accelerator("H200").ridge_point("bf16"),
        unit="FLOP/byte",
        hints=("divide FLOP/s by byte/s, both in base units.",
               "989.4e12 FLOP/s over 4.8e12 byte/s, or rl.get_accelerator('H200').ridge_point('bf16')."),
    ),
    Question(
        "00.intensity_4096",
        "Arithmetic intensity of a 4096 x 4096 x 4096 bf16 matmul that reads both inputs and writes "
        "the output once.",
        lambda: matmul(SIDE, SIDE, SIDE, "bf16").intensity,
        unit="FLOP/byte",
        hints=("2·M·N·K FLOPs over (M·K + K·N + M·N) elements of 2 bytes each.",
               "with M = N = K = n: 2n³ / (3 · n² · 2); rl.matmul(n, n, n, 'bf16').intensity computes it."),
    ),
    Question(
        "00.t_math_h200",
        "T_math of that matmul on the H200: its FLOPs divided by the bf16 peak.",
        lambda: _square_on_h200().t_math,
        unit="s",
        hints=("2·4096³ FLOPs at the dense bf16 peak.",
               "T_math = FLOPs / FLOP/s: 2 * 4096**3 / 989.4e12, the peak in FLOP/s (not TFLOP/s)."),
    ),
    Question(
        "00.bound_h200",
        "Is that matmul compute-bound or memory-bound on the H200?",
        lambda: _square_on_h200().bound,
        kind="choice",
        choices=("compute", "memory"),
        hints=("compare its arithmetic intensity with the H200's ridge point.",
               "intensity above the ridge: compute-bound, below: memory-bound; "
               "rl.estimate(rl.matmul(4096, 4096, 4096), 'H200').bound checks it."),
    ),
    Question(
        "00.full_read_h200",
        "Predict: how long does an H200 SXM take just to read its whole memory once (the driver's "
        "mem_capacity, in bytes) at its datasheet bandwidth?",
        lambda: get_accelerator("H200").mem_capacity / get_accelerator("H200").mem_bandwidth,
        unit="s",
        hints=("a time is an amount over a rate: which amount, which rate?",
               "mem_capacity (140.4 GiB = 140.4 * 2**30 bytes) divided by 4.8e12 byte/s."),
    ),
    Question(
        "00.highest_ridge",
        "Explain: of the A10, B200, H200 SXM, L4 and TPU v6e, which has the highest dense bf16 ridge point, "
        "so that a kernel needs the most FLOPs per byte to keep it busy?",
        _highest_ridge,
        kind="choice",
        choices=tuple(name.lower() for name in RIDGE_CHIPS),
        aliases={"h200": "h200 sxm", "tpu v6": "tpu v6e", "tpuv6e": "tpu v6e", "v6e": "tpu v6e"},
        why={"b200": "the largest peak of the five (2250 TFLOP/s), but its 7.7 TB/s brings the ratio down to 292.",
             "h200 sxm": "989.4 / 4.8 = 206: its large bandwidth keeps the ridge low.",
             "a10": "125 / 0.6 = 208, near the H200's.",
             "l4": "121 / 0.3 = 403 is high, but one of the five is higher still."},
        hints=("the biggest peak is not the answer: the ridge is a ratio.",
               "for each chip divide the table's TFLOP/s by its TB/s (the units cancel to FLOP/byte)."),
    ),
    Question(
        "00.units_slip",
        "Find the mistake: a classmate times the 4096 x 4096 x 4096 bf16 matmul on the H200 as "
        "2 * 4096**3 / 989.4 = 1.39e8 s (over four years). What went wrong: 'units', 'flops' (the FLOP count), "
        "'sparse' (the 2:4-sparse peak) or 'nothing'?",
        _units_slip,
        kind="choice",
        choices=("units", "flops", "sparse", "nothing"),
        aliases={"unit": "units", "flop count": "flops", "sparsity": "sparse", "2:4 sparse": "sparse",
                 "nothing wrong": "nothing", "none": "nothing"},
        why={"flops": "2 * 4096**3 = 1.37e11 is the right count: one multiply and one add per (i, j, k).",
             "sparse": "989.4 is the dense bf16 peak (the 2:4-sparse headline is 1979).",
             "nothing": "a 4096-sided matmul does not take years: compare 1.39e8 s with 1.39e-4 s."},
        hints=("one matmul does not take years: check what each number in the division stands for, and its unit.",
               "T_math = FLOP / (FLOP/s): 989.4 is the peak in TFLOP/s, and 1 TFLOP/s = 1e12 FLOP/s."),
    ),
]


__all__ = ["QUESTIONS", "RIDGE_CHIPS", "SIDE"]
