"""Traces the course writes itself, in the format the PyTorch profiler exports, so that a chapter can read
one on any machine without a GPU or a download.

    write_trace(path, kernels, device_name="NVIDIA H100 80GB HBM3")   # kernels you lay out by hand
    decode_trace(path, "llama-3-8b", "H100", batch=1, context=4096)   # a simulated decode step

``write_trace`` takes kernels as dicts: ``name``, ``start`` and ``duration`` in seconds, and optionally
``stream`` (default 7, PyTorch's default stream), ``launch`` ((start, duration) of the CPU's launch call) and
``op`` ((name, input dims, input types) of the operator that launched it). ``decode_trace`` lays out one decode
step's kernels (``rl.launch.decode_kernel_times``: each at its roofline time on the chip, so every GEMM sits on
the memory roof) as the launch queue of chapter 08 would run them: launched eagerly at ``launch_cost`` each,
or replayed as a CUDA graph. It is a model, not a measurement: its times are the roofline's.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from ..core.checks import positive
from ..measure.launch import (
    EAGER_CPU_PER_KERNEL_S,
    STREAM_BOUNDARY_S,
    decode_kernel_times,
    simulate_graph,
    simulate_queue,
)
from ..specs.hardware import get_accelerator
from ..specs.models import get_model

TYPE_OF = {"bf16": "c10::BFloat16", "fp16": "c10::Half", "fp32": "float"}
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


def _decode_kernels(m, batch):
    """(name, GEMM (k, n) or None) of each kernel of one decode step, in launch order (``decode_kernel_times``')."""
    h, q, kv, inter = m.hidden_size, m.num_heads * m.head_dim, m.num_kv_heads * m.head_dim, m.intermediate_size
    layer = [("rms_norm_kernel", None), ("gemm qkv", (h, q + 2 * kv)), ("rotary_embedding_kernel", None),
             ("kv_cache_copy_kernel", None), ("flash_decoding_attention", None), ("gemm out", (q, h)),
             ("elementwise_add", None), ("rms_norm_kernel", None), ("gemm gate_up", (h, 2 * inter)),
             ("silu_and_mul_kernel", None), ("gemm down", (inter, h)), ("elementwise_add", None)]
    return ([("embedding_index_select", None)] + layer * m.num_layers
            + [("rms_norm_kernel", None), ("gemm lm_head", (h, m.vocab_size))])


def decode_trace(path, model, hw, batch=1, context=4096, *, graph=False, launch_cost=EAGER_CPU_PER_KERNEL_S,
                 steps=1, device_name=None):
    """Write ``steps`` simulated decode steps of ``model`` on ``hw`` (bf16) as a trace at ``path``: launched
    eagerly at ``launch_cost`` per kernel (chapter 08's queue, with its boundary cost) or, with ``graph=True``,
    replayed as a CUDA graph. GEMMs carry their operator (aten::mm) and shapes, as ``record_shapes=True`` records.

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    m = get_model(model)
    steps = positive("steps", steps, integer=True)
    times = list(decode_kernel_times(m, hw, batch, context)) * steps
    layout = _decode_kernels(m, batch) * steps
    if len(layout) != len(times):
        raise ValueError(f"{m.name}: decode_trace lays out the course's 12 kernels per layer; this model's step "
                         f"has {len(times) // steps}")
    run = simulate_graph(times) if graph else simulate_queue(times, launch_cost, device_gap=STREAM_BOUNDARY_S)
    kernels = []
    for i, ((name, gemm), start, end) in enumerate(zip(layout, run.start, run.end, strict=True)):
        k = {"name": name.replace("gemm ", "sm90_xmma_gemm_bf16bf16_bf16f32_") if gemm else name,
             "start": float(start), "duration": float(end - start)}
        if not graph:
            k["launch"] = (i * launch_cost, min(launch_cost, 7e-6))  # the launch call itself; the rest is Python
        if gemm:
            k["op"] = ("aten::mm", [(batch, gemm[0]), gemm], [TYPE_OF["bf16"]] * 2)
        kernels.append(k)
    return write_trace(path, kernels, device_name=device_name or get_accelerator(hw).name)


__all__ = ["decode_trace", "write_trace"]
