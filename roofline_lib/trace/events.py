"""Reading a profiler trace: the Chrome-trace JSON that the PyTorch profiler (Kineto) writes, and vLLM,
SGLang and Perfetto with it, plain or gzipped, into records the rest of the room measures.

A Kineto trace is a list of events (``traceEvents``), each with a category (``cat``), a start ``ts`` and a
duration ``dur`` in microseconds. The ones read here:

    kernel, gpu_memcpy, gpu_memset     what the GPU ran (``args``: stream, correlation, External id)
    cuda_runtime, cuda_driver          the CPU's calls into the runtime; a launch's ``correlation`` is its kernel's
    cpu_op                             PyTorch operators (``args``: External id, Input Dims, Input type)
    user_annotation, gpu_user_annotation   record_function ranges and their GPU spans
    cuda_profiler_range                kernels run under CUPTI's counter replay, with counters per kernel

A kernel is tied to the operator that launched it through the launch: kernel -> (correlation) -> launch ->
(External id) -> operator, or, where the launch carries no External id, the innermost operator on the
launching thread that encloses the launch in time.
"""

from __future__ import annotations

import bisect
import gzip
import json
import math
import zlib
from dataclasses import dataclass
from pathlib import Path

GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver")
# a runtime call that puts work on the GPU: cudaLaunchKernel, cuLaunchKernelEx, hipExtModuleLaunchKernel,
# cudaGraphLaunch, hipGraphLaunch ...
LAUNCH_MARK = "launch"
US = 1e-6  # trace times are microseconds


@dataclass(frozen=True, slots=True)
class Op:
    """A CPU-side operator (``cpu_op``): its name, times in seconds from the trace's start, thread, and the
    shapes and types of its inputs where the profiler recorded them (``record_shapes=True``)."""

    name: str
    start: float
    duration: float
    pid: object
    tid: object
    external_id: object
    dims: tuple | None
    types: tuple | None
    concrete: tuple | None = None  # 'Concrete Inputs': scalars as the profiler printed them ('True', '559')

    @property
    def end(self):
        """When it ended, in seconds on the trace's clock."""
        return self.start + self.duration


@dataclass(frozen=True, slots=True)
class Kernel:
    """One GPU activity: a kernel, a memory copy or a memset (``kind``), with its stream and, where the
    trace ties it to one, the operator that launched it (``op``)."""

    name: str
    kind: str
    start: float
    duration: float
    stream: object
    device: object
    correlation: object
    op: Op | None
    collective: Collective | None = None

    @property
    def end(self):
        """When it ended, in seconds on the trace's clock."""
        return self.start + self.duration


@dataclass(frozen=True, slots=True)
class Collective:
    """What PyTorch's distributed layer records on a communication kernel (newer Kineto versions): the
    collective's name ("allreduce", "broadcast" ...), its message in elements and their type, the group's size."""

    name: str
    elements: int
    dtype: str
    group_size: int


def _collective(args):
    name, n, dtype, group = (args.get(k) for k in ("Collective name", "In msg nelems", "dtype", "Group size"))
    if isinstance(name, str) and _number(n) and isinstance(dtype, str) and _number(group) and group >= 1:
        return Collective(name, int(n), dtype, int(group))
    return None


@dataclass(frozen=True, slots=True)
class Launch:
    """A runtime call that launched GPU work, how long the CPU spent in it, and the thread that made it."""

    name: str
    start: float
    duration: float
    correlation: object
    pid: object = None
    tid: object = None


@dataclass(frozen=True, slots=True)
class Annotation:
    """A ``record_function`` range (``where`` "cpu") or its span on the GPU (``where`` "gpu")."""

    name: str
    where: str
    start: float
    duration: float


@dataclass(frozen=True, slots=True)
class CountedKernel:
    """A kernel run under CUPTI's counter replay: its floating-point operations counted by the hardware.
    Its duration is the replay's, many times the kernel's own, and is not used."""

    name: str
    flops: float


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _load(path):
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no trace file at {str(path)!r}: give the path of a profiler trace (.json or .json.gz)")
    raw = path.read_bytes()
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        data = json.loads(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{path.name} is not a readable trace: its gzip stream is damaged or cut short ({e})"
                         ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path.name} is not a readable trace: not JSON, or JSON cut short ({e}); "
                         "expected a Chrome-trace JSON such as torch.profiler's export_chrome_trace writes") from None
    if isinstance(data, dict):
        events = data.get("traceEvents")
    else:
        events, data = data, {}  # the Chrome format's bare-array form
    if not isinstance(events, list):
        raise ValueError(f"{path.name} is JSON but not a profiler trace: no 'traceEvents' list (expected a "
                         "Chrome-trace JSON such as torch.profiler's export_chrome_trace writes)")
    return data, events


