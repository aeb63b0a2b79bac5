"""LLM decode explorer: model, chip, batch, context, weight and KV dtype -> where one decode step
sits on the chip's roofline, where its time goes, and whether it fits in memory."""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.ticker import EngFormatter

from .. import llm
from ..plotting.rooflines import format_axes, roof_curve
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .base import Explorer, eng, invalidate_background, moving
from .controls import int_log_slider, model_and_chip, plain

DTYPES = ("bf16", "fp8", "int8", "int4")


class LLMExplorer(Explorer):
    """Left: the chip's bf16 roofline with the decode step (filled) and prefill of the same context
    (open marker). Right: the decode step's time by category, each part at its own roofline bound.

    Taught in chapter 05 (notebooks/05_llm_inference.ipynb)."""

    def __init__(self, model="Llama-3-8B", chip="H200 SXM", batch=8, context=4096, weight_dtype="bf16",
                 kv_dtype="bf16", chips=("A100 80GB SXM4", "H100 SXM", "H200 SXM", "B200", "MI300X")):
        dropdown = dict(style={"description_width": "initial"}, layout=ipywidgets.Layout(width="260px"))
        controls = {
            **model_and_chip(model, chip, chips, width="260px"),
            "batch": int_log_slider("batch", 1, 1024, batch, per_octave=2),  # whole sequences
            "context": int_log_slider("context", 128, 131072, context, per_octave=2),
            "weight_dtype": ipywidgets.Dropdown(options=DTYPES, value=weight_dtype, description="weights",
                                                **dropdown),
            "kv_dtype": ipywidgets.Dropdown(options=DTYPES[:3], value=kv_dtype, description="KV cache", **dropdown),
        }
        super().__init__(controls, figsize=(8, 3.6))

    def build(self):
        """Two panels: the decode step and the prefill on the chip's roofline, and the decode step's time by
        category."""
        self.ax_roof, self.ax_bar = self.fig.subplots(1, 2, width_ratios=(1.1, 1))
        format_axes(self.ax_roof)
        self.roof, = self.ax_roof.plot([], [], lw=2, color="C0")
        self.decode_pt, = self.ax_roof.plot([], [], "o", ms=9, color="C3", label="decode step")
        self.prefill_pt, = self.ax_roof.plot([], [], "o", ms=9, mfc="none", color="C2", label="prefill")
        self.ax_roof.set_xlim(0.3, 3e4)
        self.ax_roof.set_ylim(1e11, 1e16)
        self.ax_roof.legend(loc="lower right", fontsize=8)
        labels = list(llm.CATEGORIES)
        self.bars = self.ax_bar.barh(labels, np.zeros(len(labels)), color="C1")
        self.ax_bar.invert_yaxis()
        self.ax_bar.xaxis.set_major_formatter(EngFormatter(unit="s"))
        self.ax_bar.set_xlabel("decode-step time by category\n(each part at its own bound)")
        self.ax_bar.grid(True, axis="x", alpha=0.3)
        self.ax_bar.set_axisbelow(True)
        self.ax_bar.spines["left"].set_visible(False)  # the bars start there and are drawn over the static layer
        # Batch and context move only the markers and bars; the roof, title and bar axis are redrawn
        # (background invalidated) only when they change.
        moving(self.fig, self.decode_pt, self.prefill_pt, *self.bars)
        self._static = None

    def update(self, model, chip, batch, context, weight_dtype, kv_dtype):
        """``model`` on ``chip`` at ``batch`` and ``context`` in the given weight and KV formats: move the points and
        bars, return the readout."""
        hw = get_accelerator(chip)
        batch, context = int(round(batch)), int(round(context))
        step = llm.decode_step(model, batch, context, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
        pre = llm.prefill(model, batch, context, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
        est, est_pre = estimate(step, hw), estimate(pre, hw)
        times = llm.time_by_category(step, hw)
        # the bar axis ends at the next power of two, so small moves keep the static layer
        bar_end = 2.0 ** np.ceil(np.log2(1.1 * max(float(v) for v in times.values())))
        static = (get_model(model).name, hw.name, bar_end)
        if static != self._static:
            x, y = roof_curve(hw, "bf16", (0.3, 3e4))
            self.roof.set_data(x, y)
            self.roof.set_label(hw.name)
            self.ax_roof.set_title(f"{get_model(model).name} on {hw.name}", fontsize=10)
            self.ax_bar.set_xlim(0, bar_end)
            self._static = static
            invalidate_background(self.fig)
        self.decode_pt.set_data([step.intensity], [est.achieved_flops])
        self.prefill_pt.set_data([pre.intensity], [est_pre.achieved_flops])
        for bar, label in zip(self.bars, llm.CATEGORIES, strict=True):
            bar.set_width(float(times[label]))
        need = llm.memory_required(model, batch, context, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
        fits = bool(need <= hw.mem_capacity)
        return {
            "per-token latency (decode step, lower bound)": eng(est.lower, "s"),
            "decode throughput": eng(batch / est.lower, "token/s"),
            "decode intensity / ridge": f"{plain(step.intensity, 3)} / {plain(hw.ridge_point('bf16'), 3)} FLOP/B "
                                        f"({est.bound}-bound)",
            "prefill of the context": f"{eng(est_pre.lower, 's')} ({est_pre.bound}-bound)",
            "memory: weights + KV cache": f"{eng(need, 'B')} of {eng(hw.mem_capacity, 'B')} (datasheet: "
                                          f"'{hw.mem_capacity_label}') {'fits' if fits else 'does NOT fit'}",
            "largest batch at this context": str(llm.max_batch(model, hw, context, weight_dtype=weight_dtype,
                                                               kv_dtype=kv_dtype)),
        }


__all__ = ["DTYPES", "LLMExplorer"]
