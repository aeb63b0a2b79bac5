"""Kernel launches: what a CPU feeding a device kernel by kernel, and each kernel boundary, cost the device.

    trace = rl.launch.simulate_queue(durations, launch_cost)       # asynchronous dispatch
    trace = rl.launch.simulate_queue(durations, launch_cost, synchronous=True)
    trace = rl.launch.simulate_queue(durations, EAGER_CPU_PER_KERNEL_S, device_gap=STREAM_BOUNDARY_S)
    trace = rl.launch.simulate_graph(durations)                    # one CPU replay, a device cost per node
    times = rl.launch.decode_kernel_times("llama-3-8b", "H200", batch=1, context=4096)  # one decode step's kernels

The model is deterministic. Its inputs: each kernel's time on the device; the CPU's cost to launch one
kernel; and ``device_gap``, what each kernel boundary costs the *device* even when the next kernel is
already queued (the launch gap, the new kernel's ramp-up, the old one's last wave of stragglers). The CPU
launches kernel i, then kernel i + 1, ... without waiting (asynchronous, as CUDA streams do): kernel i
starts when its launch is done and ``device_gap`` after kernel i - 1 ended. With ``synchronous=True`` the
CPU waits for each kernel before launching the next (as a blocking numpy call does), so the costs add up.

A CUDA graph (``simulate_graph``) replaces the launches by one replay on the CPU; the device still pays a
cost per node. Fusion (``decode_kernel_times(fused=True)``) removes kernels, and with them the boundaries
and the folded parts' round trips to memory.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import dtypes, positive
from ..llm.parts import KINDS, KV_CACHE
from ..llm.steps import decode_step_unchecked
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model

# Device time per kernel boundary, measured by Hazy Research with a dummy kernel on an H100 ("Look Ma, No
# Bubbles!", 2025-05-27): "running on a CUDA stream incurs a launch cost of about 2.1 microseconds, and with CUDA
# graphs the launch cost only decreases to around 1.3 microseconds".
STREAM_LAUNCH_GAP_S = 2.1e-6
GRAPH_LAUNCH_GAP_S = 1.3e-6
# All a kernel boundary costs the device in a real decoder, the same authors' estimate: "an optimistic 5 us of
# stalling per kernel (counting stragglers, kernel launch, and memory latencies)", with CUDA graphs; on a stream
# the launch gap is 0.8 us longer.
GRAPH_BOUNDARY_S = 5e-6
STREAM_BOUNDARY_S = GRAPH_BOUNDARY_S + STREAM_LAUNCH_GAP_S - GRAPH_LAUNCH_GAP_S
# One replay of a recorded graph on the CPU: NVIDIA's CUDA 12.6 notes give "a nearly constant time of 2.5us +
# (~1ns per node)" for straight-line graphs (read second-hand: the post itself was not available here).
GRAPH_REPLAY_CPU_S = 2.5e-6
# Eager PyTorch on the CPU, per kernel-launching operator: a fitted constant, not a measurement of its parts.
# gpt-fast's eager Llama-2-7B (25.5 tok/s at batch 1 on an A100, chapter 08) is CPU-bound and launches 1588
# kernels per token (EAGER_KERNELS), so each costs 1 / 25.5 / 1588 s = 24.7 us of CPU. The pieces the sources
# name add up to less: Python and the dispatcher at about 3.6 us per operation, no CUDA launch in it (Horace He,
# "Making Deep Learning Go Brrrr": "280 thousand operations per second"), and the launch call itself at 3 to 10 us
# in the published traces of chapter 15, which spend the rest of the interval between calls (19 us on a Hugging
# Face forward, 84 us on vLLM with stacks) in the framework around each operator.
EAGER_CPU_PER_KERNEL_S = 24.7e-6

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
        """Seconds the device spent running kernels."""
        return float(self.durations.sum())

    @property
    def idle(self):
        """Seconds the device waits for work within ``total``."""
        return self.total - self.busy

    @property
    def idle_fraction(self):
        """Share of the whole time the device waited for work."""
        return self.idle / self.total


def _durations(durations):
    durations = np.atleast_1d(np.asarray(durations, dtype=float))
    if durations.ndim != 1 or durations.size == 0 or not np.all(np.isfinite(durations)) or np.any(durations < 0):
        raise ValueError(f"durations must be a non-empty 1-D sequence of finite times >= 0 s, got {durations!r}")
    return durations


def _time(name, value):
    value = float(value)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite time >= 0 s, got {value!r}")
    return value


def simulate_queue(durations, launch_cost, synchronous=False, device_gap=0.0):
    """Trace of kernels with the given device ``durations`` (s) launched by a CPU at ``launch_cost`` s each;
    each kernel starts at least ``device_gap`` s after the one before it ended (0: boundaries are free).

    Taught in chapter 08 (notebooks/08_overhead_bound.ipynb); also used in chapter 15."""
    durations = _durations(durations)
    launch_cost, device_gap = _time("launch_cost", launch_cost), _time("device_gap", device_gap)
    start, end = np.empty_like(durations), np.empty_like(durations)
    cpu, device = 0.0, -device_gap  # when the CPU is free to launch, when the device last finished
    for i, d in enumerate(durations):
        cpu += launch_cost
        start[i] = max(cpu, device + device_gap)
        end[i] = device = start[i] + d
        if synchronous:
            cpu = device  # the call returns only when the kernel is done
    return Trace(start, end, durations, launch_cost)


def simulate_graph(durations, node_gap=GRAPH_BOUNDARY_S, replay_cost=GRAPH_REPLAY_CPU_S):
    """Trace of the same kernels recorded as a CUDA graph: one replay of ``replay_cost`` s on the CPU, then
    the nodes back to back on the device, ``node_gap`` s apart (the boundary cost a graph does not remove).

    Taught in chapter 08 (notebooks/08_overhead_bound.ipynb)."""
    durations = _durations(durations)
    node_gap, replay_cost = _time("node_gap", node_gap), _time("replay_cost", replay_cost)
    gaps = replay_cost + node_gap * np.arange(durations.size)
    end = gaps + np.cumsum(durations)
    return Trace(end - durations, end, durations, replay_cost)


def decode_kernel_times(model, hw, batch, context, *, fused=False, weight_dtype="bf16", kv_dtype="bf16"):
    """Roofline time (s, max of math and memory time) of each kernel of one decode step, in launch order.

    One kernel per part of ``rl.decode_step(...).leaves()`` and per layer (the parts of every layer
    repeat once per layer; embedding, final norm and LM head run once). ``fused=True`` folds the
    elementwise parts into the next matmul or attention kernel, as a fusing compiler does: fewer
    kernels, the same FLOPs, and the folded parts' reads and writes of activations gone (they stay in
    registers); the KV-cache write still goes to memory. (A folded norm's weight vector, a few kB, is
    counted as gone too.) Dense models only.

    Taught in chapter 08 (notebooks/08_overhead_bound.ipynb).
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
    kinds = [p.kind for p in head] + [p.kind for p in layer] * m.num_layers + [p.kind for p in tail]
    if not fused:
        per_layer = [float(estimate(p, hw).lower) / m.num_layers for p in layer]
        return np.array([float(estimate(p, hw).lower) for p in head] + per_layer * m.num_layers
                        + [float(estimate(p, hw).lower) for p in tail])
    # a folded part adds its math to the kernel it joins; only a cache write keeps its bytes
    per_layer = [_folded_terms(p, hw, m.num_layers) for p in layer]
    terms = [_folded_terms(p, hw, 1) for p in head] + per_layer * m.num_layers + [_folded_terms(p, hw, 1) for p in tail]
    merged, math, mem = [], 0.0, 0.0
    for kind, (t_math, t_mem, kept) in zip(kinds, terms, strict=True):
        math += t_math
        mem += t_mem if (kind.kernel or kept) else 0.0
        if kind.kernel:
            merged.append(max(math, mem))
            math = mem = 0.0
    if math or mem:
        merged[-1] += max(math, mem)
    return np.array(merged)


