"""The roofline of two chips side by side, and an operating point moved by an intensity slider.

``RoofAxes`` draws the roofs once and moves them in place; the matmul and
attention explorers reuse it to place their own operating points.
"""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.ticker import EngFormatter

from ..plotting.rooflines import DEFAULT_INTENSITY_RANGE, below_first, format_axes, place_beside
from ..roofline.bounds import attainable_flops, bound_at
from ..specs.hardware import get_accelerator, list_accelerators
from .base import Explorer, eng, invalidate_background, moving
from .controls import log_slider

INTENSITY_RANGE = DEFAULT_INTENSITY_RANGE
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red")
# a ridge label's places, from plotting's one table: below the flat roof first (nothing runs there but the chip's
# own roof above it), then above
RIDGE_SIDES = below_first()




class RoofAxes:
    """The roofs of a few chips on one log-log axes, built once; ``set_chips`` and ``set_points`` move them."""

    def __init__(self, ax, n_slots, intensity_range=INTENSITY_RANGE, points=200,
                 ridge_label="{short} ridge {ridge:.0f}"):
        self.ax = ax
        # {name}: the chip's name; {short}: its first word ("A100"), or the name where two chips share it; {ridge}
        self.ridge_label = ridge_label
        self.x = np.geomspace(*intensity_range, points)
        format_axes(ax)
        # The unit once in the label, not on every tick: text is most of the cost of a redraw.
        ax.yaxis.set_major_formatter(EngFormatter())
        ax.set_ylabel("attainable throughput (FLOP/s)")
        ax.set_xlim(*intensity_range)
        self.roofs, self.achieved, self.ridges, self.ridge_labels, self.points = [], [], [], [], []
        for slot in range(n_slots):
            colour = COLOURS[slot % len(COLOURS)]
            self.roofs.append(ax.plot([], [], color=colour, lw=2)[0])
            self.achieved.append(ax.plot([], [], "--", color=colour, lw=1.2)[0])
            self.ridges.append(ax.plot([], [], "o", color=colour, ms=5)[0])
            self.ridge_labels.append(ax.annotate("", (1, 1), textcoords="offset points",
                                                 xytext=RIDGE_SIDES[0][0], ha=RIDGE_SIDES[0][1],
                                                 va=RIDGE_SIDES[0][2], fontsize=8, color=colour))
            self.points.append(ax.plot([], [], "s", color=colour, ms=9, mec="black", zorder=5)[0])
        self.cursor = ax.axvline(1, color="0.35", ls=":", lw=1, zorder=4)
        # Direct labels instead of a legend: a legend re-packs its boxes on every draw.
        self.note = ax.text(0.99, 0.02, "", transform=ax.transAxes, ha="right", va="bottom", fontsize=8,
                            color="0.3")
        self.chips = []
        moving(ax.figure, *self.points, self.cursor)

    def set_chips(self, chips, dtype, achieved=False):
        """Draw the roofs of ``chips`` (names or Accelerators) for ``dtype``; a chip without that
        dtype leaves its slot empty. Returns the chips as Accelerators."""
        chips = [get_accelerator(c) for c in chips]
        if len(chips) > len(self.roofs):
            raise ValueError(f"at most {len(self.roofs)} chips fit this figure, got {len(chips)}")
        tops = []
        firsts = [c.name.split()[0] for c in chips]
        for slot, roof in enumerate(self.roofs):
            hw = chips[slot] if slot < len(chips) else None
            has = hw is not None and dtype in hw.peak_flops_by_dtype
            if has:
                roof.set_data(self.x, attainable_flops(self.x, hw, dtype))
                roof.set_label(f"{hw.name} ({dtype})")
                ridge = hw.ridge_point(dtype)
                self.ridges[slot].set_data([ridge], [hw.peak_flops(dtype)])
                self.ridge_labels[slot].xy = (ridge, hw.peak_flops(dtype))
                short = firsts[slot] if firsts.count(firsts[slot]) == 1 else hw.name
                self.ridge_labels[slot].set_text(self.ridge_label.format(name=hw.name, short=short, ridge=ridge))
                tops.append(hw.peak_flops(dtype))
            else:
                roof.set_data([], [])
                roof.set_label(f"_{hw.name if hw else 'empty'}")  # leading _ hides it from the legend
                self.ridges[slot].set_data([], [])
                self.ridge_labels[slot].set_text("")
            real = hw.achieved() if has and achieved and hw.measured else None
            if real is not None and dtype in real.peak_flops_by_dtype:
                self.achieved[slot].set_data(self.x, attainable_flops(self.x, real, dtype))
                self.achieved[slot].set_label(f"{hw.name} measured ceilings")
            else:
                self.achieved[slot].set_data([], [])
                self.achieved[slot].set_label("_none")
            self.points[slot].set_data([], [])
        if not tops:
            raise ValueError(f"none of {', '.join(c.name for c in chips)} has a {dtype} peak")
        lowest_bw = min(c.mem_bandwidth for c in chips)
        self.ax.set_ylim(lowest_bw * self.x[0], 3 * max(tops))
        notes = [f"{hw.name}: no {dtype} peak" for hw in chips if dtype not in hw.peak_flops_by_dtype]
        if any(len(line.get_xdata()) for line in self.achieved):
            notes.append("dashed: published measured ceilings")
        self.note.set_text("\n".join(notes))
        self.chips = chips
        self.place_labels()
        invalidate_background(self.ax.figure)
        return chips

    def place_labels(self, also_avoid=()):
        """Put each ridge label where no roof (nor a line of ``also_avoid``) runs through it and no other label
        is (see ``place_beside``). Needs the axes where the layout puts them: an explorer calls it again once
        its layout is frozen. Returns whether a label moved (then the static layer must be redrawn)."""
        self.also_avoid = tuple(also_avoid) or getattr(self, "also_avoid", ())
        before = [(label.get_position(), label.get_ha(), label.get_va()) for label in self.ridge_labels]
        lines = [line for line in (*self.roofs, *self.achieved, *self.also_avoid) if len(line.get_xdata())]
        renderer = self.ax.figure._get_renderer()
        taken = [self.note.get_window_extent(renderer)] if self.note.get_text() else []
        legend = self.ax.get_legend()
        if legend is not None:
            taken.append(legend.get_window_extent(renderer))
        for label in self.ridge_labels:
            if label.get_text():
                taken.append(place_beside(label, lines, taken, RIDGE_SIDES))
        return before != [(label.get_position(), label.get_ha(), label.get_va()) for label in self.ridge_labels]

    def set_point(self, slot, intensity, throughput):
        """Put slot's marker at (intensity, throughput); ``throughput=None`` hides it."""
        if throughput is None:
            self.points[slot].set_data([], [])
        else:
            self.points[slot].set_data([intensity], [throughput])

    def set_cursor(self, intensity):
        """Move the vertical cursor to ``intensity`` (FLOP/byte)."""
        self.cursor.set_xdata([intensity, intensity])