def _dims(args):
    dims, types, concrete = args.get("Input Dims"), args.get("Input type"), args.get("Concrete Inputs")
    return (tuple(tuple(d) if isinstance(d, list) else d for d in dims) if isinstance(dims, list) else None,
            tuple(types) if isinstance(types, list) else None,
            tuple(concrete) if isinstance(concrete, list) else None)


def counted_flops(args):
    """FLOPs from CUPTI's per-thread instruction counters: a fused multiply-add counts two, an add or a
    multiply one, in every precision (``smsp__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum``)."""
    total = 0.0
    for key, value in args.items():
        if "inst_executed_op_" in key and _number(value):
            op = key.split("inst_executed_op_")[1].split("_")[0]  # dfma, fadd, hmul ...
            if op[1:] in ("add", "mul", "fma"):
                total += value * (2 if op.endswith("fma") else 1)
    return total


class _Enclosing:
    """The innermost operator on a thread that encloses a time (operators nest properly on one thread)."""

    def __init__(self, ops):
        self.by_thread = {}
        for op in sorted(ops, key=lambda o: (o.start, -o.duration)):
            self.by_thread.setdefault((op.pid, op.tid), []).append(op)
        self.starts = {k: [o.start for o in v] for k, v in self.by_thread.items()}

    def find(self, pid, tid, t):
        ops = self.by_thread.get((pid, tid))
        if not ops:
            return None
        i = bisect.bisect_right(self.starts[(pid, tid)], t) - 1
        for j in range(i, max(i - 500, -1), -1):  # the latest-starting op still running at t is the innermost
            if ops[j].end >= t:
                return ops[j]
        return None


def read_events(path):
    """(metadata dict, kernels, launches, ops, annotations, counted kernels, number of events skipped)."""
    data, events = _load(path)
    timed = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and _number(e.get("ts"))
             and _number(e.get("dur")) and e["dur"] >= 0]
    skipped = len(events) - len(timed) - sum(1 for e in events if isinstance(e, dict) and e.get("ph") != "X")
    t0 = min((e["ts"] for e in timed), default=0.0)

    def s(e):
        return (e["ts"] - t0) * US, e["dur"] * US

    ops, runtime, gpu, annotations, counted = [], {}, [], [], []
    launches = []
    for e in timed:
        cat, args = e.get("cat"), e.get("args") if isinstance(e.get("args"), dict) else {}
        name = str(e.get("name", ""))
        if cat == "cpu_op":
            dims, types, concrete = _dims(args)
            ops.append(Op(name, *s(e), e.get("pid"), e.get("tid"), args.get("External id"), dims, types, concrete))
        elif cat in RUNTIME_CATEGORIES:
            runtime[args.get("correlation")] = e
            if LAUNCH_MARK in name.lower():
                launches.append(Launch(name, *s(e), args.get("correlation"), e.get("pid"), e.get("tid")))
        elif cat in GPU_CATEGORIES:
            gpu.append((e, args))
        elif cat in ("user_annotation", "gpu_user_annotation"):
            annotations.append(Annotation(name, "gpu" if cat.startswith("gpu") else "cpu", *s(e)))
        elif cat == "cuda_profiler_range":
            counted.append(CountedKernel(name, counted_flops(args)))
    by_external = {}
    for op in ops:
        if op.external_id is not None and (op.external_id not in by_external or op.dims):
            by_external[op.external_id] = op
    enclosing = None
    kernels = []
    for e, args in gpu:
        launch = runtime.get(args.get("correlation"))
        ext = args.get("External id")
        if ext is None and launch is not None:
            ext = (launch.get("args") or {}).get("External id")
        op = by_external.get(ext) if ext is not None else None
        if op is None and launch is not None and ops:
            enclosing = enclosing or _Enclosing(ops)
            op = enclosing.find(launch.get("pid"), launch.get("tid"), (launch["ts"] - t0) * US)
        kernels.append(Kernel(str(e.get("name", "")), GPU_CATEGORIES[e["cat"]], *s(e), args.get("stream"),
                              args.get("device"), args.get("correlation"), op, _collective(args)))
    kernels.sort(key=lambda k: k.start)
    return data, kernels, launches, ops, annotations, counted, skipped


__all__ = ["Annotation", "Collective", "CountedKernel", "GPU_CATEGORIES", "Kernel", "Launch", "Op", "counted_flops",
           "read_events"]