def _folded_terms(part, hw, per):
    e = estimate(part, hw)
    return float(e.t_math) / per, float(e.t_mem) / per, part.kind.category == KV_CACHE


# Kernels eager PyTorch launches for each part of a decode step, counted by hand in gpt-fast's model.py
# (pytorch-labs/gpt-fast 32971d3, batch 1): RMSNorm: float, x*x, mean, +eps, rsqrt, x*rsqrt, type_as, *weight;
# RoPE, for q and for k: float, four products, a difference, a sum, stack, type_as; the cache write: two index
# copies; attention: K and V repeat_interleave'd, scaled_dot_product_attention, one contiguous copy; the MLP: w1
# and w3 apart, silu and the product apart. Views (split, view, transpose) launch nothing.
EAGER_KERNELS = {
    "RMSNorm": 8, "final RMSNorm": 8, "QKV projection": 1, "RoPE": 18, "KV cache write": 2,
    "attention (reads KV cache)": 4, "output projection": 1, "residual add": 1, "MLP gate+up projection": 2,
    "MLP SiLU x up": 2, "MLP down projection": 1, "embedding lookup": 1, "LM head": 1,
}
# Per step, outside the layers: the mask and rotary-table lookups (2) and generate.py's sampling (logits / T,
# top-k, a threshold, softmax, an exponential draw, a division, argmax: about 8).
EAGER_KERNELS_PER_STEP = 10


def eager_kernel_times(model, hw, batch, context, *, weight_dtype="bf16", kv_dtype="bf16"):
    """Device time (s) of each kernel eager PyTorch launches for one decode step, in launch order: each part's
    roofline time shared evenly by its ``EAGER_KERNELS`` kernels, and the per-step extras (about free).

    Taught in chapter 08 (notebooks/08_overhead_bound.ipynb)."""
    per_part = decode_kernel_times(model, hw, batch, context, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    m = get_model(model)
    step = decode_step_unchecked(m, 1, 1, dtypes(weight_dtype, kv_dtype)).leaves()
    names = ([step[0].kind.name] + [p.kind.name for p in step if p.kind.per_layer] * m.num_layers
             + [p.kind.name for p in step[1:] if not p.kind.per_layer])
    counts = [EAGER_KERNELS[n] for n in names]
    return np.concatenate([np.repeat(per_part / counts, counts), np.zeros(EAGER_KERNELS_PER_STEP)])


def decode_kernel_count(model, fused=False):
    """Kernels one decode step launches (one per part and layer; ``fused``: matmuls and attention only).

    Taught in chapter 08 (notebooks/08_overhead_bound.ipynb)."""
    return int(decode_kernel_times(model, "H200", 1, 1, fused=fused).size)


__all__ = ["decode_kernel_count", "decode_kernel_times", "EAGER_CPU_PER_KERNEL_S", "EAGER_KERNELS",
           "EAGER_KERNELS_PER_STEP", "eager_kernel_times", "GRAPH_BOUNDARY_S",
           "GRAPH_LAUNCH_GAP_S", "GRAPH_REPLAY_CPU_S", "KEPT_BY_FUSION", "ONCE_PER_STEP", "simulate_graph",
           "simulate_queue", "STREAM_BOUNDARY_S", "STREAM_LAUNCH_GAP_S", "Trace"]
