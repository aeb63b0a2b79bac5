"""The learner's own accelerator, measured with PyTorch: a GPU (CUDA, or ROCm through torch's ``cuda`` API), an
Apple GPU (``mps``) or, without either, the CPU through torch.

    profile = rl.measure.measure_device()            # picks cuda, then mps, then cpu
    profile = rl.measure.measure_device("cpu", quick=True)
    hw = profile.accelerator                          # an Accelerator: every chapter that takes a chip takes it

PyTorch is an optional extra (``pip install ".[gpu]"`` from the course's folder): it is never imported by
``import roofline_lib``, and without it ``measure_device`` says what to install.

How it is kept honest (the methods of stas00's ``mamf-finder.py``, triton's ``do_bench``, STREAM and
nvbandwidth):

- timing: CUDA events around each call on a GPU (the host's clock would time the launch, not the kernel);
  ``synchronize`` and ``perf_counter`` elsewhere; warm-up calls first; the median, the minimum and the spread of
  several repeats are kept (``microbench.Timing``);
- a write over a buffer larger than the cache before each timed call, outside the timed region, so that no
  repeat finds its operands already in L2 (``plan().flush_bytes``);
- random inputs, never zeros (a GEMM on zeros runs faster: its multipliers toggle less);
- arrays of at least 4x the cache for bandwidth; copy, add and triad counted as STREAM counts them (every read
  and every write); nvbandwidth counts a copy's bytes once, half of that (``bandwidth_copied_once``);
- the best achieved matmul over a sweep of shapes per native format ("maximum achievable matmul FLOPS"): bf16,
  fp16 and fp8 where the chip has them, fp32 always;
- the cost of a launch: issued back to back (the host's enqueue rate), and each waited for (a round trip);
  on CUDA also a chain of small kernels replayed as a CUDA graph.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

from ..specs.hardware import Accelerator
from . import system
from .microbench import NotEnoughMemoryError
from .torch_timing import INSTALL, EventTimer, SyncTimer, _timer, _torch, time_on_device, timer_for, torch_status

GPU_FLUSH_BYTES = 256 * 2**20  # mamf-finder's L2 flush: 256 MiB, larger than any GPU's L2 so far
DEVICES = ("cuda", "mps", "cpu")
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


# ------------------------------------------------------------------ what the device is

@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """What torch says about a device, the inputs of ``plan``."""

    kind: str  # "cuda", "rocm", "mps" or "cpu"
    name: str
    total_memory: float  # bytes
    free_memory: float  # bytes a measurement may use a share of
    cache_bytes: float  # L2 (GPU) or last-level cache (CPU); 0 where unknown
    capability: tuple = ()  # CUDA compute capability (major, minor); () elsewhere
    arch: str = ""  # ROCm's gcnArchName ("gfx942" for MI300X)
    units: int = 0  # SMs or CUs


def pick_device(device=None, torch=None):
    """The device to measure: ``device`` checked, or the first of cuda, mps, cpu that torch can use."""
    torch = torch or _torch()
    if device is None:
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    kind = str(device).split(":")[0]
    if kind not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)} (or 'cuda:N'), got {device!r}")
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError("no CUDA device is visible to torch (torch.cuda.is_available() is False); "
                         "measure_device('cpu') measures the CPU")
    if kind == "mps" and not torch.backends.mps.is_available():
        raise ValueError("no Apple GPU is visible to torch (torch.backends.mps.is_available() is False)")
    return str(device)


def device_info(device, torch=None):
    """A ``DeviceInfo`` for ``device`` ("cuda", "cuda:1", "mps", "cpu") from torch and the operating system."""
    torch = torch or _torch()
    kind = device.split(":")[0]
    if kind == "cuda":
        index = int(device.split(":")[1]) if ":" in device else torch.cuda.current_device()
        p = torch.cuda.get_device_properties(index)
        free, total = torch.cuda.mem_get_info(index)
        rocm = bool(getattr(torch.version, "hip", None))
        return DeviceInfo("rocm" if rocm else "cuda", p.name, float(total), float(free),
                          float(getattr(p, "L2_cache_size", 0) or 0), (p.major, p.minor),
                          getattr(p, "gcnArchName", "") if rocm else "", p.multi_processor_count)
    total, available, _ = system.memory()
    cache = system.last_level_cache()[0]
    if kind == "mps":
        return DeviceInfo("mps", "Apple GPU (mps)", float(total), float(available), 0.0)
    return DeviceInfo("cpu", f"CPU via torch ({system.platform_name()})", float(total), float(available),
                      float(cache), units=torch.get_num_threads())


# ------------------------------------------------------------------ what to measure

@dataclasses.dataclass(frozen=True)
class Plan:
    """Sizes and formats for one device: ``stream_elements`` fp32 elements per array (three arrays),
    ``matmul_sizes`` square n x n per format, ``flush_bytes`` written before each timed call."""

    dtypes: tuple
    stream_elements: int
    matmul_sizes: tuple
    flush_bytes: int
    repeats: int
    needs_bytes: int


def native_dtypes(info):
    """The matmul formats the device has units for: fp32 always; on NVIDIA fp16 (Volta on), bf16 (Ampere on,
    compute capability 8.0) and fp8 (Ada and Hopper, 8.9 on); on AMD's CDNA 3 (gfx94x) bf16, fp16 and fp8; on
    an Apple GPU fp16; on a CPU fp32 only (torch's bf16 matmul on a CPU is not a tensor unit's)."""
    if info.kind == "cuda":
        cc = info.capability
        return ("fp32",) + (("fp16",) if cc >= (7, 0) else ()) + (("bf16",) if cc >= (8, 0) else ()) \
            + (("fp8",) if cc >= (8, 9) else ())
    if info.kind == "rocm":
        return ("fp32", "fp16", "bf16") + (("fp8",) if info.arch.startswith("gfx94") else ())
    if info.kind == "mps":
        return ("fp32", "fp16")
    return ("fp32",)


def plan(info, quick=False):
    """What ``measure_device`` will run on a device described by ``info`` (a ``DeviceInfo``, real or made up):
    arrays of at least 4x its cache (64 MiB each at least on a GPU), a flush larger than its cache, matmuls
    that fit an eighth of its free memory. Raises ``NotEnoughMemoryError`` when even the smallest plan does not."""
    gpu = info.kind in ("cuda", "rocm", "mps")
    cache = info.cache_bytes or (GPU_FLUSH_BYTES // 4 if gpu else 32 * 2**20)
    per_array = max(4 * cache, (64 if gpu else 16) * 2**20)
    if quick and not gpu:
        per_array = max(4 * cache, 16 * 2**20)
    n = int(per_array // 4)
    flush = int(max(GPU_FLUSH_BYTES if gpu else 2 * cache, 2 * cache))
    sizes = (4096,) if quick and gpu else ((2048, 4096, 8192) if gpu else ((512, 1024) if quick else (256, 512, 1024)))
    budget = info.free_memory / 8
    sizes = tuple(s for s in sizes if 3 * s * s * 4 <= budget)
    needs = 3 * n * 4 + flush
    if not sizes or needs > info.free_memory / 4:
        raise NotEnoughMemoryError(
            f"{info.name}: measuring needs about {needs / 1e9:.2f} GB (three arrays of {n * 4 / 1e9:.2f} GB and a "
            f"{flush / 1e9:.2f} GB cache flush), more than a quarter of its {info.free_memory / 1e9:.2f} GB free; "
            "close other programs using it, or measure another device")
    return Plan(native_dtypes(info), n, sizes, flush, 5 if quick else 11, needs)


# ------------------------------------------------------------------ the profile

@dataclasses.dataclass(frozen=True)
class DeviceProfile:
    """What ``measure_device`` found. ``accelerator`` has the measured roofs (best repeats, as STREAM and
    mamf-finder report them); ``timings`` keeps every kernel's median and spread."""

    accelerator: Accelerator
    device: str
    info: DeviceInfo
    plan: Plan
    bandwidth: dict  # kernel -> best byte/s, every read and write counted
    bandwidth_copied_once: float  # the copy's bytes counted once, as nvbandwidth counts them
    flops: dict  # dtype -> best FLOP/s over the matmul sizes
    best_matmul_size: dict  # dtype -> n of the best
    launch: dict  # "issue" (back to back) and "round trip" (each waited for): seconds per launch
    graph: dict  # "eager" and "graph": seconds per kernel of a chain; empty off CUDA
    timings: dict
    skipped: dict  # what was not measured, and why
    torch_version: str
    date: str

    def summary(self):
        """The measurement as printable lines: bandwidths, matmul peaks per dtype, launch costs, each with its
        spread."""
        lines = [f"{self.info.name} ({self.device}, torch {self.torch_version}), measured {self.date}"]
        for kernel, bw in self.bandwidth.items():
            t = self.timings[f"stream {kernel}"]
            lines.append(f"  {kernel:>5}: {bw / 1e9:8.1f} GB/s best (median {t.median * 1e3:.3f} ms, "
                         f"spread {t.spread:.1%})")
        lines.append(f"  copy with its bytes counted once (nvbandwidth): {self.bandwidth_copied_once / 1e9:.1f} GB/s")
        for dtype, f in self.flops.items():
            lines.append(f"  matmul {dtype:>4}: {f / 1e12:8.3f} TFLOP/s best (n = {self.best_matmul_size[dtype]})")
        lines.append(f"  launch: {self.launch['issue'] * 1e6:.1f} us issued back to back, "
                     f"{self.launch['round trip'] * 1e6:.1f} us each waited for")
        if self.graph:
            lines.append(f"  a chain of small kernels: {self.graph['eager'] * 1e6:.1f} us per kernel eager, "
                         f"{self.graph['graph'] * 1e6:.1f} us replayed as a CUDA graph")
        lines += [f"  not measured: {k}: {v}" for k, v in self.skipped.items()]
        return "\n".join(lines)

    def __repr__(self):
        return f"DeviceProfile({self.info.name!r}, {self.device})"


