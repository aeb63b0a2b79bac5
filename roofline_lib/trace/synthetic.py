"""Traces the course writes itself, in the format the PyTorch profiler exports, so that a chapter can read
one on any machine without a GPU or a download.

    write_trace(path, kernels, device_name="NVIDIA H100 80GB HBM3")   # kernels you lay out by hand
    decode_trace(path, "llama-3-8b", "H100", batch=1, context=4096)   # a simulated decode step

``write_trace`` takes kernels as dicts: ``name``, ``start`` and ``duration`` in seconds, and optionally
``stream`` (default 7, PyTorch's default stream), ``launch`` ((start, duration) of the CPU's launch call) and
``op`` ((name, input dims, input types) of the operator that launched it). ``decode_trace`` lays out one decode
step's kernels (``rl.launch.decode_kernel_times``: each at its roofline time on the chip) as the launch queue of
chapter 08 would run them: launched eagerly at ``launch_cost`` each, or replayed as a CUDA graph. It is a model,
not a measurement: its times are the roofline's plus chapter 08's cost per kernel boundary, split the way real
traces show that cost (below).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from ..core.checks import positive
from ..measure.launch import (
    EAGER_CPU_PER_KERNEL_S,
    EAGER_KERNELS,
    EAGER_KERNELS_PER_STEP,
    GRAPH_BOUNDARY_S,
    STREAM_BOUNDARY_S,
    decode_kernel_times,
    eager_kernel_times,
    simulate_graph,
    simulate_queue,
)
from ..specs.hardware import get_accelerator
from ..specs.models import get_model

TYPE_OF = {"bf16": "c10::BFloat16", "fp16": "c10::Half", "fp32": "float"}
# Where chapter 08's cost per kernel boundary shows in a trace. Between the kernels of a graph replay, almost
# nothing: in TraceLens' vLLM full-graph decode trace (AMD-AGI/TraceLens @171dd74, tests/traces/inference/
# vllm_decode_full/graph_execution.json.gz, an AMD Instinct GPU) 433 boundaries leave 25.5 us idle, a mean
# 0.06 us each (430 of them 1 ns, the tracer's resolution; three gaps of 3 to 12 us where eager work meets the
# graph). The rest (ramp-up, the last wave's stragglers, memory latency) is inside each kernel's recorded
# duration: the same trace's RMSNorm of 32 x 2880 bf16, 0.07 us of bytes at the chip's roof, lasts 5.8 to 7.1 us.
GRAPH_NODE_GAP_S = 0.06e-6
IN_KERNEL_S = GRAPH_BOUNDARY_S - GRAPH_NODE_GAP_S  # what each kernel's duration carries beyond its roofline time
# On a stream a boundary costs chapter 08's 0.8 us more, seen as a gap: 0.86 us (the published NVIDIA eager
# traces' kernels already queued start a median 1.0 (V100), 1.2 (A100) and 1.6 us (H100) after the last ended)
STREAM_GAP_S = STREAM_BOUNDARY_S - IN_KERNEL_S
# The launch call itself (cudaLaunchKernel), the runtime event a trace records for each kernel: its median in
# the published traces is 3.3 us (H100, Hugging Face), 6.9 us (B200, vLLM), 7.0 us (V100), 9.7 us (A100). The
# rest of an eager launch's CPU time is Python and the dispatcher, between the calls.
LAUNCH_CALL_S = 7e-6
T0_US = 1_000_000.0  # traces start at an arbitrary clock; a round one keeps the written numbers readable


def _us(seconds):
    return round(T0_US + seconds * 1e6, 6)  # to the picosecond: 30e-6 s is written 30.0 us, not 30.000000000000004


def write_trace(path, kernels, *, device_name=None):
    """Write ``kernels`` (see the module's docstring) as a Kineto trace at ``path`` (gzipped if it ends in .gz).

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    events = []
    for i, k in enumerate(kernels):
        corr = 1000 + i
        args = {"device": 0, "stream": k.get("stream", 7), "correlation": corr, "External id": i + 1}
        events.append({"ph": "X", "cat": "kernel", "name": k["name"], "pid": 0, "tid": args["stream"],
                       "ts": _us(k["start"]), "dur": round(k["duration"] * 1e6, 6), "args": args})
        if "launch" in k:
            start, dur = k["launch"]
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": _us(start), "dur": round(dur * 1e6, 6),
                           "args": {"correlation": corr, "External id": i + 1}})
        if "op" in k:
            name, dims, types = k["op"]
            start, dur = k.get("launch", (k["start"], 0.0))
            events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": _us(start),
                           "dur": round(dur * 1e6, 6),
                           "args": {"External id": i + 1, "Input Dims": [list(d) for d in dims],
                                    "Input type": list(types)}})
    data = {"schemaVersion": 1, "traceEvents": events}
    if device_name:
        data["deviceProperties"] = [{"id": 0, "name": device_name}]
    text = json.dumps(data).encode()
    path = Path(path)
    path.write_bytes(gzip.compress(text, mtime=0) if path.suffix == ".gz" else text)
    return path


