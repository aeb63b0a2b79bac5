"""An empirical roofline of the machine the notebook runs on.

    profile = rl.measure.measure_machine()          # ~10 s, with progress lines
    profile = rl.measure.measure_machine(quick=True) # ~2 s, for notebooks
    hw = profile.accelerator                         # an Accelerator like the datasheet ones
    t = rl.measure.time_kernel(np.add, x, y)         # median of repeats, with the spread

What is measured, and how it is kept honest:

- memory bandwidth with STREAM's copy (a = b) and triad (a = b + s*c) over
  fp64 arrays whose footprint is several times the last-level cache, split
  over one thread per core (numpy ufuncs release the GIL). Bytes are counted
  as STREAM counts them: 2 words per element for copy, 3 for triad (the
  write-allocate read of the destination is not counted, as in STREAM);
- peak FLOP/s from large matrix products (2 n^3 FLOPs) in fp64 and fp32;
- the per-call overhead of a tiny numpy operation (one element).

Every figure is the median of several timed repeats after a warm-up, with
the spread (interquartile range / median) and the raw samples kept. Inputs
are random, never all zero; no measurement allocates more than a quarter of
the memory the system reports available.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .hardware import Accelerator

# STREAM's byte counts, in words (array elements) per element of the loop.
STREAM_WORDS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}
TRIAD_SCALAR = 3.0
FALLBACK_LLC_BYTES = 32 * 2**20
MEMORY_FRACTION = 0.25


# ------------------------------------------------------------------ the system

def stream_bytes(kernel, n, itemsize=8):
    """Bytes STREAM counts for one pass of ``kernel`` over n elements of ``itemsize`` bytes."""
    if kernel not in STREAM_WORDS:
        raise ValueError(f"unknown STREAM kernel {kernel!r}; known: {', '.join(STREAM_WORDS)}")
    if n <= 0 or itemsize <= 0:
        raise ValueError(f"n and itemsize must be > 0, got n={n}, itemsize={itemsize}")
    return STREAM_WORDS[kernel] * n * itemsize


def cache_sizes(sysfs="/sys/devices/system/cpu/cpu0/cache"):
    """{level: bytes} of the unified/data caches cpu0 sees, read from sysfs ({} if unreadable)."""
    sizes = {}
    for index in sorted(pathlib.Path(sysfs).glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes[level] = max(sizes.get(level, 0), int(digits) * scale)
    return sizes


def last_level_cache(sysfs="/sys/devices/system/cpu/cpu0/cache"):
    """(bytes, where the figure came from): the highest cache level in sysfs, or a stated fallback."""
    sizes = cache_sizes(sysfs)
    if sizes:
        level = max(sizes)
        return sizes[level], f"L{level} from {sysfs}"
    return FALLBACK_LLC_BYTES, (f"could not read cache sizes from {sysfs}; assuming "
                                f"{FALLBACK_LLC_BYTES // 2**20} MiB (pass llc_bytes= to override)")


def _meminfo(field):
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_memory():
    """Bytes of memory the system says are available (MemAvailable; sysconf as a fallback)."""
    value = _meminfo("MemAvailable")
    if value is None:
        value = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return value


def total_memory():
    """Bytes of RAM in the machine (MemTotal; sysconf as a fallback)."""
    value = _meminfo("MemTotal")
    if value is None:
        value = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return value


def core_count():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class NotEnoughMemoryError(MemoryError):
    """A measurement would need more than its share of the available memory."""


def check_allocation(nbytes, available=None, fraction=MEMORY_FRACTION):
    """Refuse to allocate ``nbytes`` if that is more than ``fraction`` of the available memory."""
    available = available_memory() if available is None else available
    limit = fraction * available
    if nbytes > limit:
        raise NotEnoughMemoryError(
            f"this measurement needs {nbytes / 1e9:.2f} GB but may use at most {fraction:.0%} of the "
            f"{available / 1e9:.2f} GB available ({limit / 1e9:.2f} GB). Close other programs, or pass a "
            f"smaller array_bytes= (the figure is then less certain to exceed the cache).")
    return nbytes


def require_nonzero(*arrays, what="input"):
    """Raise ValueError if any of ``arrays`` is all zeros: hardware runs faster on zeros, so such
    timings flatter the machine (and compilers or caches may short-cut them)."""
    for i, arr in enumerate(arrays):
        arr = np.asarray(arr)
        if arr.size and np.issubdtype(arr.dtype, np.number) and not np.any(arr):
            raise ValueError(f"{what} #{i} (shape {arr.shape}, {arr.dtype}) is all zeros; time on random "
                             "data instead, e.g. np.random.default_rng(0).random(n)")


# ------------------------------------------------------------------ timing

@dataclasses.dataclass(frozen=True)
class Timing:
    """Seconds per call: one sample per timed repeat (each the mean of ``number`` calls)."""

    samples: np.ndarray
    number: int = 1

    @property
    def median(self):
        return float(np.median(self.samples))

    @property
    def min(self):
        return float(np.min(self.samples))

    @property
    def max(self):
        return float(np.max(self.samples))

    @property
    def spread(self):
        """Interquartile range / median: 0.05 means the middle half of the repeats lie within 5%."""
        q25, q75 = np.percentile(self.samples, [25, 75])
        return float((q75 - q25) / self.median)

    def rate(self, amount):
        """``amount`` (FLOPs, bytes) per second at the median time."""
        return amount / self.median

    def __repr__(self):
        return (f"Timing(median={self.median:.4g} s, min={self.min:.4g} s, max={self.max:.4g} s, "
                f"spread={self.spread:.1%}, repeats={len(self.samples)}, calls per repeat={self.number})")


def time_kernel(fn, *args, repeats=7, warmup=1, number=None, min_sample_time=2e-3, clock=time.perf_counter,
                **kwargs):
    """Time ``fn(*args, **kwargs)``: warm-up calls, then ``repeats`` timed samples; returns a Timing.

    Each sample runs the call ``number`` times and records the mean; by default ``number`` is
    chosen so a sample lasts at least ``min_sample_time`` (the clock's resolution and a single
    call's jitter then stop mattering). Positional array arguments are the inputs and must not be
    all zeros; pass output buffers as keywords (``out=``), they are not checked.
    """
    if not callable(fn):
        raise ValueError(f"time_kernel needs a callable, got {type(fn).__name__}")
    if not (isinstance(repeats, int) and repeats >= 1) or not (isinstance(warmup, int) and warmup >= 0):
        raise ValueError(f"repeats must be an int >= 1 and warmup an int >= 0, got {repeats}, {warmup}")
    require_nonzero(*[a for a in args if isinstance(a, np.ndarray)], what="time_kernel input")
    for _ in range(warmup):
        fn(*args, **kwargs)
    if number is None:
        number = 1
        while True:  # grow the batch until one sample is long enough (like timeit.autorange)
            start = clock()
            for _ in range(number):
                fn(*args, **kwargs)
            elapsed = clock() - start
            if elapsed >= min_sample_time or number >= 1_000_000:
                break
            number *= 10 if elapsed < min_sample_time / 10 else 2
    elif not (isinstance(number, int) and number >= 1):
        raise ValueError(f"number must be an int >= 1, got {number!r}")
    samples = np.empty(repeats)
    for r in range(repeats):
        start = clock()
        for _ in range(number):
            fn(*args, **kwargs)
        samples[r] = (clock() - start) / number
    if not np.all(np.isfinite(samples)) or np.any(samples <= 0):
        raise ValueError(f"the clock gave non-positive or non-finite times ({samples}); "
                         "the kernel is shorter than the clock's resolution: time more calls per sample")
    return Timing(samples, number)


# ------------------------------------------------------------------ kernels

def random_fill(arrays, threads, seed=0, tile=1 << 16):
    """Fill arrays with random values in [1, 2) (never zero), one thread per chunk.

    One random tile is copied over each array, so the fill runs at memory speed and the
    pages are first touched by the threads that later use them.
    """
    rng = np.random.default_rng(seed)
    source = 1.0 + rng.random(tile)

    def fill(arr, lo, hi):
        view = arr[lo:hi]
        src = source.astype(arr.dtype)
        whole = (hi - lo) // tile * tile
        if whole:
            view[:whole].reshape(-1, tile)[:] = src
        view[whole:] = src[: hi - lo - whole]

    with ThreadPoolExecutor(threads) as pool:
        for arr in arrays:
            chunks = _chunks(arr.size, threads)
            list(pool.map(fill, [arr] * threads, [lo for lo, _ in chunks], [hi for _, hi in chunks]))


def _chunks(n, parts):
    return [(i * n // parts, (i + 1) * n // parts) for i in range(parts)]


class StreamKernels:
    """STREAM's copy, add and triad over three arrays, split over ``threads`` threads.

    The triad a = b + s*c takes two numpy passes (multiply, then add). Done over whole
    arrays it would read and write ``a`` twice from memory (5 words per element instead of
    STREAM's 3), so each thread walks its chunk in blocks of ``block`` elements small
    enough to stay in the core's L2 between the two passes: memory then sees what STREAM
    counts (read b and c, write a).
    """

    def __init__(self, n, threads, dtype=np.float64, block=1 << 16, seed=0, chunks_per_thread=8):
        self.n, self.threads, self.block = n, threads, block
        check_allocation(3 * n * np.dtype(dtype).itemsize)
        self.a, self.b, self.c = (np.empty(n, dtype) for _ in range(3))
        random_fill((self.a, self.b, self.c), threads, seed)
        require_nonzero(self.b, self.c, what="STREAM array")
        self.pool = ThreadPoolExecutor(threads)
        # more chunks than threads, handed out as threads free up: if another program takes a
        # core for a moment, the other threads take over its share instead of waiting for it
        self.parts = _chunks(n, threads * chunks_per_thread)
        self.blocks = [[(self.a[j:min(j + block, hi)], self.b[j:min(j + block, hi)], self.c[j:min(j + block, hi)])
                        for j in range(lo, hi, block)] for lo, hi in self.parts]

    def _copy_part(self, i):
        lo, hi = self.parts[i]
        np.copyto(self.a[lo:hi], self.b[lo:hi])

    def _add_part(self, i):
        lo, hi = self.parts[i]
        np.add(self.b[lo:hi], self.c[lo:hi], out=self.a[lo:hi])

    def _triad_part(self, i):
        multiply, add, s = np.multiply, np.add, TRIAD_SCALAR
        for a, b, c in self.blocks[i]:
            multiply(c, s, out=a)
            add(a, b, out=a)

    def copy(self):
        list(self.pool.map(self._copy_part, range(len(self.parts))))

    def add(self):
        list(self.pool.map(self._add_part, range(len(self.parts))))

    def triad(self):
        list(self.pool.map(self._triad_part, range(len(self.parts))))

    def close(self):
        self.pool.shutdown()
        self.a = self.b = self.c = self.blocks = None


def horner(x, degree, out, block=1 << 14):
    """out = x^d + x^(d-1) + ... + 1 by Horner's rule, in cache-sized blocks.

    Memory traffic is fixed (read x, write out: 2 words per element) while the FLOPs
    grow with ``degree`` (exactly one multiply and one add per degree and element, starting
    from y = 1, so ``horner_flops`` is the count executed): the knob of the "raise the FLOPs
    at fixed bytes" experiment.
    """
    degree = int(degree)
    if degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree}")
    multiply, add = np.multiply, np.add
    for j in range(0, x.size, block):
        xs, ys = x[j:j + block], out[j:j + block]
        ys.fill(1.0)
        for _ in range(degree):
            multiply(ys, xs, out=ys)
            add(ys, 1.0, out=ys)
    return out


def horner_flops(n, degree):
    """FLOPs of ``horner`` over n elements: one multiply and one add per degree and element."""
    return 2.0 * degree * n


def strided_bytes(n, stride, itemsize=8, line=64):
    """Bytes memory moves for ``horner`` reading every ``stride``-th element of x and writing n.

    Memory moves whole cache lines: reading with stride s fetches min(s * itemsize, line)
    bytes per element used, so a stride is a knob that raises the bytes at fixed FLOPs.
    """
    if stride < 1 or n <= 0:
        raise ValueError(f"stride must be >= 1 and n > 0, got stride={stride}, n={n}")
    return n * (min(stride * itemsize, line) + itemsize)


# ------------------------------------------------------------------ the profile

@dataclasses.dataclass(frozen=True)
class MachineProfile:
    """What ``measure_machine`` found: an Accelerator plus everything needed to judge it.

    Figures are medians; ``summary()`` also shows the best repeat, the one least slowed by
    other programs (STREAM itself reports the best).
    """

    accelerator: Accelerator
    overhead_per_call: float  # s, one tiny numpy call
    bandwidth: dict  # kernel -> median byte/s (STREAM counting)
    flops: dict  # dtype -> median FLOP/s
    timings: dict  # name -> Timing (raw samples)
    spreads: dict  # name -> interquartile range / median of the samples
    array_bytes: int  # bytes per STREAM array
    llc_bytes: int
    llc_source: str
    threads: int
    matmul_n: int
    quick: bool
    load_average: tuple  # 1-minute load before and after (after includes this measurement itself)
    seconds: float  # wall time of the whole measurement
    warnings: tuple = ()

    def summary(self):
        lines = [f"{self.accelerator.name}: {self.threads} threads, {self.seconds:.1f} s, "
                 f"1-min load {self.load_average[0]:.2f} -> {self.load_average[1]:.2f}"]
        for kernel, value in self.bandwidth.items():
            best = value * self.timings[kernel].median / self.timings[kernel].min
            lines.append(f"  {kernel:>6} bandwidth  {value / 1e9:8.2f} GB/s     spread {self.spreads[kernel]:6.1%}"
                         f"  best {best / 1e9:.2f}")
        for dtype, value in self.flops.items():
            key = f"matmul_{dtype}"
            best = value * self.timings[key].median / self.timings[key].min
            lines.append(f"  {dtype:>6} matmul     {value / 1e9:8.2f} GFLOP/s  spread {self.spreads[key]:6.1%}"
                         f"  best {best / 1e9:.2f}  (n = {self.matmul_n})")
        lines.append(f"  tiny-call overhead {self.overhead_per_call * 1e6:8.3f} us    "
                     f"spread {self.spreads['tiny_call']:6.1%}")
        lines.append(f"  STREAM arrays 3 x {self.array_bytes / 2**20:.0f} MiB; last-level cache "
                     f"{self.llc_bytes / 2**20:.0f} MiB ({self.llc_source})")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def __repr__(self):
        return self.summary()


def memory_roof(bandwidth):
    """The memory roof from STREAM figures: the better of add and triad (medians).

    Both read two arrays and write one, the traffic of most elementwise kernels, and STREAM
    counts them alike (3 words per element; the cache's read of the destination line before it
    is written is not counted). Copy is reported but not used: numpy's copy is the C library's
    memcpy, which above a size threshold of its own switches to streaming stores that skip that
    extra read, so its figure depends on the copy size as much as on the memory (on the machine
    this was written on: ~25 GB/s in 40 MB pieces, ~45 GB/s in 300 MB pieces).
    """
    return max(bandwidth["add"], bandwidth["triad"])


def _say(progress, text):
    if progress:
        print(text, flush=True, file=sys.stdout)


def measure_machine(quick=False, *, threads=None, array_bytes=None, llc_bytes=None, llc_multiple=4,
                    matmul_n=None, repeats=None, progress=None, available=None):
    """Measure this machine's memory bandwidth, peak matmul FLOP/s and per-call overhead.

    quick         a ~1 s version for notebooks: smaller arrays (which may not exceed the cache:
                  the profile says so in ``warnings``) and smaller matrices
    threads       threads for the STREAM kernels (default: one per core); the matrix products use
                  the BLAS library's own threads (normally one per core too)
    array_bytes   bytes per STREAM array; default: the three arrays together are ``llc_multiple``
                  times the last-level cache (at least 64 MiB each)
    progress      print a line per step (default: on for the full measurement)
    available     bytes of available memory to plan against (default: read from the system)
    """
    start = time.perf_counter()
    load_before = os.getloadavg()[0]
    progress = (not quick) if progress is None else progress
    threads = threads or core_count()
    if llc_bytes is None:
        llc_bytes, llc_source = last_level_cache()
    else:
        llc_source = "given"
    warnings = []
    if "could not read" in llc_source:
        warnings.append(llc_source)
    if array_bytes is None:
        array_bytes = max(llc_multiple * llc_bytes / 3, 64 * 2**20)
        if quick:
            array_bytes = min(array_bytes, 64 * 2**20)
    n = int(array_bytes // 8)
    if n < 1024 * threads:
        raise ValueError(f"array_bytes={array_bytes} is too small: need at least {1024 * threads * 8} bytes")
    check_allocation(3 * n * 8, available)
    if 3 * n * 8 < llc_multiple * llc_bytes:
        warnings.append(f"the STREAM arrays ({3 * n * 8 / 2**20:.0f} MiB together) are less than {llc_multiple}x "
                        f"the last-level cache ({llc_bytes / 2**20:.0f} MiB): part of the traffic may be "
                        "served by the cache; run measure_machine() for the full measurement")
    repeats = repeats or (7 if quick else 15)
    matmul_n = matmul_n or (768 if quick else 2048)
    timings = {}

    _say(progress, f"[1/4] STREAM arrays: 3 x {n * 8 / 2**20:.0f} MiB, {threads} threads (filling with random data)")
    kernels = StreamKernels(n, threads)
    try:
        for name in ("copy", "add", "triad"):
            timings[name] = time_kernel(getattr(kernels, name), repeats=repeats, warmup=1, number=1)
            _say(progress, f"      {name}: {timings[name].rate(stream_bytes(name, n)) / 1e9:.2f} GB/s")
    finally:
        kernels.close()
    bandwidth = {k: timings[k].rate(stream_bytes(k, n)) for k in ("copy", "add", "triad")}

    _say(progress, f"[2/4] matrix products, n = {matmul_n}")
    rng = np.random.default_rng(1)
    flops = {}
    for dtype, np_dtype in (("fp64", np.float64), ("fp32", np.float32)):
        check_allocation(3 * matmul_n**2 * np.dtype(np_dtype).itemsize, available)
        x = rng.random((matmul_n, matmul_n)).astype(np_dtype) + 0.5
        y = rng.random((matmul_n, matmul_n)).astype(np_dtype) + 0.5
        out = np.empty_like(x)
        timings[f"matmul_{dtype}"] = time_kernel(np.matmul, x, y, out=out, repeats=repeats, warmup=1, number=1)
        flops[dtype] = timings[f"matmul_{dtype}"].rate(2.0 * matmul_n**3)
        _say(progress, f"      {dtype}: {flops[dtype] / 1e9:.1f} GFLOP/s")

    _say(progress, "[3/4] per-call overhead of a one-element numpy add")
    one, two, res = np.array([1.5]), np.array([2.5]), np.empty(1)
    # many short samples: a median over 15 is robust to other programs taking the core for a moment
    timings["tiny_call"] = time_kernel(np.add, one, two, out=res, repeats=max(repeats, 15), min_sample_time=2e-3)
    overhead = timings["tiny_call"].median

    _say(progress, "[4/4] done")
    load_after = os.getloadavg()[0]
    # the load after includes this measurement's own threads, so only the load before is judged
    if load_before > 0.5 * threads:
        warnings.append(f"the machine was busy (1-min load {load_before:.2f} on {threads} cores before the "
                        "measurement): other programs share the memory bus and cores")
    hw = Accelerator(
        name="this machine (measured)",
        vendor="measured",
        peak_flops_by_dtype=dict(flops),
        mem_bandwidth=memory_roof(bandwidth),
        mem_capacity=float(total_memory()),
        compute_units=threads,
        sources={"mem_bandwidth": f"best median of STREAM add and triad, {threads} threads",
                 "peak_flops": f"np.matmul median, n = {matmul_n}"},
        notes="measured by roofline_lib.measure.measure_machine",
    )
    return MachineProfile(
        accelerator=hw, overhead_per_call=overhead, bandwidth=bandwidth, flops=flops, timings=timings,
        spreads={k: t.spread for k, t in timings.items()}, array_bytes=n * 8, llc_bytes=int(llc_bytes),
        llc_source=llc_source, threads=threads, matmul_n=matmul_n, quick=quick,
        load_average=(load_before, load_after), seconds=time.perf_counter() - start, warnings=tuple(warnings),
    )


def agreement(values):
    """(max - min) / median of repeated figures: 0.1 means they agree within 10%."""
    values = np.asarray(values, dtype=float)
    if values.size < 2 or np.any(~np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"agreement needs at least two finite positive figures, got {values}")
    return float((values.max() - values.min()) / np.median(values))


def classify_response(t_base, t_more_flops, t_more_bytes, flop_factor, byte_factor):
    """The seed's diagnostic: which bottleneck does a kernel's time respond to?

    t_base         time of the kernel as it is
    t_more_flops   time with ``flop_factor`` times the FLOPs (bytes as unchanged as possible)
    t_more_bytes   time with ``byte_factor`` times the bytes (FLOPs unchanged)
    Each response is log(t_more / t_base) / log(factor): 1 means time grows in proportion,
    0 means it does not move. Returns (verdict, flop_response, byte_response) with verdict
    "overhead" (neither moves the time), "compute" or "memory" (one moves it clearly more than
    the other), or "near the knee" (both move it: the rule is a diagnostic, not a definition).
    """
    for name, value in (("t_base", t_base), ("t_more_flops", t_more_flops), ("t_more_bytes", t_more_bytes)):
        if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive time in seconds, got {value!r}")
    for name, value in (("flop_factor", flop_factor), ("byte_factor", byte_factor)):
        if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 1):
            raise ValueError(f"{name} must be > 1, got {value!r}")
    r_flops = math.log(t_more_flops / t_base) / math.log(flop_factor)
    r_bytes = math.log(t_more_bytes / t_base) / math.log(byte_factor)
    if r_flops < 0.25 and r_bytes < 0.25:
        verdict = "overhead"
    elif r_flops >= 0.5 and r_flops - r_bytes >= 0.3:
        verdict = "compute"
    elif r_bytes >= 0.5 and r_bytes - r_flops >= 0.3:
        verdict = "memory"
    else:
        verdict = "near the knee"
    return verdict, r_flops, r_bytes
