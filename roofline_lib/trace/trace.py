"""A profiler trace, measured: how long the GPU was busy, on what, how its communication overlapped its
compute, how short its kernels were, and the GEMMs whose shapes were recorded, placed on a chip's roofline.

    t = rl.trace.read("trace.json.gz")
    t.busy_share, t.time_by_category(), t.communication_exposed_s, t.launch_stats()
    t.gemms()              # m, n, k, dtype, seconds, FLOP/s, byte/s, intensity
    t.attention()          # fused attention with recorded Q, K, V shapes, the same way
    t.placed("H100")       # both beside the chip's roof: attainable FLOP/s, share of it, which side
    t.diagnose("H100")     # which of the four bottlenecks dominates, the evidence, what to try
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..core.checks import positive
from ..roofline.bounds import attainable_flops
from ..roofline.workloads import attention as attention_workload
from ..roofline.workloads import matmul
from ..specs.hardware import get_accelerator
from . import intervals
from .categories import ATTENTION, CATEGORIES, COMMUNICATION, GEMM, category
from .chips import chip_for
from .events import read_events
from .gemms import attention_shape, dtype_of, mnk

# A gap in GPU activity this long is reported apart, as where a trace was split or the profiler paused, not
# counted as idle time: the longest gap in a working step of the course's published traces is 16 ms (a data
# loader), the one split 463 ms. A default, not a law: a real stall as long (a slow data loader, a checkpoint,
# a serving engine waiting for requests) would be hidden by it, and a pause shorter counted as idle, so
# read(path, split_gap_s=...) sets it per trace.
SPLIT_GAP_S = 0.1
SHORT_KERNEL_S = 10e-6  # kernels under this are about as short as a launch: overhead-prone
# the element types PyTorch's distributed layer names on a collective, in bytes
WIRE_DTYPE_BYTES = {"float": 4, "double": 8, "half": 2, "bfloat16": 2, "int8_t": 1, "char": 1, "byte": 1,
                    "uint8_t": 1, "int": 4, "long": 8, "int64_t": 8, "float8_e4m3fn": 1, "float8_e5m2": 1}


@dataclass(frozen=True)
class LaunchStats:
    """The kernels' count, median duration and share under 10 us; the CPU's launch calls, their count, median
    duration, and the median time from one call's start to the next one's on the same thread (None where the
    trace recorded no launch calls, or no two on one thread). The call is only part of a launch's CPU cost: the
    time between calls is the framework's (Python, the dispatcher, the allocator), and the interval holds both."""

    kernels: int
    median_s: float | None
    short_share: float | None
    launches: int
    launch_cpu_s: float | None
    launch_interval_s: float | None = None


class _Rates:
    """What a row's time means: FLOP/s, byte/s and its intensity (FLOP per byte)."""

    @property
    def flops_per_s(self):
        return self.flops / self.seconds

    @property
    def bytes_per_s(self):
        return self.bytes / self.seconds

    @property
    def intensity(self):
        return self.flops / self.bytes


@dataclass(frozen=True)
class GemmRow(_Rates):
    """One matrix multiply whose shapes were recorded: its operator, ``batch`` products of m x k by k x n in
    ``dtype``, the time its kernels took, and what that time means as rates."""

    name: str
    op: str
    batch: int
    m: int
    n: int
    k: int
    dtype: str
    seconds: float
    flops: float
    bytes: float
    where: str  # "gpu" (its kernels' time) or "cpu" (the operator's time, where no GPU ran it)
    kind: ClassVar[str] = GEMM

    @property
    def shape(self):
        """The GEMM's m x n x k (and batch count) as text."""
        return f"{self.m} x {self.n} x {self.k}" + (f" (x{self.batch})" if self.batch > 1 else "")


