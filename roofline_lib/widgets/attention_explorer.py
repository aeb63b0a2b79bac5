"""Attention (score + value matmuls) on two chips' rooflines: prefill crosses the ridge, decode does not.

Left: intensity against length (prefill against T, decode against S) with each chip's ridge as a level.
Right: the same operating point on both chips' rooflines (attainable FLOP/s against intensity), as the
matmul explorer shows it."""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.ticker import EngFormatter

from ..core.dtypes import bytes_per_element
from ..roofline.bounds import attainable_flops, estimate
from ..roofline.workloads import attention
from ..specs.hardware import get_accelerator
from .base import Explorer, eng, invalidate_background, moving
from .controls import int_log_slider, plain
from .roofline_explorer import COLOURS, RoofAxes

MODES = ("prefill (T = S)", "decode (T = 1)", "T and S free")
LENGTH_RANGE = (1, 131072)
BATCH_RANGE = (1, 256)


def group_sizes(heads):
    """The group sizes G = H / H_kv that ``heads`` query heads allow (H_kv must divide H)."""
    return [g for g in range(1, heads + 1) if heads % g == 0]


def _whole(name, value, low=1):
    value = float(value)
    if not (np.isfinite(value) and value >= low - 0.5):
        raise ValueError(f"{name} must be a finite number >= {low}, got {value!r}")
    return int(round(value))