def chip_dtypes(*chips):
    """Dtypes that every one of ``chips`` has a peak for, in the first chip's order."""
    chips = [get_accelerator(c) for c in chips]
    return [d for d in chips[0].dtypes if all(d in c.peak_flops_by_dtype for c in chips[1:])]


class RooflineExplorer(Explorer):
    """Move an operating point's intensity and watch where it meets each chip's roof.

    Controls: intensity (log slider, FLOP/byte), two chips from data/, a dtype both
    have, and whether to draw the published measured ("achieved") ceilings.

    Taught in chapter 02 (notebooks/02_roofline_model.ipynb).
    """

    def __init__(self, chip_a="A100", chip_b="H200", dtype="bf16", intensity=50.0, achieved=True):
        names = list_accelerators()
        chip_a, chip_b = get_accelerator(chip_a).name, get_accelerator(chip_b).name
        if dtype not in chip_dtypes(chip_a, chip_b):
            raise ValueError(f"{chip_a} and {chip_b} do not both have a {dtype} peak; "
                             f"common dtypes: {', '.join(chip_dtypes(chip_a, chip_b))}")
        controls = {
            "intensity": log_slider("intensity (FLOP/B)", INTENSITY_RANGE[0], INTENSITY_RANGE[1], intensity),
            "chip_a": ipywidgets.Dropdown(options=names, value=chip_a, description="chip A"),
            "chip_b": ipywidgets.Dropdown(options=names, value=chip_b, description="chip B"),
            "dtype": ipywidgets.Dropdown(options=chip_dtypes(chip_a, chip_b), value=dtype, description="dtype"),
            "achieved": ipywidgets.Checkbox(value=achieved, description="measured ceilings"),
        }
        self._drawn = None  # (chips, dtype, achieved) the roofs currently show
        super().__init__(controls)
        for name in ("chip_a", "chip_b"):  # keep the dtype list to what both chips have
            controls[name].observe(self._refresh_dtypes, names="value")

    def _refresh_dtypes(self, *_):
        options = chip_dtypes(self.controls["chip_a"].value, self.controls["chip_b"].value)
        dtype = self.controls["dtype"]
        keep = dtype.value if dtype.value in options else ("bf16" if "bf16" in options else options[0])
        with dtype.hold_trait_notifications():
            dtype.options = options
            dtype.value = keep

    def build(self):
        """One panel: two chips' roofs and the operating point."""
        ax = self.fig.add_subplot()
        ax.set_title("attainable = min(peak, bandwidth x intensity)", fontsize=10)
        self.roof = RoofAxes(ax, 2)

    def laid_out(self):
        """Place the ridge labels clear of the roofs."""
        self.roof.place_labels()

    def update(self, intensity, chip_a, chip_b, dtype, achieved=True):
        """Put the point at ``intensity`` (FLOP/byte) on ``chip_a``'s and ``chip_b``'s ``dtype`` roofs (with their
        measured ceilings where ``achieved``); return the readout."""
        intensity = float(intensity)
        if not (np.isfinite(intensity) and intensity > 0):
            raise ValueError(f"intensity must be a finite number > 0 FLOP/byte, got {intensity!r}")
        chips = [get_accelerator(chip_a), get_accelerator(chip_b)]
        for hw in chips:
            hw.peak_flops(dtype)  # ValueError naming the chip's dtypes if it has none for dtype
        key = (tuple(c.name for c in chips), dtype, bool(achieved))
        if key != self._drawn:  # only a change of chip or dtype redraws the roofs
            self.roof.set_chips(chips, dtype, achieved)
            self._drawn = key
        self.roof.set_cursor(intensity)
        readout = {"intensity": eng(intensity, "FLOP/B")}
        for slot, hw in enumerate(chips):
            flops = float(attainable_flops(intensity, hw, dtype))
            self.roof.set_point(slot, intensity, flops)
            readout[hw.name] = (f"{eng(flops, 'FLOP/s')} ({flops / hw.peak_flops(dtype):.0%} of peak), "
                                f"{bound_at(intensity, hw, dtype)}-bound, ridge {hw.ridge_point(dtype):.0f} FLOP/B")
            if achieved and hw.measured and dtype in hw.achieved().peak_flops_by_dtype:
                real = hw.achieved()
                readout[f"{hw.name} measured"] = eng(float(attainable_flops(intensity, real, dtype)), "FLOP/s")
        return readout


__all__ = ["chip_dtypes", "COLOURS", "INTENSITY_RANGE", "RoofAxes", "RooflineExplorer"]
