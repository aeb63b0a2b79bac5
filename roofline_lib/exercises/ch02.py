"""Chapter 02: the roofline model."""

import roofline_lib as rl

from .core import Question


def _attainable(intensity, chip, dtype="bf16"):
    return float(rl.attainable_flops(intensity, chip, dtype))


# 02.slowest_chip_4ms: a memory-bound step of 16 GB, to run in under 4 ms
STEP_BYTES, STEP_TARGET = 16e9, 4e-3
STEP_CHIPS = ("A100 80GB SXM4", "H100 SXM5", "H200 SXM", "MI300X", "B200")


def _slowest_chip_in_time():
    times = {name: STEP_BYTES / rl.get_accelerator(name).mem_bandwidth for name in STEP_CHIPS}
    fast_enough = [name for name, t in times.items() if t < STEP_TARGET]
    return max(fast_enough, key=times.get).lower()


def _roof_cap_slip():
    # the notes multiply 4.8e12 byte/s by 1000 FLOP/byte and stop there
    h200 = rl.get_accelerator("H200")
    theirs = h200.mem_bandwidth * 1000
    return "peak" if theirs > _attainable(1000, h200) == h200.peak_flops("bf16") else "nothing"


def _no_speedup():
    gains = {}
    for label, intensity in (("low", 2), ("high", 1000)):
        w = rl.Workload(label, intensity * 1e9, 1e9)
        gains[label] = rl.estimate(w, "H100").lower / rl.estimate(w, "H200").lower
    flat = [label for label, g in gains.items() if abs(g - 1) < 1e-9]
    return {0: "neither", 2: "both"}.get(len(flat), flat[0] if flat else "neither")


QUESTIONS = [
    Question(
        id="02.attainable_a100_50",
        prompt="Attainable bf16 throughput of a kernel with intensity 50 FLOP/B on an A100 80GB SXM4, in FLOP/s.",
        expected=lambda: _attainable(50, "A100"),
        unit="FLOP/s",
        hints=("min(peak, bandwidth x intensity): which of the two is smaller at 50 FLOP/B?",
               "min(312e12, 2.039e12 x 50) in FLOP/s, or rl.attainable_flops(50, 'A100')."),
    ),
    Question(
        id="02.achieved_fraction_a100",
        prompt="Multi-step: with the published measured ceilings (hw.achieved()), what fraction of the datasheet "
               "attainable throughput does an A100 80GB SXM4 reach at intensity 160 FLOP/B (bf16)?",
        expected=lambda: _attainable(160, rl.get_accelerator("A100").achieved()) / _attainable(160, "A100"),
        hints=("which part of each roof is 160 FLOP/B on? Compare it with both ridges.",
               "datasheet: min(312e12, 2.039e12 x 160), the flat roof; measured: min(271.2e12, 1.6e12 x 160), "
               "the slope; divide the second by the first."),
    ),
    Question(
        id="02.predict_fusion_a100",
        prompt="Predict: fusion raises a bf16 kernel's intensity from 20 to 400 FLOP/B on an A100 80GB SXM4. By what "
               "factor does its attainable throughput rise?",
        expected=lambda: _attainable(400, "A100") / _attainable(20, "A100"),
        unit="x",
        hints=("20 is below the ridge and 400 above it: the gain stops at the peak (scenario 2).",
               "min(312e12, 2.039e12 x 400) / min(312e12, 2.039e12 x 20)."),
    ),
    Question(
        id="02.slowest_chip_4ms",
        prompt="Design: a memory-bound decode step moves 16 GB. Of the A100 80GB SXM4, H100 SXM5, H200 SXM, MI300X and "
               "B200, which is the slowest chip that still runs it in under 4 ms (datasheet bandwidth)?",
        expected=_slowest_chip_in_time,
        kind="choice",
        choices=tuple(name.lower() for name in STEP_CHIPS),
        aliases={"a100": "a100 80gb sxm4", "h100": "h100 sxm5", "h200": "h200 sxm"},
        why={"a100 80gb sxm4": "16e9 / 2.039e12 = 7.8 ms: too slow.",
             "h100 sxm5": "16e9 / 3.35e12 = 4.8 ms: just too slow, its compute does not help a memory-bound step.",
             "mi300x": "fast enough (3.0 ms), but a slower chip in the list also makes it.",
             "b200": "fast enough (2.1 ms), but it is the fastest of the five, not the slowest that makes it."},
        hints=("memory-bound: time = bytes / bandwidth. The chip needs at least 16e9 / 4e-3 byte/s.",
               "16e9 / rl.get_accelerator(name).mem_bandwidth for each of the five; of those under 4e-3 s, take the "
               "longest time."),
    ),
    Question(
        id="02.roof_cap_slip",
        prompt="Find the mistake: a report reads the H200 roofline as 'at 1000 FLOP/B a bf16 kernel can reach "
               "4.8e12 x 1000 = 4.8e15 FLOP/s'. What went wrong: 'peak', 'units', 'sparse' or 'nothing'?",
        expected=_roof_cap_slip,
        kind="choice",
        choices=("peak", "units", "sparse", "nothing"),
        aliases={"flat roof": "peak", "min": "peak", "ridge": "peak", "unit": "units", "sparsity": "sparse",
                 "nothing wrong": "nothing", "none": "nothing"},
        why={"units": "byte/s times FLOP/byte is FLOP/s: the units are right.",
             "sparse": "no peak was used at all, dense or sparse: that is the slip.",
             "nothing": "4.8e15 FLOP/s is almost five times the H200's dense bf16 peak."},
        hints=("attainable = min(peak, bandwidth x intensity): is 1000 above the ridge?",
               "compare 1000 with rl.get_accelerator('H200').ridge_point('bf16'), and 4.8e15 with "
               "rl.attainable_flops(1000, 'H200')."),
    ),
    Question(
        id="02.h200_no_speedup",
        prompt="Explain: the H200 has the H100 SXM5's compute and 1.43x its bandwidth. For which bf16 kernel does it "
               "give no speed-up: 'low' (2 FLOP/B), 'high' (1000 FLOP/B), 'both' or 'neither'?",
        expected=_no_speedup,
        kind="choice",
        choices=("low", "high", "both", "neither"),
        aliases={"2": "low", "2 flop/b": "low", "1000": "high", "1000 flop/b": "high"},
        why={"low": "at 2 FLOP/B both chips are memory-bound: time = bytes / bandwidth, 1.43x faster on the H200.",
             "both": "only one of the two is limited by the compute the chips share.",
             "neither": "one of the kernels is above both ridges (206 and 295): the flat roof is the same."},
        hints=("compare each intensity with both ridges: which roof limits it on each chip?",
               "ridge_point('bf16') of 'H100' and 'H200'; below a ridge time = bytes / bandwidth, above it FLOPs / "
               "peak: which of the two do the chips share?"),
    ),
]


__all__ = ["QUESTIONS", "STEP_BYTES", "STEP_CHIPS", "STEP_TARGET"]
