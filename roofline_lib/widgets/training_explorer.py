"""Explorer: memory per chip and time per step of a training run as TP, PP, CP, DP, ZeRO stage, recompute and
micro-batch move, on the chip the learner picks.

Controls: a dense model, a chip with a default topology (``training.step.TOPOLOGY_FOR_CHIP``), the chip count,
the sequence length, the global batch in tokens (about 4M, 8M or 16M: ``global_batch = tokens // seq_len``
sequences), tp, pp, cp, micro-batch, ZeRO stage and recompute; dp is what is left, n_chips / (tp pp cp). Top: the
bytes one chip holds (``training.memory``; the logits count only without a pipeline) against its memory. Bottom:
the terms of one step on one chip, seconds, nothing overlapped that the model does not overlap
(``training.train_step``). A layout that does not divide draws nothing new; the readout says why.
"""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.ticker import EngFormatter

from ..specs.hardware import get_accelerator
from ..specs.models import get_model, list_models
from ..training.step import TOPOLOGY_FOR_CHIP, train_step
from .base import Explorer, eng, invalidate_background, moving
from .controls import int_log_slider

MEMORY = ("weights", "gradients", "optimizer states", "activations", "logits (pp = 1 only)")
TERMS = ("compute", "pipeline bubble", "tensor parallel", "context parallel", "pipeline sends", "data parallel",
         "optimizer")
BATCH_TOKENS = {"4M tokens": 2**22, "8M tokens": 2**23, "16M tokens": 2**24}


def dense_models():
    """Models with step shapes and no mixture of experts (what the training step covers)."""
    return [n for n in list_models(with_steps=True) if get_model(n).moe is None]