# One decode step's parts in ``decode_kernel_times``' order (a layer's twelve, then once per step), each with its
# kernel's name and, for a GEMM, its (k, n)
def _decode_parts(m):
    h, q, kv, inter = m.hidden_size, m.num_heads * m.head_dim, m.num_kv_heads * m.head_dim, m.intermediate_size
    layer = [("RMSNorm", "rms_norm_kernel", None), ("QKV projection", "gemm qkv", (h, q + 2 * kv)),
             ("RoPE", "rotary_embedding_kernel", None), ("KV cache write", "kv_cache_copy_kernel", None),
             ("attention (reads KV cache)", "flash_decoding_attention", None),
             ("output projection", "gemm out", (q, h)), ("residual add", "elementwise_add", None),
             ("RMSNorm", "rms_norm_kernel", None), ("MLP gate+up projection", "gemm gate_up", (h, 2 * inter)),
             ("MLP SiLU x up", "silu_and_mul_kernel", None), ("MLP down projection", "gemm down", (inter, h)),
             ("residual add", "elementwise_add", None)]
    return ([("embedding lookup", "embedding_index_select", None)] + layer * m.num_layers
            + [("final RMSNorm", "rms_norm_kernel", None), ("LM head", "gemm lm_head", (h, m.vocab_size))])


def _eager_kernels(parts):
    """The kernels eager PyTorch launches for the same parts (``rl.launch.EAGER_KERNELS``, counted in gpt-fast):
    a part's GEMM split in as many GEMMs (w1 and w3 apart), its other kernels elementwise, then the per-step
    extras (masks, rotary tables, sampling)."""
    out = []
    for part, name, gemm in parts:
        count = EAGER_KERNELS[part]
        if gemm:
            out += [(name, (gemm[0], gemm[1] // count))] * count
        else:
            out += [(name, None)] + [("vectorized_elementwise_kernel", None)] * (count - 1)
    return out + [("vectorized_elementwise_kernel", None)] * EAGER_KERNELS_PER_STEP


def decode_trace(path, model, hw, batch=1, context=4096, *, graph=False, launch_cost=EAGER_CPU_PER_KERNEL_S,
                 steps=1, device_name=None):
    """Write ``steps`` simulated decode steps of ``model`` on ``hw`` (bf16) as a trace at ``path``: the kernels
    eager PyTorch launches (``rl.launch.eager_kernel_times``), at ``launch_cost`` each (chapter 08's queue), or,
    with ``graph=True``, the step's fused kernels (``decode_kernel_times``) replayed as a CUDA graph.
    Each kernel lasts its roofline time plus ``IN_KERNEL_S``; kernels are ``GRAPH_NODE_GAP_S`` apart in a graph,
    at least ``STREAM_GAP_S`` on a stream. GEMMs carry their operator (aten::mm) and shapes, as
    ``record_shapes=True`` records.

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    m = get_model(model)
    steps = positive("steps", steps, integer=True)
    parts = _decode_parts(m)
    if graph:
        times, layout = decode_kernel_times(m, hw, batch, context), [(name, gemm) for _, name, gemm in parts]
    else:
        times, layout = eager_kernel_times(m, hw, batch, context), _eager_kernels(parts)
    times, layout = list(times) * steps, layout * steps
    if len(layout) != len(times):
        raise ValueError(f"{m.name}: decode_trace lays out {len(layout) // steps} kernels per step; the launch model "
                         f"times {len(times) // steps}")
    durations = [t + IN_KERNEL_S for t in times]
    run = (simulate_graph(durations, node_gap=GRAPH_NODE_GAP_S) if graph
           else simulate_queue(durations, launch_cost, device_gap=STREAM_GAP_S))
    call = min(launch_cost, LAUNCH_CALL_S)
    kernels = []
    for i, ((name, gemm), start, end) in enumerate(zip(layout, run.start, run.end, strict=True)):
        k = {"name": name.replace("gemm ", "sm90_xmma_gemm_bf16bf16_bf16f32_") if gemm else name,
             "start": float(start), "duration": float(end - start)}
        if not graph:
            # the launch call ends each kernel's share of the CPU's time; Python and the dispatcher come before it
            k["launch"] = ((i + 1) * launch_cost - call, call)
        if gemm:
            k["op"] = ("aten::mm", [(batch, gemm[0]), gemm], [TYPE_OF["bf16"]] * 2)
        kernels.append(k)
    return write_trace(path, kernels, device_name=device_name or get_accelerator(hw).name)


__all__ = ["GRAPH_NODE_GAP_S", "IN_KERNEL_S", "LAUNCH_CALL_S", "STREAM_GAP_S", "decode_trace", "write_trace"]
