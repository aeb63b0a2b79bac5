"""Static roofline figures (matplotlib). The live explorers in widgets/ build on these."""

from __future__ import annotations

import numpy as np
from matplotlib import pyplot as plt
from matplotlib.path import Path
from matplotlib.ticker import EngFormatter, FuncFormatter
from matplotlib.transforms import Bbox

from ..roofline.bounds import attainable_flops
from ..specs.hardware import get_accelerator

DEFAULT_INTENSITY_RANGE = (0.1, 1e4)


def roof_curve(hw, dtype="bf16", intensity_range=DEFAULT_INTENSITY_RANGE, points=400):
    """x (FLOP/byte) and y (FLOP/s) arrays of one chip's roof, log-spaced."""
    lo, hi = intensity_range
    if not (0 < lo < hi):
        raise ValueError(f"intensity_range must be (low, high) with 0 < low < high, got {intensity_range!r}")
    x = np.geomspace(lo, hi, points)
    return x, attainable_flops(x, hw, dtype)


# Where a ridge label may sit beside its ridge point, tried in order: above the flat roof, right of the ridge
# (as chapters 01-06 drew it); then below the roof; then stacked a line higher or lower (two chips with one peak);
# then further right (past a workload's line just right of the ridge); then left of the ridge.
RIDGE_SIDES = (((4, 6), "left", "bottom"), ((4, -6), "left", "top"), ((4, 18), "left", "bottom"),
               ((4, -18), "left", "top"), ((14, 6), "left", "bottom"), ((14, -6), "left", "top"),
               ((-4, 6), "right", "bottom"), ((-4, -6), "right", "top"))


def below_first(sides=RIDGE_SIDES):
    """The same places, those under the roof first (in their order), then those above: a live figure's ridge
    label keeps below its roof, clear of the operating point that moves above it."""
    return tuple(sorted(sides, key=lambda side: side[0][1] > 0))


# Where a label may sit beside the point it names: (offset in points, horizontal, vertical alignment),
# in the order they are tried. Below-right first: a point on (or under) a roof has the roof above it
# to the right, since a roof never falls as intensity grows; above-left next, for a point above a roof.
BESIDE = (((5, -5), "left", "top"), ((-5, 5), "right", "bottom"), ((5, 5), "left", "bottom"),
          ((-5, -5), "right", "top"), ((8, 0), "left", "center"), ((-8, 0), "right", "center"),
          ((5, -16), "left", "top"), ((-5, -16), "right", "top"))  # then beside, then a line lower (points crowd)


def crosses(box, line):
    """Whether ``line`` (a Line2D drawn with a line style) runs through ``box`` (display coordinates)."""
    if not line.get_visible() or line.get_linestyle() in ("None", "none", "", " "):
        return False
    xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
    if len(xy) < 2:
        return False
    xy = line.get_transform().transform(xy)
    xy = xy[np.isfinite(xy).all(axis=1)]
    return len(xy) > 1 and Path(xy).intersects_bbox(box, filled=False)


def marker_boxes(ax, renderer):
    """Display boxes of the markers ``ax`` draws (ridge dots, workload squares, measured stars): a label laid
    on a marker hides the point it should name. A little smaller than the marker's square, since a dot or a
    star does not fill it."""
    boxes = []
    for line in ax.get_lines():
        if line.get_marker() in (None, "None", "none", "", " ") or not line.get_visible():
            continue
        half = 0.4 * line.get_markersize() * renderer.points_to_pixels(1.0)
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        for x, y in line.get_transform().transform(xy):
            if np.isfinite(x) and np.isfinite(y):
                boxes.append(Bbox.from_extents(x - half, y - half, x + half, y + half))
    return boxes


def ridge_text(ridge):
    """'ridge 153', or 'ridge 1.3' below 10 FLOP/byte, where a whole number would be far off."""
    return f"ridge {ridge:.0f}" if ridge >= 10 else f"ridge {ridge:.1f}"


def place_beside(label, avoid_lines=(), avoid_boxes=(), options=BESIDE):
    """Move ``label`` (an Annotation in offset points) to the first of ``options`` where its box stays inside
    its axes, crosses none of ``avoid_lines`` and overlaps none of ``avoid_boxes``; the first option if none
    is clear. Call it once the axes' limits and the figure's layout are final. Returns the label's box."""
    ax = label.axes
    renderer = ax.figure._get_renderer()
    inside = ax.get_window_extent(renderer)
    first = None
    for offset, ha, va in options:
        label.set_position(offset)
        label.set_horizontalalignment(ha)
        label.set_verticalalignment(va)
        box = label.get_window_extent(renderer)
        first = first or (offset, ha, va)
        if (inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
                and not any(crosses(box, line) for line in avoid_lines)
                and not any(box.overlaps(other) for other in avoid_boxes)):
            return box
    label.set_position(first[0])
    label.set_horizontalalignment(first[1])
    label.set_verticalalignment(first[2])
    return label.get_window_extent(renderer)


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

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapters 02, 06, 07, 12, 15.
    """
    if workload_labels not in ("top", "bottom"):
        raise ValueError(f"workload_labels must be 'top' or 'bottom', got {workload_labels!r}")
    if isinstance(accelerators, str) or not np.iterable(accelerators):
        accelerators = [accelerators]
    chips = [get_accelerator(a) for a in accelerators]
    if not chips:
        raise ValueError("roofline_plot needs at least one accelerator")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.8, 4.9), layout="constrained")  # <= 880 px at 110 dpi, labels included
    else:
        fig = ax.figure
    format_axes(ax)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ridge_labels = []
    for i, hw in enumerate(chips):
        colour = colours[i % len(colours)]
        x, y = roof_curve(hw, dtype, intensity_range)
        ax.plot(x, y, color=colour, lw=2, label=f"{hw.name} ({dtype})")
        ridge = hw.ridge_point(dtype)
        ax.plot([ridge], [hw.peak_flops(dtype)], "o", color=colour)
        ridge_labels.append(ax.annotate(ridge_text(ridge), (ridge, hw.peak_flops(dtype)), textcoords="offset points",
                                        xytext=RIDGE_SIDES[0][0], ha=RIDGE_SIDES[0][1], va=RIDGE_SIDES[0][2],
                                        fontsize=8, color=colour))
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
    labels = []
    for label, intensity, flops in measured_points:
        ax.plot([intensity], [flops], "*", ms=10, color="black")
        labels.append(ax.annotate(label, (intensity, flops), textcoords="offset points", xytext=BESIDE[0][0],
                                  ha=BESIDE[0][1], va=BESIDE[0][2], fontsize=8))
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    # Ridge labels, then measured points' labels, go where no line runs through them and no other label is
    # (the layout first: it moves the axes, and with them where each label lands).
    ax.autoscale_view()
    if fig.get_layout_engine() is not None:
        fig.get_layout_engine().execute(fig)
    lines = [line for line in ax.get_lines() if line.get_linestyle() not in ("None", "")]
    renderer = fig._get_renderer()
    placed = [ax.get_legend().get_window_extent(renderer), *marker_boxes(ax, renderer)]
    placed += [t.get_window_extent(renderer) for t in ax.texts
               if t.get_text() and t not in labels and t not in ridge_labels]
    for text in ridge_labels:
        placed.append(place_beside(text, lines, placed, RIDGE_SIDES))
    for text in labels:
        placed.append(place_beside(text, lines, placed))
    return fig, ax


__all__ = [
    "BESIDE", "crosses", "DEFAULT_INTENSITY_RANGE", "format_axes", "marker_boxes", "place_beside", "RIDGE_SIDES",
    "ridge_text", "roof_curve", "roofline_plot",
]