def stacked_bar(ax, names, unit, first_color=0):
    """One horizontal bar of ``len(names)`` segments (widths set later), on an axis of its own in ``unit``."""
    bars = ax.barh([0] * len(names), [0] * len(names), height=0.6, label=names, zorder=3,
                   color=[f"C{first_color + i}" for i in range(len(names))])
    ax.set_ylim(-0.5, 0.5)
    ax.set_yticks([])
    ax.xaxis.set_major_formatter(EngFormatter(unit=unit))
    ax.tick_params(labelsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.spines["left"].set_visible(False)  # the bars start there and are drawn over the static layer
    return bars


def set_segments(bars, values):
    """Lay the segments of a ``stacked_bar`` end to end at widths ``values``."""
    left = 0.0
    for bar, value in zip(bars, values, strict=True):
        bar.set_x(left)
        bar.set_width(float(value))
        left += float(value)


def nice_end(x):
    """The smallest 1, 1.5, 2, 3, 4, 5, 6 or 8 x 10^k above 1.05 x: an axis end that stays put while the bars
    move a little."""
    decade = 10.0 ** np.floor(np.log10(1.05 * x))
    return float(next(m * decade for m in (1, 1.5, 2, 3, 4, 5, 6, 8, 10) if m * decade >= 1.05 * x))


def toggles(description, options, value, button="44px"):
    """A row of toggle buttons with a description and a button width."""
    return ipywidgets.ToggleButtons(options=options, value=value, description=description,
                                    style={"description_width": "initial", "button_width": button})


class TrainingExplorer(Explorer):
    """Chapter 13's explorer: one training step's terms on n chips, for a model, a chip, a global batch and a parallel
    layout (tp, pp, cp, ZeRO stage, recomputation).

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""

    def __init__(self, model="Llama-3.1-70B", chip="H100 SXM5", n_chips=1024, seq_len=2**13, batch_tokens=2**24,
                 tp=8, pp=4, cp=1, micro_batch=1, zero_stage=1, recompute="selective"):
        dropdown = dict(style={"description_width": "initial"}, layout=ipywidgets.Layout(width="270px"))
        controls = {
            "model": ipywidgets.Dropdown(options=dense_models(), value=get_model(model).name, description="model",
                                         **dropdown),
            "chip": ipywidgets.Dropdown(options=list(TOPOLOGY_FOR_CHIP), value=get_accelerator(chip).name,
                                        description="chip", **dropdown),
            "batch_tokens": ipywidgets.Dropdown(options=list(BATCH_TOKENS.items()), value=batch_tokens,
                                                description="global batch", **dropdown),
            "n_chips": int_log_slider("chips", 8, 16384, n_chips, per_octave=1),  # the main slider: first
            "seq_len": int_log_slider("sequence (tokens)", 2048, 131072, seq_len, per_octave=1),
            "tp": toggles("tp", [1, 2, 4, 8], tp),
            "pp": toggles("pp", [1, 2, 4, 8, 16, 32], pp),
            "cp": toggles("cp", [1, 2, 4, 8], cp),
            "micro_batch": toggles("micro-batch", [1, 2, 4, 8], micro_batch),
            "zero_stage": toggles("ZeRO stage", [0, 1, 2, 3], zero_stage),
            "recompute": toggles("recompute", ["none", "selective", "full"], recompute, button="80px"),
        }
        super().__init__(controls, figsize=(8, 3.6))

    def build(self):
        """Two panels of stacked bars: memory per chip against the chip's capacity, and the step's terms."""
        self.ax_mem, self.ax_time = self.fig.subplots(2, 1)
        self.bars = {}
        for ax, names, unit in ((self.ax_mem, MEMORY, "B"), (self.ax_time, TERMS, "s")):
            self.bars[unit] = stacked_bar(ax, names, unit)
        self.capacity = self.ax_mem.axvline(1, color="k", ls="--", lw=1.5, zorder=5, label="chip memory")
        for ax in (self.ax_mem, self.ax_time):
            ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
            ax.set_title(" ", fontsize=9)  # room for the moving title
        moving(self.fig, *self.bars["B"], *self.bars["s"], self.capacity, self.ax_mem.title, self.ax_time.title)
        self._static = None

    def laid_out(self):
        """Put the titles back at the top edge of their axes (the frozen layout placed them while they were hidden)."""
        # freeze_layout pins each title where a draw put it, but that draw hides the moving artists, titles
        # included, and a hidden title is placed far above its axes: back to the top edge, where update() puts it
        for ax in (self.ax_mem, self.ax_time):
            ax.title.set_y(1.0)

    def update(self, model, chip, n_chips, seq_len, batch_tokens, tp, pp, cp, micro_batch, zero_stage, recompute):
        """One training step of the chosen model, chip, chips, sequence, global batch and layout: move the bars, return
        the readout (a ValueError for a layout that does not divide)."""
        hw, n_chips, seq_len = get_accelerator(chip), int(n_chips), int(seq_len)
        global_batch = int(batch_tokens) // seq_len
        try:
            st = train_step(model, hw, n_chips=n_chips, seq_len=seq_len, global_batch=global_batch,
                            micro_batch=micro_batch, tp=tp, pp=pp, cp=cp, zero_stage=zero_stage, recompute=recompute)
        except ValueError as exc:  # the figure keeps the last layout that divides
            return {"layout does not divide": str(exc),
                    "what would": _what_would(n_chips, global_batch, micro_batch, tp * pp * cp)}
        mem, cap = st.memory, hw.mem_capacity
        sizes = {"B": [mem.weights, mem.grads, mem.optimizer, mem.activations, mem.logits if pp == 1 else 0.0],
                 "s": [st.terms[t] for t in TERMS]}
        for unit, values in sizes.items():
            set_segments(self.bars[unit], values)
        self.capacity.set_xdata([cap, cap])
        ends = (nice_end(max(float(mem.total), cap)), nice_end(float(st.step_time_s)))
        if ends != self._static:
            self.ax_mem.set_xlim(0, ends[0])
            self.ax_time.set_xlim(0, ends[1])
            self._static = ends
            invalidate_background(self.fig)
        fits = "fits" if st.fits else "does NOT fit"
        dp = st.config["dp"]
        self.ax_mem.set_title(f"memory per chip: {eng(mem.total, 'B')} of {eng(cap, 'B')} on {hw.name} ({fits})",
                              fontsize=9)
        self.ax_time.set_title(f"time per step: {eng(st.step_time_s, 's')} on {n_chips} chips "
                               f"(tp {tp} x pp {pp} x cp {cp} x dp {dp})", fontsize=9)
        step = float(st.step_time_s)
        return {
            "model": f"{get_model(model).name} on {hw.name}",
            "dp (data parallel)": f"{dp} = {n_chips} chips / (tp {tp} x pp {pp} x cp {cp})",
            "micro-batches per step": f"{global_batch // (dp * micro_batch)} per replica = {global_batch} sequences "
                                      f"of {seq_len} tokens / (dp {dp} x micro-batch {micro_batch})",
            "memory per chip": f"{eng(mem.total, 'B')} of {eng(cap, 'B')}: {fits}",
            "step time": eng(step, "s"),
            "tokens/s per chip": eng(st.tokens_per_s_per_chip, "token/s"),
            "MFU (causal count, dense peak)": f"{float(st.mfu):.1%}",
            "largest term": f"{st.binding} ({float(st.terms[st.binding]) / step:.0%} of the step)",
        }


def _what_would(n_chips, global_batch, micro_batch, model_parallel):
    """A plain hint for a layout that does not divide (``train_step``'s message says which rule broke)."""
    if n_chips % model_parallel:
        return f"a chip count that is a multiple of tp x pp x cp = {model_parallel}, or a smaller tp x pp x cp"
    dp = n_chips // model_parallel
    if global_batch % (dp * micro_batch) == 0:
        return "a tp that divides the heads, a pp of at most the layers"
    fitting = [str(b) for b in (1, 2, 4, 8) if global_batch % (dp * b) == 0]
    if fitting:
        return f"micro-batch {' or '.join(fitting)} (dp {dp} x micro-batch must divide {global_batch} sequences)"
    return (f"dp {dp} is more replicas than the {global_batch} sequences of the batch: fewer chips, a larger "
            f"tp x pp x cp, a larger global batch or shorter sequences")


__all__ = ["BATCH_TOKENS", "MEMORY", "TERMS", "TrainingExplorer", "dense_models", "nice_end"]
