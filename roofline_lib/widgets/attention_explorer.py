"""Attention (score + value matmuls) on two chips' rooflines: prefill crosses the ridge, decode does not."""

from __future__ import annotations

import ipywidgets
import numpy as np

from ..dtypes import bytes_per_element
from ..hardware import get_accelerator
from ..roofline import attainable_flops, estimate
from ..workloads import attention
from .base import Explorer, eng, log_slider
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
    Left: the operating point on each chip's roof. Right: intensity against length
    for prefill (x = T) and decode (x = S) at this G, with each chip's ridge.
    """

    def __init__(self, chips=("A100", "H200"), heads=32, head_dim=128, dtype="bf16",
                 mode=MODES[0], T=512, S=4096, G=4, batch=1, causal=False):
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
            "T": log_slider("T (query length)", *LENGTH_RANGE, T, base=2, step=0.25, readout_format=".0f"),
            "S": log_slider("S (kv length)", *LENGTH_RANGE, S, base=2, step=0.25, readout_format=".0f"),
            "G": ipywidgets.SelectionSlider(options=group_sizes(self.heads), value=G, description="G = H/H_kv"),
            "batch": log_slider("batch", *BATCH_RANGE, batch, base=2, step=1, readout_format=".0f"),
            "mode": ipywidgets.ToggleButtons(options=MODES, value=mode),
            "causal": ipywidgets.Checkbox(value=causal, description="causal mask"),
        }
        super().__init__(controls, figsize=(10, 4.5))

    def build(self):
        left, right = self.fig.subplots(1, 2)
        left.set_title("operating point on the roofline", fontsize=10)
        self.roof = RoofAxes(left, len(self.chips))
        self.roof.set_chips(self.chips, self.dtype)
        right.set_xscale("log")
        right.set_yscale("log")
        right.set_xlim(*LENGTH_RANGE)
        right.set_xlabel("length: T for prefill, S for decode")
        right.set_ylabel("intensity (FLOP/byte)")
        right.grid(True, alpha=0.3)
        right.set_title("intensity against length", fontsize=10)
        self.prefill_curve = right.plot([], [], color="black", lw=1.5, label="prefill (T = S)")[0]
        self.decode_curve = right.plot([], [], color="black", ls="--", lw=1.5, label="decode (T = 1)")[0]
        for slot, hw in enumerate(self.chips):
            right.axhline(hw.ridge_point(self.dtype), color=COLOURS[slot], lw=1, label=f"{hw.name} ridge")
        self.marker = right.plot([], [], "o", color="black", ms=8, zorder=5)[0]
        right.set_ylim(0.5, 1e5)
        right.legend(loc="upper left", fontsize=8)
        self.right = right

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
        T, S, batch = _whole("T", T), _whole("S", S), _whole("batch", batch)
        G = _whole("G", G)
        if G not in group_sizes(self.heads):
            raise ValueError(f"G must divide heads={self.heads}; possible: {group_sizes(self.heads)}")
        T, S = self.lengths_for(mode, T, S)
        w = self._workload(T, S, G, batch, causal)  # ValueError for causal with T > S
        intensity = float(w.intensity)
        key = (G, bool(causal))
        if key != self._curves_for:  # the curves depend on G and the mask only
            x = self.lengths
            self.prefill_curve.set_data(x, self._workload(x, x, G, 1, causal).intensity)
            self.decode_curve.set_data(x, self._workload(1, x, G, 1, causal).intensity)
            self._curves_for = key
        self.marker.set_data([T if mode != MODES[1] else S], [intensity])
        self.roof.set_cursor(intensity)
        kv_heads = self.heads // G
        readout = {
            "shape": f"B={batch}, H={self.heads}, H_kv={kv_heads} (G={G}), T={T}, S={S}, d={self.head_dim}"
                     + (", causal" if causal else ""),
            "FLOPs, bytes": f"{eng(float(w.flops), 'FLOP')}, {eng(float(w.bytes), 'B')}",
            "intensity": f"{intensity:.4g} FLOP/B ({self.dtype}) = {intensity * bytes_per_element(self.dtype):.4g} FLOP/element",
        }
        for slot, hw in enumerate(self.chips):
            est = estimate(w, hw)
            self.roof.set_point(slot, intensity, float(attainable_flops(intensity, hw, self.dtype)))
            readout[hw.name] = (f"{eng(float(est.lower), 's')}, {est.bound}-bound "
                                f"(ridge {hw.ridge_point(self.dtype):.0f} FLOP/B)")
        return readout