@dataclass(frozen=True)
class AttentionRow(_Rates):
    """One fused attention whose Q, K and V shapes were recorded: FLOPs and minimum bytes as ``rl.attention``
    counts them (the score and value matmuls; Q, K, V read and O written once), and its kernels' time."""

    name: str
    op: str
    batch: int
    heads: int
    kv_heads: int
    q_len: int
    kv_len: int
    head_dim: int
    causal: bool
    dtype: str
    seconds: float
    flops: float
    bytes: float
    where: str
    kind: ClassVar[str] = ATTENTION

    @property
    def shape(self):
        """The attention's batch, heads (query/KV), lengths (query/KV) and head size as text."""
        return (f"attention {self.batch} x {self.heads}/{self.kv_heads} heads x {self.q_len}/{self.kv_len} x "
                f"{self.head_dim}" + (" causal" if self.causal else ""))


@dataclass(frozen=True)
class CollectiveRow:
    """A communication kernel whose message the trace recorded: the bytes each rank sends over the wire (a ring
    all-reduce sends 2 (n - 1) / n of the message, a broadcast or all-gather (n - 1) / n) and the rate that
    implies over the kernel's time. A rate far under the link's means the kernel spent its time waiting."""

    name: str
    collective: str
    message_bytes: float
    wire_bytes: float
    seconds: float

    @property
    def bus_bytes_per_s(self):
        """Bytes each rank put on the wire per second of the kernel (nccl-tests' bus bandwidth)."""
        return self.wire_bytes / self.seconds


@dataclass(frozen=True)
class Placed:
    """A GEMM or an attention (``row``) beside a chip's roof: what the roof allows at its intensity, the share
    of that it reached, and the side of the ridge it sits on ("compute" or "memory")."""

    row: GemmRow | AttentionRow
    attainable: float
    share_of_roof: float
    side: str


