"""Kernel launches: how a CPU feeding a device with kernels one at a time leaves the device idle.

    trace = rl.launch.simulate_queue(durations, launch_cost)       # asynchronous dispatch
    trace = rl.launch.simulate_queue(durations, launch_cost, synchronous=True)
    times = rl.launch.decode_kernel_times("llama-3-8b", "H200", batch=1, context=4096)  # one decode step's kernels

The model is deterministic and has two inputs: each kernel's time on the device, and the CPU's cost
to launch one kernel. The CPU launches kernel i, then kernel i + 1, ... without waiting
(asynchronous, as CUDA streams do): kernel i starts on the device when its launch is done and the
device has finished kernel i - 1. With ``synchronous=True`` the CPU waits for each kernel before
launching the next (as a blocking numpy call does), so the costs add up.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import dtypes, positive
from ..llm.parts import KINDS
from ..llm.steps import decode_step_unchecked
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model

# Parts of a decode step that run once per step, not once per layer (each part's kind says which).
ONCE_PER_STEP = tuple(k.name for k in KINDS if not k.per_layer)
# Parts a fusing compiler keeps as kernels of their own (``PartKind.kernel``); the elementwise parts between
# them (norms, RoPE, the KV-cache write, activations, residual adds) are folded into the next one.
KEPT_BY_FUSION = tuple(k.name for k in KINDS if k.kernel)


@dataclasses.dataclass(frozen=True)
class Trace:
    """Start and end time (s) of each kernel on the device, and the totals."""

    start: np.ndarray
    end: np.ndarray
    durations: np.ndarray
    launch_cost: float

    @property
    def total(self):
        """Seconds from the first launch to the end of the last kernel."""
        return float(self.end[-1])

    @property
    def busy(self):
        return float(self.durations.sum())

    @property
    def idle(self):
        """Seconds the device waits for work within ``total``."""
        return self.total - self.busy

    @property
    def idle_fraction(self):
        return self.idle / self.total


def simulate_queue(durations, launch_cost, synchronous=False):
    """Trace of kernels with the given device ``durations`` (s) launched by a CPU at ``launch_cost`` s each."""
    durations = np.atleast_1d(np.asarray(durations, dtype=float))
    if durations.ndim != 1 or durations.size == 0 or not np.all(np.isfinite(durations)) or np.any(durations < 0):
        raise ValueError(f"durations must be a non-empty 1-D sequence of finite times >= 0 s, got {durations!r}")
    launch_cost = float(launch_cost)
    if not (np.isfinite(launch_cost) and launch_cost >= 0):
        raise ValueError(f"launch_cost must be a finite time >= 0 s, got {launch_cost!r}")
    start, end = np.empty_like(durations), np.empty_like(durations)
    cpu, device = 0.0, 0.0  # when the CPU is free to launch, when the device is free to run
    for i, d in enumerate(durations):
        cpu += launch_cost
        start[i] = max(cpu, device)
        end[i] = device = start[i] + d
        if synchronous:
            cpu = device  # the call returns only when the kernel is done
    return Trace(start, end, durations, launch_cost)


def decode_kernel_times(model, hw, batch, context, *, fused=False, weight_dtype="bf16", kv_dtype="bf16"):
    """Roofline time (s, max of math and memory time) of each kernel of one decode step, in launch order.

    One kernel per part of ``rl.decode_step(...).leaves()`` and per layer (the parts of every layer
    repeat once per layer; embedding, final norm and LM head run once). ``fused=True`` folds the
    elementwise parts into the next matmul or attention kernel, as a fusing compiler does: fewer
    kernels, the same total work. Dense models only.
    """
    m = get_model(model)
    if getattr(m, "moe_layers", 0):
        raise ValueError(f"{m.name} is a mixture-of-experts model; decode_kernel_times takes dense models only")
    hw = get_accelerator(hw)
    step = decode_step_unchecked(m, positive("batch", batch, integer=True), positive("context", context, integer=True),
                                 dtypes(weight_dtype, kv_dtype))
    leaves = step.leaves()
    head = [leaves[0]]  # the embedding lookup: once, before the layers
    tail = [p for p in leaves[1:] if not p.kind.per_layer]  # final norm and LM head: once, after them
    layer = [p for p in leaves if p.kind.per_layer]
    per_layer = [float(estimate(p, hw).lower) / m.num_layers for p in layer]
    kinds = [p.kind for p in head] + [p.kind for p in layer] * m.num_layers + [p.kind for p in tail]
    times = ([float(estimate(p, hw).lower) for p in head] + per_layer * m.num_layers
             + [float(estimate(p, hw).lower) for p in tail])
    if not fused:
        return np.array(times)
    merged, pending = [], 0.0
    for kind, t in zip(kinds, times, strict=True):
        pending += t
        if kind.kernel:
            merged.append(pending)
            pending = 0.0
    if pending:
        merged[-1] += pending
    return np.array(merged)


def decode_kernel_count(model, fused=False):
    """Kernels one decode step launches (one per part and layer; ``fused``: matmuls and attention only)."""
    return int(decode_kernel_times(model, "H200", 1, 1, fused=fused).size)


__all__ = ["decode_kernel_count", "decode_kernel_times", "KEPT_BY_FUSION", "ONCE_PER_STEP", "simulate_queue", "Trace"]
