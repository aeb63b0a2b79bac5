"""Explorer: when does tensor-parallel decode of a 70B model become communication-bound?

Sliders: chip, link (chip-to-chip interconnect or PCIe), chip count, batch and the latency of
one ring step. The figure shows the three lower bounds of one decode step against batch size
(memory: each chip reads its share of the weights; compute; communication: two all-reduces per
layer), with a marker at the chosen batch.
"""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.ticker import EngFormatter

from ..comms import tp_decode_step
from ..hardware import get_accelerator, list_accelerators
from .base import Explorer, eng, log_slider

# Llama-2-70B, from meta-llama/Llama-2-70b-hf config.json (hidden_size, num_hidden_layers); ~69e9 parameters
LLAMA2_70B = {"n_params": 69e9, "hidden": 8192, "n_layers": 80}
BATCHES = np.geomspace(1, 4096, 200)


def chips_with_links():
    """Chips that have both a chip-to-chip interconnect and a host link figure in data/."""
    return [n for n in list_accelerators()
            if get_accelerator(n).interconnect_bandwidth and get_accelerator(n).host_link_bandwidth]


class CommsExplorer(Explorer):
    def __init__(self, chip="H100 SXM", link="interconnect", n_chips=8, batch=16, latency=1e-6, model=None):
        self.model = dict(model or LLAMA2_70B)
        controls = {
            "chip": ipywidgets.Dropdown(options=chips_with_links(), value=get_accelerator(chip).name,
                                        description="chip"),
            "link": ipywidgets.Dropdown(options=[("NVLink / interconnect", "interconnect"), ("PCIe", "pcie")],
                                        value=link, description="link"),
            "n_chips": ipywidgets.IntSlider(value=n_chips, min=2, max=16, description="chips"),
            "batch": log_slider("batch", 1, 4096, batch),
            "latency": log_slider("latency per ring step (s)", 1e-7, 1e-4, latency, readout_format=".1e"),
        }
        super().__init__(controls)

    def build(self):
        ax = self.ax = self.fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("batch (sequences, one new token each)")
        ax.set_ylabel("time per decode step")
        ax.yaxis.set_major_formatter(EngFormatter(unit="s"))
        ax.grid(True, alpha=0.3)
        self.lines = {k: ax.plot([], [], label=label)[0] for k, label in
                      (("t_mem", "memory (weights / chips)"), ("t_math", "compute"),
                       ("t_comm", "communication (2 all-reduces / layer)"))}
        self.marker = ax.axvline(1, color="0.3", ls=":")
        ax.legend(loc="upper left", fontsize=8)

    def times(self, chip, link, n_chips, batch, latency):
        hw = get_accelerator(chip)
        per_direction = (hw.interconnect_bandwidth if link == "interconnect" else hw.host_link_bandwidth) / 2
        return tp_decode_step(self.model["n_params"], self.model["hidden"], self.model["n_layers"], batch,
                              n_chips, hw.mem_bandwidth, hw.peak_flops("bf16"), per_direction, latency=latency)

    def update(self, chip, link, n_chips, batch, latency):
        curves = self.times(chip, link, n_chips, BATCHES, latency)
        for key, line in self.lines.items():
            line.set_data(BATCHES, curves[key])
        self.marker.set_xdata([batch, batch])
        low = min(float(np.min(curves[k])) for k in self.lines)
        high = max(float(np.max(curves[k])) for k in self.lines)
        self.ax.set_xlim(BATCHES[0], BATCHES[-1])
        self.ax.set_ylim(low / 2, high * 2)
        self.ax.set_title(f"Llama-2-70B bf16 decode, {n_chips} x {chip}, {link}", fontsize=10)
        now = self.times(chip, link, n_chips, batch, latency)
        return {"memory time": eng(now["t_mem"], "s"), "compute time": eng(now["t_math"], "s"),
                "communication time": eng(now["t_comm"], "s"), "bound": now["bound"]}
