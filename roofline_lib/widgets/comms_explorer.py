"""Explorer: when does tensor-parallel decode become communication-bound, and what does it cost?

Sliders: model, chip, link (NVLink or PCIe), batch, chip count and context. The figure shows the
per-chip terms of one decode step against batch (memory: 1/n of the weights and of the KV cache;
compute; communication: two all-reduces per layer), their sum (nothing overlapped) and their max
(everything overlapped), from ``parallel.tp_decode_step``. The batch axis ends at the largest
batch whose KV cache fits beside the weights (the bytes the driver reports), so every point drawn
is a configuration that runs.
"""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.ticker import EngFormatter, FuncFormatter

from ..multichip.parallel import tp_decode_step, tp_max_batch
from ..specs.hardware import get_accelerator, list_accelerators
from ..specs.models import get_model, list_models
from .base import Explorer, eng
from .controls import int_log_slider

POINTS = 120


def chips_with_links():
    """Chips that have both a chip-to-chip interconnect and a host link figure in data/."""
    return [n for n in list_accelerators()
            if get_accelerator(n).interconnect_bandwidth and get_accelerator(n).host_link_bandwidth]


def batch_axis(largest):
    """Whole batches from 1 to ``largest`` on a log scale (empty if nothing fits)."""
    if largest < 1:
        return np.array([], dtype=float)
    return np.unique(np.round(np.geomspace(1, largest, POINTS)))


class CommsExplorer(Explorer):
    """Chapter 09's explorer: one model's decode step on n chips with tensor parallelism, its compute, memory and
    communication times against the batch, for a chip and a link.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""

    def __init__(self, model="Llama-2-70B", chip="H100 SXM", link="nvlink", batch=16, n_chips=8, context=4096):
        dropdown = dict(style={"description_width": "initial"}, layout=ipywidgets.Layout(width="230px"))
        controls = {
            "model": ipywidgets.Dropdown(options=list_models(with_steps=True), value=get_model(model).name,
                                         description="model",
                                         **dropdown),
            "chip": ipywidgets.Dropdown(options=chips_with_links(), value=get_accelerator(chip).name,
                                        description="chip", **dropdown),
            "link": ipywidgets.Dropdown(options=[("NVLink", "nvlink"), ("PCIe", "pcie")], value=link,
                                        description="link", **dropdown),
            "batch": int_log_slider("batch", 1, 4096, batch, per_octave=2),
            "n_chips": ipywidgets.IntSlider(value=n_chips, min=1, max=16, description="chips",
                                            layout=ipywidgets.Layout(width="300px")),
            "context": int_log_slider("context", 128, 32768, context, per_octave=2),
        }
        super().__init__(controls, figsize=(8, 4.2))

    def build(self):
        """One panel: the decode step's compute, memory and communication times against the batch, log-log."""
        ax = self.ax = self.fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("batch (sequences, one new token each), up to what fits")
        ax.set_ylabel("time per decode step")
        ax.yaxis.set_major_formatter(EngFormatter(unit="s"))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # batch 1, 10, 100: whole numbers
        ax.grid(True, alpha=0.3)
        styles = (("t_mem", "memory (weights + KV / chips)", {}), ("t_math", "compute", {}),
                  ("t_comm", "communication (2 all-reduces / layer)", {}),
                  ("sequential", "sum: nothing overlapped", {"color": "k", "ls": "--", "lw": 1}),
                  ("overlapped", "max: all overlapped", {"color": "0.5", "lw": 4, "alpha": 0.35}))
        self.lines = {k: ax.plot([], [], label=label, **kw)[0] for k, label, kw in styles}
        self.marker = ax.axvline(1, color="0.3", ls=":")
        ax.legend(loc="best", fontsize=8)  # where the curves leave room (re-placed only when they change)

    def update(self, model, chip, link, batch, n_chips, context):
        """``model`` on ``n_chips`` x ``chip`` over ``link`` at ``context``: redraw the curves up to the largest batch
        that fits, mark ``batch``, return the readout."""
        batch, context = int(round(batch)), int(round(context))
        largest = tp_max_batch(model, chip, context, n_chips)
        batches = batch_axis(largest)
        name = get_model(model).name
        if batches.size:
            curves = tp_decode_step(model, chip, batches, context, n_chips, link)
            values = {k: np.broadcast_to(getattr(curves, k), batches.shape) for k in self.lines}
            for key, line in self.lines.items():
                line.set_data(batches, values[key])
            low = min(float(np.min(v)) for v in values.values() if np.any(v > 0))
            high = max(float(np.max(v)) for v in values.values())
            self.ax.set_xlim(1, max(2.0, batches[-1]))
            self.ax.set_ylim(low / 2, high * 2)
        else:
            for line in self.lines.values():
                line.set_data([], [])
        self.marker.set_xdata([batch, batch])
        self.ax.set_title(f"{name} bf16 decode, context {context}, {n_chips} x {get_accelerator(chip).name}, "
                          f"{link}", fontsize=10)
        now = tp_decode_step(model, chip, batch, context, n_chips, link)
        fits = bool(now.fits)
        return {
            "memory / compute / communication": " / ".join(eng(t, "s") for t in (now.t_mem, now.t_math, now.t_comm)),
            "largest term": now.bound,
            "step if overlapped (max) / not overlapped (sum)": f"{eng(now.overlapped, 's')} / "
                                                                f"{eng(now.sequential, 's')}",
            "communication share of the sum": f"{float(now.comm_share):.0%}",
            "memory per chip": f"{eng(now.memory_per_chip, 'B')} of {eng(now.usable_memory, 'B')}: "
                               f"{'fits' if fits else 'does NOT fit'} (largest batch {largest})",
        }


__all__ = ["batch_axis", "chips_with_links", "CommsExplorer", "POINTS"]
