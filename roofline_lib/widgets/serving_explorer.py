"""Serving explorer: model, chip, requests in flight, prompt and output lengths, and the serving techniques
(chunked prefill, speculative decoding, paged KV) -> where the step sits on the roofline, and the
throughput-latency curve of continuous batching with the current batch on it."""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.ticker import EngFormatter

from .. import llm, serving
from ..plotting.rooflines import format_axes, roof_curve
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .base import Explorer, eng, invalidate_background, moving
from .controls import int_log_slider, model_and_chip, plain

CONTIGUOUS_MAX_LEN = 4096  # positions a contiguous allocator reserves per sequence (the engine's maximum length)
TPOT_SLO = 50e-3  # the SLO line drawn on the curve


class ServingExplorer(Explorer):
    """Left: the chip's bf16 roofline with the mean decode step (filled) and, when a technique is on, the step
    it runs instead (chunked: decode + prompt chunk; speculative: the verify pass). Right: output tokens/s
    per chip against time per output token over every batch that fits (continuous batching), the current
    batch marked, and a 50 ms TPOT line.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""

    def __init__(self, model="Llama-2-7B", chip="A100 80GB SXM4", batch=32, prompt_len=512, output_len=256,
                 chips=("A100 80GB SXM4", "H100 SXM", "H200 SXM", "B200", "MI300X", "L40S")):
        small = dict(style={"description_width": "initial"}, layout=ipywidgets.Layout(width="200px"))
        # a slider's label and readout take ~110 px: at 200 px its track was ~45 px, too short to aim with
        slider = dict(style={"description_width": "initial"}, layout=ipywidgets.Layout(width="300px"))
        controls = {
            **model_and_chip(model, chip, chips, width="210px"),
            "batch": int_log_slider("requests in flight", 1, 2048, batch),
            "prompt_len": int_log_slider("prompt", 16, 32768, prompt_len),
            "output_len": int_log_slider("output", 16, 2**13, output_len),
            "chunked": ipywidgets.Checkbox(value=False, description="chunked prefill", indent=False, **small),
            "paged": ipywidgets.Checkbox(value=True, description="paged KV (16-token pages)", indent=False,
                                         **small),
            "k": ipywidgets.IntSlider(value=0, min=0, max=8, description="drafted k", **slider),
            "acceptance": ipywidgets.FloatSlider(value=0.7, min=0.0, max=0.95, step=0.05, description="accept",
                                                 **slider),
        }
        super().__init__(controls, figsize=(8, 3.4))

    def build(self):
        """Two panels: the decode step (and the step with the chosen technique) on the roofline, and the time per output
        token against the batch."""
        self.ax_roof, self.ax_curve = self.fig.subplots(1, 2, width_ratios=(1, 1.15))
        format_axes(self.ax_roof)
        self.ax_roof.set_xlabel("intensity (FLOP/byte)")
        self.roof, = self.ax_roof.plot([], [], lw=2, color="C0")
        self.step_pt, = self.ax_roof.plot([], [], "o", ms=8, color="C3", label="decode step", zorder=5)
        self.alt_pt, = self.ax_roof.plot([], [], "s", ms=7, mfc="none", color="C2", label="with technique",
                                         zorder=5)
        self.ax_roof.set_xlim(0.3, 3e4)
        self.ax_roof.set_ylim(1e11, 1e16)
        self.ax_roof.legend(loc="lower right", fontsize=7)
        ax = self.ax_curve
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(EngFormatter(unit="s"))
        ax.yaxis.set_major_formatter(EngFormatter(unit=""))
        ax.set_xlabel("time per output token (TPOT)")
        ax.set_ylabel("output tokens/s per chip")
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlim(1e-3, 3)
        ax.set_ylim(3, 3e5)
        ax.axvline(TPOT_SLO, color="0.5", ls=":", lw=1)
        ax.annotate("TPOT 50 ms", (TPOT_SLO, 1), xycoords=("data", "axes fraction"), textcoords="offset points",
                    xytext=(3, -10), fontsize=7, color="0.4")
        self.curve, = ax.plot([], [], lw=2, color="C1", label="continuous batching")
        self.curve_pt, = ax.plot([], [], "o", ms=8, color="C3", zorder=5)
        ax.legend(loc="lower right", fontsize=7)
        moving(self.fig, self.step_pt, self.alt_pt, self.curve_pt)
        self._static = None

    def _capacity(self, model, hw, positions, paged):
        page = serving.DEFAULT_PAGE_TOKENS
        reserve = int(np.ceil(positions / page) * page) if paged else max(CONTIGUOUS_MAX_LEN, positions)
        return llm.max_batch(model, hw, reserve)

    def _curve(self, model, hw, prompt_len, output_len, chunked, k, acceptance, batches):
        c = serving.continuous(model, hw, batches, prompt_len, output_len, chunked=chunked)
        tpot, thr = np.asarray(c.tpot, float), np.asarray(c.throughput_per_chip, float)
        if k:
            mean_ctx = int(prompt_len + (output_len + 1) // 2)  # the mean step (serving.decode_sums)
            s = serving.speculative(model, hw, batches, mean_ctx, k, acceptance)
            factor = np.asarray(s.time_per_token / s.t_plain, float)  # < 1 where speculation pays
            tpot, thr = tpot * factor, thr / factor
        return c, tpot, thr

    def update(self, model, chip, batch, prompt_len, output_len, chunked, paged, k, acceptance):
        """A request of ``prompt_len`` + ``output_len`` tokens at ``batch`` on ``chip``, with chunked prefill, paged KV
        or speculative decoding (``k`` drafts, ``acceptance``) as chosen: move the points and curves, return
        the readout."""
        hw = get_accelerator(chip)
        batch, prompt_len, output_len = int(round(batch)), int(round(prompt_len)), int(round(output_len))
        positions = prompt_len + output_len
        cap = self._capacity(model, hw, positions, paged)
        if cap < 1:
            raise ValueError(f"{get_model(model).name} with {positions} positions per sequence does not fit "
                             f"on {hw.name}")
        static = (get_model(model).name, hw.name, prompt_len, output_len, chunked, paged, k, acceptance)
        if static != self._static:
            x, y = roof_curve(hw, "bf16", (0.3, 3e4))
            self.roof.set_data(x, y)
            self.ax_roof.set_title(f"{get_model(model).name} on {hw.name}", fontsize=9)
            batches = np.unique(np.geomspace(1, cap, 200).round())
            _, tpot, thr = self._curve(model, hw, prompt_len, output_len, chunked, k, acceptance, batches)
            self.curve.set_data(tpot, thr)
            self.ax_curve.set_title(f"P={prompt_len}, O={output_len}: batch 1 .. {cap} (all that fit)", fontsize=9)
            self._static = static
            invalidate_background(self.fig)
        shown = min(batch, cap)
        c, tpot, thr = self._curve(model, hw, prompt_len, output_len, chunked, k, acceptance, shown)
        tpot, thr = float(tpot), float(thr)
        mean_ctx = int(prompt_len + (output_len + 1) // 2)  # the mean step (serving.decode_sums)
        step = llm.decode_step(model, shown, mean_ctx)
        self.step_pt.set_data([step.intensity], [estimate(step, hw).achieved_flops])
        alt = None
        if k:
            alt = serving.speculative(model, hw, shown, mean_ctx, k, acceptance).verify
        elif chunked:
            chunk = max(1, min(prompt_len, int(round(shown * prompt_len / output_len))))
            alt = serving.chunked_prefill(model, hw, shown, mean_ctx, chunk, prompt_len).mixed
        self.alt_pt.set_data(([alt.intensity], [estimate(alt, hw).achieved_flops]) if alt is not None else ([], []))
        self.curve_pt.set_data([tpot], [thr])
        capped = "" if batch <= cap else f" (capped: only {cap} fit)"
        return {
            "requests in flight": f"{shown}{capped}; arrival rate that keeps them: {plain(c.rate, 3)} requests/s",
            "TTFT / TPOT / end-to-end": f"{eng(c.ttft, 's')} / {eng(tpot, 's')} / "
                                        f"{eng(c.ttft + output_len * tpot, 's')}",
            "output tokens/s per chip": eng(thr, "token/s") + (" (meets TPOT <= 50 ms)" if tpot <= TPOT_SLO else
                                                        " (misses TPOT <= 50 ms)"),
            "decode step intensity / ridge": f"{plain(step.intensity, 3)} / {plain(hw.ridge_point('bf16'), 3)} FLOP/B",
            "sequences that fit": f"{cap} ({'paged' if paged else f'contiguous, {CONTIGUOUS_MAX_LEN} reserved'}; "
                                  f"{eng(hw.mem_capacity, 'B')}, datasheet '{hw.mem_capacity_label}')",
        }


__all__ = ["CONTIGUOUS_MAX_LEN", "ServingExplorer", "TPOT_SLO"]