def _matmul_inputs(torch, dtype, n, device):
    gen = torch.Generator(device="cpu").manual_seed(n)
    a = torch.randn(n, n, generator=gen).to(device)
    b = torch.randn(n, n, generator=gen).to(device)
    if dtype == "fp8":
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.to(torch.float8_e4m3fn).t().contiguous().t()  # column-major, as _scaled_mm needs
        one = torch.ones((), device=device)
        return lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    t = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    a, b = a.to(t), b.to(t)
    out = torch.empty(n, n, dtype=t, device=device)
    return lambda: torch.matmul(a, b, out=out)


def measure_device(device=None, quick=False):
    """Measure ``device`` (None: cuda, else mps, else cpu) with PyTorch: a ``DeviceProfile`` whose
    ``.accelerator`` drops into every chapter that takes a chip (module docstring for the methods).

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb)."""
    torch = _torch()
    device = pick_device(device, torch)
    info = device_info(device, torch)
    p = plan(info, quick)
    timer = _timer(torch, device)
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32: TF32 is a different roof
    flush_buf = torch.empty(p.flush_bytes // 4, dtype=torch.float32, device=device)

    def flush():
        flush_buf.fill_(1.0)  # a write over more than the cache evicts the last call's operands

    timings, skipped = {}, {}
    gen = torch.Generator(device="cpu").manual_seed(0)
    a, b, c = (torch.rand(p.stream_elements, generator=gen).add_(1.0).to(device) for _ in range(3))
    kernels = {"copy": (lambda: c.copy_(a), 2), "add": (lambda: torch.add(a, b, out=c), 3),
               "triad": (lambda: torch.add(b, c, alpha=3.0, out=a), 3)}
    bandwidth = {}
    for name, (fn, words) in kernels.items():
        t = time_on_device(fn, timer, repeats=p.repeats, flush=flush)
        timings[f"stream {name}"] = t
        bandwidth[name] = t.best_rate(words * p.stream_elements * 4)
    copied_once = bandwidth["copy"] / 2

    flops, best_n = {}, {}
    for dtype in p.dtypes:
        for n in p.matmul_sizes:
            try:
                fn = _matmul_inputs(torch, dtype, n, device)
                t = time_on_device(fn, timer, repeats=p.repeats, flush=flush)
            except (RuntimeError, TypeError, AttributeError) as exc:  # a format torch cannot run here
                skipped[f"matmul {dtype}"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                break
            timings[f"matmul {dtype} {n}"] = t
            rate = t.best_rate(2 * n ** 3)
            if rate > flops.get(dtype, 0):
                flops[dtype], best_n[dtype] = rate, n

    launch, graph = _launch_costs(torch, device, timer, skipped, quick)
    name = f"{info.name} (measured)"
    hw = Accelerator(name=name, peak_flops_by_dtype=flops, mem_bandwidth=max(bandwidth["add"], bandwidth["triad"]),
                     mem_capacity=info.total_memory, vendor="measured",
                     notes=f"measured by rl.measure.measure_device({device!r}) with torch {torch.__version__}")
    return DeviceProfile(hw, device, info, p, bandwidth, copied_once, flops, best_n, launch, graph, timings,
                         skipped, str(torch.__version__), time.strftime("%Y-%m-%d"))


def launch_costs(device=None, quick=True):
    """Only the launch measurement of ``measure_device``: ({"issue", "round trip"} seconds per launch, {"eager",
    "graph"} seconds per kernel of a chain on CUDA or {}, {what was skipped: why}).

    Taught in chapter 08 (notebooks/08_overhead_bound.ipynb)."""
    torch = _torch()
    device = pick_device(device, torch)
    skipped = {}
    launch, graph = _launch_costs(torch, device, _timer(torch, device), skipped, quick)
    return launch, graph, skipped


def _launch_costs(torch, device, timer, skipped, quick):
    """Seconds per launch of a one-element add: issued back to back, and each waited for; on CUDA, a chain of
    such kernels eager and as a CUDA graph."""
    sync = torch.cuda.synchronize if device.startswith("cuda") else (
        torch.mps.synchronize if device == "mps" else (lambda: None))
    x = torch.ones(1, device=device)
    count = 200 if quick else 1000
    rounds = []
    for _ in range(5):
        sync()
        start = time.perf_counter()
        for _ in range(count):
            x.add_(1.0)
        sync()
        rounds.append((time.perf_counter() - start) / count)
    trips = []
    for _ in range(count // 10):
        start = time.perf_counter()
        x.add_(1.0)
        sync()
        trips.append(time.perf_counter() - start)
    launch = {"issue": min(rounds), "round trip": statistics.median(trips)}
    graph = {}
    if not device.startswith("cuda"):
        skipped["CUDA graph"] = "CUDA graphs need a CUDA device"
        return launch, graph
    chain = 20

    def eager():
        for _ in range(chain):
            x.add_(1.0)

    try:
        g = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            eager()  # warm-up on a side stream, as capture requires
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(g):
            eager()
        graph = {"eager": time_on_device(eager, timer, repeats=7).median / chain,
                 "graph": time_on_device(g.replay, timer, repeats=7).median / chain}
    except RuntimeError as exc:
        skipped["CUDA graph"] = f"RuntimeError: {str(exc).splitlines()[0][:120]}"
    return launch, graph


__all__ = ["DEVICES", "DeviceInfo", "DeviceProfile", "EventTimer", "GPU_FLUSH_BYTES", "INSTALL", "Plan", "SyncTimer",
           "device_info", "launch_costs", "measure_device", "native_dtypes", "pick_device", "plan", "time_on_device",
           "timer_for", "torch_status"]
