"""Chapter 02: the roofline model."""

import roofline_lib as rl

from .core import Question


def _attainable(intensity, chip, dtype="bf16"):
    return float(rl.attainable_flops(intensity, chip, dtype))


QUESTIONS = [
    Question(
        id="02.ridge_h200",
        prompt="Ridge point of the H200 SXM in bf16 (dense peak / HBM bandwidth), in FLOP per byte.",
        expected=lambda: rl.get_accelerator("H200").ridge_point("bf16"),
        unit="FLOP/B",
        hint="peak_flops('bf16') / mem_bandwidth, both in base units (FLOP/s and byte/s).",
    ),
    Question(
        id="02.attainable_a100_50",
        prompt="Attainable bf16 throughput of a kernel with intensity 50 FLOP/B on an A100 80GB SXM4, in FLOP/s.",
        expected=lambda: _attainable(50, "A100"),
        unit="FLOP/s",
        hint="min(peak, bandwidth x intensity): which of the two is smaller at 50 FLOP/B?",
    ),
    Question(
        id="02.bound_180",
        prompt="A bf16 kernel does 180 FLOP per byte. On the H200 SXM is it 'compute'- or 'memory'-bound?",
        expected=lambda: "compute" if 180 >= rl.get_accelerator("H200").ridge_point("bf16") else "memory",
        kind="choice",
        choices=("compute", "memory"),
        hint="compare 180 with the H200's ridge point (it is not the A100's 153).",
    ),
    Question(
        id="02.h200_h100_bandwidth",
        prompt="How many times the H100 SXM5's memory bandwidth does the H200 SXM have (same compute)?",
        expected=lambda: rl.get_accelerator("H200").mem_bandwidth / rl.get_accelerator("H100").mem_bandwidth,
        unit="x",
    ),
    Question(
        id="02.decode_speedup_h200",
        prompt="Multi-step: a memory-bound decode step moves 16 GB per step. How many times faster is it on the "
               "H200 SXM than on the A100 80GB SXM4, at datasheet bandwidth? (Work out both times first.)",
        expected=lambda: ((16e9 / rl.get_accelerator("A100").mem_bandwidth)
                          / (16e9 / rl.get_accelerator("H200").mem_bandwidth)),
        unit="x",
        hint="memory-bound time = bytes / bandwidth; the ratio of the times is the ratio of the bandwidths.",
    ),
    Question(
        id="02.achieved_fraction_h200",
        prompt="Multi-step: with the published measured ceilings (hw.achieved()), what fraction of the datasheet "
               "attainable throughput does an H200 reach at intensity 100 FLOP/B (bf16)?",
        expected=lambda: _attainable(100, rl.get_accelerator("H200").achieved()) / _attainable(100, "H200"),
        hint="at 100 FLOP/B both roofs are on their sloped (bandwidth) part.",
    ),
]
