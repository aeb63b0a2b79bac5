"""The ceilings published benchmarks reach on a chip (its ``[measured]`` matmul and copy figures), as a chip."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..specs.hardware import get_accelerator, list_accelerators


def achieved_fractions(hw):
    """(compute, bandwidth) shares of the datasheet peaks that published benchmarks reach on ``hw``:
    its own ``[measured]`` ceilings where recorded, else the median over the chips that have them."""
    hw = get_accelerator(hw)
    measured = [hw] if hw.measured else [get_accelerator(n) for n in _chips_with_ceilings()]
    compute = [c.measured["bf16"] / c.peak_flops("bf16") for c in measured]
    memory = [c.measured["mem_bandwidth"] / c.mem_bandwidth for c in measured]
    return float(np.median(compute)), float(np.median(memory))


def calibrated(hw):
    """``hw`` with every peak and its bandwidth scaled to what benchmarks reach (``achieved_fractions``).

    Taught in chapter 08 (notebooks/08_overhead_bound.ipynb); also used in chapters 09, 10, 11."""
    hw = get_accelerator(hw)
    compute, memory = achieved_fractions(hw)
    return dataclasses.replace(
        hw, name=f"{hw.name} (achieved)", aliases=(), measured={},
        peak_flops_by_dtype={d: v * compute for d, v in hw.peak_flops_by_dtype.items()},
        mem_bandwidth=hw.mem_bandwidth * memory,
    )


def _chips_with_ceilings():
    return [n for n in list_accelerators() if get_accelerator(n).measured]


__all__ = ["achieved_fractions", "calibrated"]