class Trace:
    """What a profiler trace recorded (``read(path)`` makes one): ``kernels`` (every GPU activity, kernels,
    copies and memsets, in start order, seconds from the trace's first event), ``launches``, ``ops`` (CPU
    operators), ``annotations``, ``counted`` (kernels with hardware FLOP counters), ``device`` (the
    recorded ``deviceProperties`` of the first GPU, or None), ``device_name``, and ``split_gap_s`` (gaps at
    least this long are reported as splits, not idle time)."""

    def __init__(self, path, split_gap_s=SPLIT_GAP_S):
        self.split_gap_s = positive("split_gap_s", split_gap_s)
        self.path = Path(path)
        data, kernels, launches, ops, annotations, counted, skipped = read_events(path)
        props = data.get("deviceProperties")
        self.device = props[0] if isinstance(props, list) and props and isinstance(props[0], dict) else None
        self.device_name = (self.device or {}).get("name") or None
        self.kernels, self.launches, self.ops = tuple(kernels), tuple(launches), tuple(ops)
        self.annotations, self.counted, self.skipped = tuple(annotations), tuple(counted), skipped
        self._starts = np.array([k.start for k in kernels])
        self._ends = np.array([k.end for k in kernels])
        self._cats = [category(k.name, k.kind) for k in kernels]

    def __repr__(self):
        return (f"Trace({self.path.name!r}: {self.device_name or 'no device recorded'}, "
                f"{len(self.kernels)} GPU activities, {len(self.ops)} CPU operators)")

    # ---------------------------------------------------------------- busy and idle

    @property
    def window_s(self):
        """From the first GPU activity's start to the last one's end (0 where the GPU ran nothing)."""
        return float(self._ends.max() - self._starts.min()) if self.kernels else 0.0

    @property
    def busy_s(self):
        """Time at least one GPU activity was running, on any stream (the union of their intervals)."""
        return intervals.length(self._starts, self._ends)

    @property
    def split_gaps(self):
        """The gaps in GPU activity of at least ``split_gap_s`` (default ``SPLIT_GAP_S``), as (start, length)
        pairs: where the trace was split or the profiler paused. They are not counted as idle time, but reported."""
        starts, lengths = intervals.gaps(self._starts, self._ends)
        return [(float(s), float(g)) for s, g in zip(starts, lengths, strict=True) if g >= self.split_gap_s]

    @property
    def idle_s(self):
        """Time within the window when no GPU activity ran, split gaps left out."""
        return max(self.window_s - self.busy_s - sum(g for _, g in self.split_gaps), 0.0)

    @property
    def busy_share(self):
        """Busy time over the window less the split gaps; None where the GPU ran nothing."""
        if not self.kernels:
            return None
        return self.busy_s / (self.busy_s + self.idle_s)

    # ---------------------------------------------------------------- what it was busy with

    def time_by_category(self):
        """Seconds of GPU activity per category (``categories.CATEGORIES``), summed over kernels (kernels
        that overlap on different streams each count their own time)."""
        out = dict.fromkeys(CATEGORIES, 0.0)
        for k, c in zip(self.kernels, self._cats, strict=True):
            out[c] += k.duration
        return out

    def _of(self, wanted):
        mask = np.array([c == wanted for c in self._cats], bool)
        return (self._starts[mask], self._ends[mask]), (self._starts[~mask], self._ends[~mask])

    @property
    def communication_s(self):
        """Time at least one communication kernel ran (the union of their intervals)."""
        comm, _ = self._of(COMMUNICATION)
        return intervals.length(*comm)

    @property
    def communication_overlapped_s(self):
        """Communication time during which some other GPU work ran too (necessarily on another stream): the
        part hidden behind compute."""
        comm, rest = self._of(COMMUNICATION)
        return intervals.overlap(comm, rest)

    @property
    def non_communication_s(self):
        """Time at least one GPU activity other than communication ran (the union of their intervals)."""
        _, rest = self._of(COMMUNICATION)
        return intervals.length(*rest)

    @property
    def communication_exposed_s(self):
        """Communication time with nothing else running: what the step would lose if the wire were free."""
        return self.communication_s - self.communication_overlapped_s

    def collectives(self):
        """Communication kernels whose message size was recorded, as ``CollectiveRow``s in start order."""
        rows = []
        for k in self.kernels:
            c = k.collective
            if c is None or k.duration <= 0:
                continue
            size = WIRE_DTYPE_BYTES.get(c.dtype.lower())
            if size is None:
                continue
            message, n = c.elements * size, c.group_size
            share = 2 * (n - 1) / n if c.name.lower().replace("_", "") == "allreduce" else (n - 1) / n
            rows.append(CollectiveRow(k.name, c.name, message, message * share, k.duration))
        return rows

    def launch_stats(self):
        """Kernel count, median duration, share under ``SHORT_KERNEL_S``; launch calls and their median CPU time."""
        durations = [k.duration for k in self.kernels if k.kind == "kernel"]
        launch = [x.duration for x in self.launches]
        by_thread = {}
        for x in sorted(self.launches, key=lambda x: x.start):
            by_thread.setdefault((x.pid, x.tid), []).append(x.start)
        apart = [b - a for starts in by_thread.values() for a, b in zip(starts, starts[1:], strict=False)]
        return LaunchStats(
            len(durations), statistics.median(durations) if durations else None,
            # a 10 us kernel is not short: microseconds times 1e-6 land a hair under 1e-5
            sum(d < SHORT_KERNEL_S * (1 - 1e-9) for d in durations) / len(durations) if durations else None,
            len(launch), statistics.median(launch) if launch else None, statistics.median(apart) if apart else None)

    # ---------------------------------------------------------------- GEMMs and the roofline

    def _timed_ops(self, wanted):
        """(kernel name, operator, seconds, "gpu") per operator call that launched kernels of category ``wanted``,
        its kernels' time summed (a split-K GEMM runs two); on a trace without GPU kernels, every CPU operator
        with its own time ("cpu")."""
        if not any(k.kind == "kernel" for k in self.kernels):
            return [(op.name, op, op.duration, "cpu") for op in self.ops]
        seconds, names = {}, {}
        for k, c in zip(self.kernels, self._cats, strict=True):
            if c == wanted and k.op is not None:
                seconds[id(k.op)] = seconds.get(id(k.op), 0.0) + k.duration
                names.setdefault(id(k.op), (k.name, k.op))
        return [(names[i][0], names[i][1], s, "gpu") for i, s in seconds.items()]

    def gemms(self):
        """Every matrix multiply whose shapes and dtype were recorded, as ``GemmRow``s, longest first. On a GPU
        trace, the GEMM kernels launched by one operator call count together (a split-K GEMM runs two); on a
        trace without GPU kernels, the CPU operators themselves (their own time)."""
        rows = []
        for name, op, seconds, where in self._timed_ops(GEMM):
            shape = mnk(op.name, op.dims)
            if shape is None or seconds <= 0:
                continue
            batch, m, n, k, first = shape
            dtype = dtype_of(op.types[first]) if op.types and len(op.types) > first else None
            if dtype is None:
                continue
            w = matmul(m, n, k, dtype)
            rows.append(GemmRow(name, op.name, batch, m, n, k, dtype, seconds, batch * w.flops, batch * w.bytes,
                                where))
        return sorted(rows, key=lambda r: -r.seconds)

    def attention(self):
        """Every fused attention whose Q, K and V shapes and dtype were recorded (FlashAttention's and SDPA's
        operators), as ``AttentionRow``s, longest first."""
        rows = []
        for name, op, seconds, where in self._timed_ops(ATTENTION):
            shape = attention_shape(op.name, op.dims, op.concrete)
            dtype = dtype_of(op.types[0]) if op.types else None
            if shape is None or dtype is None or seconds <= 0:
                continue
            b, h, hk, t, s, d, dv, causal = shape
            w = attention_workload(b, h, hk, t, s, d, dv, dtype, causal=causal)
            rows.append(AttentionRow(name, op.name, b, h, hk, t, s, d, causal, dtype, seconds, w.flops, w.bytes,
                                     where))
        return sorted(rows, key=lambda r: -r.seconds)

    def placed(self, hw=None):
        """The GEMMs and attentions with recorded shapes beside ``hw``'s roofline (a chip or its name; default:
        the recorded device, where the course knows it) for each one's dtype: ``Placed`` rows, longest first."""
        hw = self.chip(hw)
        out = []
        for g in sorted(self.gemms() + self.attention(), key=lambda r: -r.seconds):
            try:
                roof = float(attainable_flops(g.intensity, hw, g.dtype))
            except ValueError:
                continue  # a dtype the chip has no peak for
            side = "compute" if g.intensity >= hw.ridge_point(g.dtype) else "memory"
            out.append(Placed(g, roof, g.flops_per_s / roof, side))
        return out

    def chip(self, hw=None):
        """``hw`` as an Accelerator; without one, the chip the trace recorded, where the course has it."""
        if hw is not None:
            return get_accelerator(hw)
        found = chip_for(self.device_name)
        if found is None:
            raise ValueError(f"this trace's device ({self.device_name or 'none recorded'!s}) is not one of the "
                             "course's chips: pass hw, a name from rl.list_accelerators()")
        return found

    def on_roofline(self, hw=None, top=6, ax=None):
        """The ``top`` longest placed rows (GEMMs, attention) as measured points on ``hw``'s roofline: (fig, ax)."""
        from ..plotting.rooflines import roofline_plot  # matplotlib loads with the figure, not with the room

        hw = self.chip(hw)
        rows = self.placed(hw)[:top]
        dtype = rows[0].row.dtype if rows else "bf16"
        points = [(r.row.shape, r.row.intensity, r.row.flops_per_s) for r in rows if r.row.dtype == dtype]
        return roofline_plot(hw, dtype, measured_points=points, ax=ax,
                             title=f"{self.path.name}: kernels with recorded shapes")

    def diagnose(self, hw=None):
        """Which of the four bottlenecks dominates this trace, with the evidence and what to try next
        (``diagnose.Diagnosis``)."""
        from .diagnose import diagnose

        return diagnose(self, hw)


def read(path, *, split_gap_s=SPLIT_GAP_S):
    """Read a profiler trace (Chrome-trace JSON, ``.json`` or ``.json.gz``) into a ``Trace``. A file that is not
    one, or is cut short, raises ValueError saying so. Gaps in GPU activity of ``split_gap_s`` seconds or more
    are reported as where the trace was split, not counted as idle: set it above the longest stall the
    workload really has, below the shortest pause of the profiler.

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    return Trace(path, split_gap_s)


__all__ = ["AttentionRow", "CollectiveRow", "GemmRow", "LaunchStats", "Placed", "SHORT_KERNEL_S", "SPLIT_GAP_S",
           "Trace", "WIRE_DTYPE_BYTES", "read"]