class AttentionExplorer(Explorer):
    """Attention of one layer: query length T, kv length S, group size G, batch.

    ``mode`` ties the lengths: prefill sets S = T (the prompt attends to itself),
    decode sets T = 1 (one new token against a cache of S), free uses both sliders.
    The left panel plots intensity against length for prefill (x = T) and decode (x = S)
    at this G, with each chip's ridge point as a level; the right panel puts the current
    point on each chip's roofline (attainable FLOP/s against intensity). The readout gives
    the time and the bound on each chip.

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb).
    """

    def __init__(self, chips=("A100", "H200"), heads=32, head_dim=128, dtype="bf16",
                 mode=MODES[0], T=128, S=4096, G=4, batch=1, causal=False):
        self.chips = [get_accelerator(c) for c in chips]
        for hw in self.chips:
            hw.peak_flops(dtype)
        self.heads, self.head_dim, self.dtype = _whole("heads", heads), _whole("head_dim", head_dim), dtype
        if G not in group_sizes(self.heads):
            raise ValueError(f"G must divide heads={self.heads}; possible: {group_sizes(self.heads)}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.lengths = np.geomspace(*LENGTH_RANGE, 120)
        self._curves_for = None
        controls = {
            "T": int_log_slider("T (query length)", *LENGTH_RANGE, T),
            "S": int_log_slider("S (kv length)", *LENGTH_RANGE, S),
            "G": ipywidgets.SelectionSlider(options=group_sizes(self.heads), value=G, description="G = H/H_kv"),
            "batch": int_log_slider("batch", *BATCH_RANGE, batch, per_octave=1),
            "mode": ipywidgets.ToggleButtons(options=MODES, value=mode),
            "causal": ipywidgets.Checkbox(value=causal, description="causal mask"),
        }
        super().__init__(controls, figsize=(8, 3.6))

    def build(self):
        """Two panels: intensity against length with each chip's ridge as a level, and the point on both roofs."""
        # Left: intensity against length with each chip's ridge as a level (above a chip's line the
        # point is compute-bound there, below it memory-bound). Right: the point on both roofs.
        # Only the markers move with T, S and the batch; both panels' curves stay in the cached layer.
        ax, ax_roof = self.fig.subplots(1, 2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # "10 k" rather than mathtext 10^4: cheaper to draw
            axis.set_major_formatter(EngFormatter())
        ax.set_xlim(*LENGTH_RANGE)
        ax.set_ylim(0.5, 1e5)
        ax.set_xlabel("T (prefill) or S (decode)")
        ax.set_ylabel(f"intensity (FLOP/byte, {self.dtype})")
        ax.grid(True, alpha=0.3)
        ax.set_title(f"attention, H = {self.heads}, d = {self.head_dim}", fontsize=9)
        self.prefill_curve = ax.plot([], [], color="black", lw=1.5)[0]
        self.decode_curve = ax.plot([], [], color="black", ls="--", lw=1.5)[0]
        self.curve_note = ax.text(0.02, 0.97, "", transform=ax.transAxes, va="top", fontsize=8)
        top = max(hw.ridge_point(self.dtype) for hw in self.chips)
        for slot, hw in enumerate(self.chips):  # direct labels: a legend re-packs itself on every draw
            ridge = hw.ridge_point(self.dtype)
            ax.axhline(ridge, color=COLOURS[slot], lw=1.2)
            ax.annotate(f"{hw.name.split()[0]} ridge {ridge:.0f}", (LENGTH_RANGE[1], ridge),
                        ha="right", fontsize=8, va="bottom" if ridge == top else "top", color=COLOURS[slot],
                        textcoords="offset points", xytext=(-2, 2 if ridge == top else -2))
        self.marker = ax.plot([], [], "o", color="tab:red", ms=9, mec="black", zorder=5)[0]
        moving(self.fig, self.marker)
        self.ax = ax
        ax_roof.set_title(f"the same point on each roof ({self.dtype})", fontsize=9)
        self.roof = RoofAxes(ax_roof, len(self.chips))
        ax_roof.set_xlabel("intensity (FLOP/byte)")
        ax_roof.set_ylabel("attainable (FLOP/s)")
        self.roof.set_chips(self.chips, self.dtype)
        self.ax_roof = ax_roof

    def laid_out(self):
        """Place the ridge labels clear of the roofs."""
        self.roof.place_labels()

    def lengths_for(self, mode, T, S):
        """The (T, S) a mode implies from the slider values."""
        if mode == MODES[0]:
            return T, T
        if mode == MODES[1]:
            return 1, S
        if mode == MODES[2]:
            return T, S
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")

    def _workload(self, T, S, G, batch, causal):
        return attention(batch, self.heads, self.heads // G, T, S, self.head_dim, dtype=self.dtype, causal=causal)

    def update(self, T, S, G, batch, mode, causal=False):
        """Attention of ``batch`` sequences, ``T`` queries over ``S`` keys in groups of ``G`` query heads per KV head,
        for ``mode`` (prefill, decode, custom): move the points, return the readout."""
        T, S, batch = _whole("T", T), _whole("S", S), _whole("batch", batch)
        G = _whole("G", G)
        if G not in group_sizes(self.heads):
            raise ValueError(f"G must divide heads={self.heads}; possible: {group_sizes(self.heads)}")
        T, S = self.lengths_for(mode, T, S)
        w = self._workload(T, S, G, batch, causal)  # ValueError for causal with T > S
        intensity = float(w.intensity)
        key = (G, bool(causal))
        if key != self._curves_for:  # the curves depend on G and the mask only (not on batch)
            x = self.lengths
            self.prefill_curve.set_data(x, self._workload(x, x, G, 1, causal).intensity)
            self.decode_curve.set_data(x, self._workload(1, x, G, 1, causal).intensity)
            mask = ", causal" if causal else ""
            self.curve_note.set_text(f"G = {G}{mask}\nsolid: prefill, T = S\ndashed: decode, T = 1")
            self._curves_for = key
            invalidate_background(self.fig)
        self.marker.set_data([S if mode == MODES[1] else T], [intensity])
        self.roof.set_cursor(intensity)
        for slot, hw in enumerate(self.chips):
            self.roof.set_point(slot, intensity, float(attainable_flops(intensity, hw, self.dtype)))
        kv_heads = self.heads // G
        readout = {
            "shape": f"B={batch}, H={self.heads}, H_kv={kv_heads} (G={G}), T={T}, S={S}, d={self.head_dim}"
                     + (", causal" if causal else ""),
            "FLOPs, bytes": f"{eng(float(w.flops), 'FLOP')}, {eng(float(w.bytes), 'B')}",
            "intensity": f"{plain(intensity)} FLOP/B ({self.dtype}) = "
                         f"{plain(intensity * bytes_per_element(self.dtype))} FLOP/element",
        }
        for hw in self.chips:
            est = estimate(w, hw)
            readout[hw.name] = (f"{eng(float(est.lower), 's')}, {est.bound}-bound "
                                f"(ridge {hw.ridge_point(self.dtype):.0f} FLOP/B)")
        return readout


__all__ = ["AttentionExplorer", "BATCH_RANGE", "group_sizes", "LENGTH_RANGE", "MODES"]
