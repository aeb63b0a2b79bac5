"""Static roofline figures (matplotlib). The live explorers in widgets/ build on these."""

from __future__ import annotations

import numpy as np
from matplotlib import pyplot as plt
from matplotlib.ticker import EngFormatter, FuncFormatter

from .hardware import get_accelerator
from .roofline import attainable_flops

DEFAULT_INTENSITY_RANGE = (0.1, 1e4)


def roof_curve(hw, dtype="bf16", intensity_range=DEFAULT_INTENSITY_RANGE, points=400):
    """x (FLOP/byte) and y (FLOP/s) arrays of one chip's roof, log-spaced."""
    lo, hi = intensity_range
    if not (0 < lo < hi):
        raise ValueError(f"intensity_range must be (low, high) with 0 < low < high, got {intensity_range!r}")
    x = np.geomspace(lo, hi, points)
    return x, attainable_flops(x, hw, dtype)


def format_axes(ax):
    """Log-log axes in engineering notation (no hand-made unit strings)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(EngFormatter(unit="FLOP/s"))
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable throughput")
    ax.grid(True, which="major", alpha=0.3)


def roofline_plot(accelerators, dtype="bf16", workloads=(), *, achieved=False, measured_points=(),
                  intensity_range=DEFAULT_INTENSITY_RANGE, ax=None, title=None, workload_labels="top"):
    """Draw the rooflines of several chips on one log-log figure.

    accelerators    names or Accelerator objects
    workloads       Workloads (or (label, Workload) pairs): a dotted vertical line
                    at each one's intensity, with a marker where it meets each roof
    achieved        also draw each chip's published measured ceilings, dashed
    measured_points (label, intensity, FLOP/s) triples measured on a real machine
    workload_labels "top" (default) or "bottom": where the workloads' labels hang, so
                    that they can keep clear of the roofs and the ridge labels
    Returns (fig, ax).
    """
    if workload_labels not in ("top", "bottom"):
        raise ValueError(f"workload_labels must be 'top' or 'bottom', got {workload_labels!r}")
    if isinstance(accelerators, str) or not np.iterable(accelerators):
        accelerators = [accelerators]
    chips = [get_accelerator(a) for a in accelerators]
    if not chips:
        raise ValueError("roofline_plot needs at least one accelerator")
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
    else:
        fig = ax.figure
    format_axes(ax)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, hw in enumerate(chips):
        colour = colours[i % len(colours)]
        x, y = roof_curve(hw, dtype, intensity_range)
        ax.plot(x, y, color=colour, lw=2, label=f"{hw.name} ({dtype})")
        ridge = hw.ridge_point(dtype)
        ax.plot([ridge], [hw.peak_flops(dtype)], "o", color=colour)
        ax.annotate(f"ridge {ridge:.0f}", (ridge, hw.peak_flops(dtype)), textcoords="offset points",
                    xytext=(4, 6), fontsize=8, color=colour)
        if achieved and hw.measured and dtype in hw.achieved().peak_flops_by_dtype:
            real = hw.achieved()
            xa, ya = roof_curve(real, dtype, intensity_range)
            ax.plot(xa, ya, "--", color=colour, lw=1.2, label=f"{hw.name} measured ceilings")
    for item in workloads:
        label, w = item if isinstance(item, tuple) else (item.name, item)
        intensity = float(w.intensity)
        ax.axvline(intensity, color="0.4", ls=":", lw=1)
        top = workload_labels == "top"
        ax.annotate(label, (intensity, 1 if top else 0), xycoords=("data", "axes fraction"),
                    textcoords="offset points", xytext=(3, -6 if top else 6), rotation=90,
                    va="top" if top else "bottom", fontsize=8, color="0.3")
        for i, hw in enumerate(chips):
            ax.plot([intensity], [attainable_flops(intensity, hw, dtype)], "s",
                    color=colours[i % len(colours)], ms=6)
    for label, intensity, flops in measured_points:
        ax.plot([intensity], [flops], "*", ms=10, color="black")
        ax.annotate(label, (intensity, flops), textcoords="offset points", xytext=(5, -10), fontsize=8)
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    return fig, ax
