"""Explorer: one decode step of an expert-parallel pool (DeepSeek-V3 by default) as the batch per chip, the EP degree,
the load imbalance and the chip move: where the step's time goes, and the memory one chip holds.

Controls: the sequences each chip decodes (the main slider), the EP degree (the pool's chips; 72 and 144 with 32
redundant experts, as EPLB places them), the imbalance (max over mean: the busiest chip's tokens over the mean), the
chip (each with its 8-GPU board's NIC) and two-batch overlap. Top: the bytes one chip holds against its memory.
Bottom: its attention side, its experts and its all-to-alls (``multichip.ep_serving_step``); the dashed line is the
step (the larger of compute and communication with two-batch overlap, their sum without).
"""

from __future__ import annotations

import ipywidgets

from ..llm.experts import experts_touched
from ..multichip.expert_serving import ep_serving_step
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .base import Explorer, eng, invalidate_background, moving
from .controls import int_log_slider
from .training_explorer import nice_end, set_segments, stacked_bar, toggles

CHIPS = ("H800 SXM5", "H100 SXM5", "H200 SXM", "B200")
EP_DEGREES = (8, 16, 32, 64, 72, 144, 256)
TERMS = ("attention side", "routed experts", "all-to-all")
MEMORY = ("weights held", "KV cache")


def redundant_for(n_chips, num_experts=256):
    """Redundant experts that make the expert slots divide evenly: 0 when n divides E, else the fewest that do
    (72 and 144 chips: 32, DeepSeek's and SGLang's choice)."""
    return (-num_experts) % n_chips


class MoEExplorer(Explorer):
    """Chapter 14's explorer: an expert-parallel decode step, per chip, as batch, EP degree, imbalance and chip move.

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""

    def __init__(self, model="DeepSeek-V3", batch_per_chip=256, ep=72, imbalance=1.0, chip="H100 SXM5", context=2000,
                 two_batch_overlap=True):
        self.model, self.context = model, context
        controls = {
            "batch_per_chip": int_log_slider("sequences per chip", 1, 1024, batch_per_chip, per_octave=2),
            "ep": toggles("EP", list(EP_DEGREES), ep, button="38px"),
            "imbalance": ipywidgets.FloatSlider(value=imbalance, min=1.0, max=2.0, step=0.05, description="imbalance",
                                                style={"description_width": "initial"},
                                                layout=ipywidgets.Layout(width="320px")),
            "chip": ipywidgets.Dropdown(options=list(CHIPS), value=get_accelerator(chip).name, description="chip",
                                        style={"description_width": "initial"},
                                        layout=ipywidgets.Layout(width="200px")),
            "two_batch_overlap": ipywidgets.Checkbox(value=two_batch_overlap, description="two-batch overlap"),
        }
        super().__init__(controls, figsize=(8, 3.6))

    def build(self):
        """Two panels of stacked bars (memory per chip, time per step) and the lines of capacity and step."""
        self.ax_mem, self.ax_time = self.fig.subplots(2, 1)
        self.bars = {}
        for ax, names, unit, first in ((self.ax_mem, MEMORY, "B", 0), (self.ax_time, TERMS, "s", 2)):
            self.bars[unit] = stacked_bar(ax, names, unit, first)
        self.capacity = self.ax_mem.axvline(1, color="k", ls="--", lw=1.5, zorder=5, label="chip memory")
        self.step = self.ax_time.axvline(1, color="k", ls="--", lw=1.5, zorder=5, label="step")
        for ax in (self.ax_mem, self.ax_time):
            ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
            ax.set_title(" ", fontsize=9)
        moving(self.fig, *self.bars["B"], *self.bars["s"], self.capacity, self.step, self.ax_mem.title,
               self.ax_time.title)
        self._ends = None

    def laid_out(self):
        """Titles back at the top edge of their axes (see TrainingExplorer.laid_out)."""
        for ax in (self.ax_mem, self.ax_time):
            ax.title.set_y(1.0)

    def update(self, batch_per_chip, ep, imbalance, chip, two_batch_overlap):
        """One decode step at these settings: move the bars and lines, return the readout."""
        hw, b, n = get_accelerator(chip), int(batch_per_chip), int(ep)
        st = ep_serving_step(self.model, hw, b, self.context, n, imbalance=imbalance,
                             redundant_experts=redundant_for(n), two_batch_overlap=two_batch_overlap)
        kv = get_model(self.model).kv_bytes_per_position("bf16") * (self.context + 1) * b  # its own sequences
        sizes = {"B": [st.memory_per_chip - kv, kv], "s": [st.t_attention, st.t_experts, st.t_comm]}
        for unit, values in sizes.items():
            set_segments(self.bars[unit], values)
        self.capacity.set_xdata([hw.mem_capacity] * 2)
        self.step.set_xdata([st.time] * 2)
        ends = (nice_end(max(st.memory_per_chip, hw.mem_capacity)), nice_end(st.t_compute + st.t_comm))
        if ends != self._ends:
            self.ax_mem.set_xlim(0, ends[0])
            self.ax_time.set_xlim(0, ends[1])
            self._ends = ends
            invalidate_background(self.fig)
        fits = "fits" if st.fits else "does NOT fit"
        self.ax_mem.set_title(f"memory per chip: {eng(st.memory_per_chip, 'B')} of {eng(hw.mem_capacity, 'B')} "
                              f"({fits})", fontsize=9)
        self.ax_time.set_title(f"decode step: {eng(st.time, 's')} on EP{n} x {hw.name}", fontsize=9)
        largest = max(zip(sizes["s"], TERMS, strict=True))[1]
        pool_tokens = b * n
        return {
            "step time": eng(st.time, "s"),
            "output tokens/s per node (8 chips)": eng(8 * st.tokens_per_s_per_chip, "token/s"),
            "largest term": largest,
            "experts touched per layer (pool)": f"{float(experts_touched(self.model, pool_tokens)):.1f} of 256 by "
                                                f"{pool_tokens} tokens",
            "tokens per expert (mean)": f"{pool_tokens * 8 / 256:.1f}",
            "memory per chip": f"{eng(st.memory_per_chip, 'B')}: {fits}",
        }


__all__ = ["CHIPS", "EP_DEGREES", "MoEExplorer", "redundant_for"]
