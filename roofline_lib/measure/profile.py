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
import sys
import time

import numpy as np

from ..specs.hardware import Accelerator
from . import system
from .microbench import (
    MEMORY_FRACTION,
    StreamKernels,
    Timing,
    check_allocation,
    stream_bytes,
    time_kernel,
)

# ------------------------------------------------------------------ the profile

OVERHEAD_PERCENTILE = 10


@dataclasses.dataclass(frozen=True)
class MachineProfile:
    """What ``measure_machine`` found: an Accelerator plus everything needed to judge it.

    The roofs are best-of figures, as STREAM and LINPACK report them: the fastest repeat is the one
    least slowed by other programs, and a roof is what the machine can sustain. The medians and
    spreads are kept beside them (``timings``), so a reader sees how much the repeats moved.
    """

    accelerator: Accelerator
    overhead_per_call: float  # s, one tiny numpy call: low percentile of many samples
    bandwidth: dict  # kernel -> best byte/s (STREAM counting)
    flops: dict  # dtype -> best FLOP/s over the matrix sizes and repeats
    timings: dict  # name -> Timing (raw samples)
    spreads: dict  # name -> interquartile range / median of the samples
    array_bytes: int  # bytes per STREAM array
    llc_bytes: int
    llc_source: str
    threads: int
    matmul_n: int  # the largest matrix size tried
    quick: bool
    load_average: tuple  # 1-minute load before and after (None where the platform has none)
    seconds: float  # wall time of the whole measurement
    warnings: tuple = ()
    cache_bandwidth: float = float("nan")  # byte/s of an add whose arrays sit in each core's L2, x threads
    matmul_sizes: tuple = ()
    best_matmul_n: dict = dataclasses.field(default_factory=dict)  # dtype -> the size that set the peak
    platform: str = ""

    @property
    def cache_roof(self):
        """An Accelerator like ``accelerator`` whose memory roof is the cache bandwidth: the roof for
        kernels whose data fits in the cache."""
        return dataclasses.replace(self.accelerator, name="cache roof (measured)",
                                   mem_bandwidth=self.cache_bandwidth)

    def summary(self):
        """The measurement as printable lines: load, bandwidths, matmul peaks and overhead, each with its spread."""
        load = ("no load average on this platform" if self.load_average[0] is None else
                f"1-min load {self.load_average[0]:.2f} -> {self.load_average[1]:.2f}")
        lines = [f"{self.accelerator.name}: {self.platform}, {self.threads} threads, {self.seconds:.1f} s, {load}"]
        for kernel, value in self.bandwidth.items():
            t = self.timings[kernel]
            lines.append(f"  {kernel:>6} bandwidth  best {value / 1e9:8.2f} GB/s      median "
                         f"{value * t.min / t.median / 1e9:8.2f}, spread {t.spread:6.1%}")
        lines.append(f"  memory roof        {self.accelerator.mem_bandwidth / 1e9:8.2f} GB/s (best of add and triad)")
        lines.append(f"  cache roof         {self.cache_bandwidth / 1e9:8.2f} GB/s (add in L2, x {self.threads} cores)")
        for dtype, value in self.flops.items():
            n = self.best_matmul_n[dtype]
            t = self.timings[f"matmul_{dtype}_{n}"]
            lines.append(f"  {dtype:>6} peak       best {value / 1e9:8.2f} GFLOP/s   median "
                         f"{value * t.min / t.median / 1e9:8.2f}, spread {t.spread:6.1%} (n = {n} of "
                         f"{', '.join(map(str, self.matmul_sizes))})")
        t = self.timings["tiny_call"]
        lines.append(f"  tiny-call overhead {self.overhead_per_call * 1e9:8.0f} ns (p{OVERHEAD_PERCENTILE} of "
                     f"{len(t.samples)} samples; min {t.min * 1e9:.0f}, median {t.median * 1e9:.0f}, "
                     f"spread {t.spread:.1%})")
        lines.append(f"  STREAM arrays 3 x {self.array_bytes / 2**20:.0f} MiB; last-level cache "
                     f"{self.llc_bytes / 2**20:.0f} MiB ({self.llc_source})")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def __repr__(self):
        return self.summary()


def memory_roof(bandwidth):
    """The memory roof from STREAM figures: the better of add and triad.

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


def measure_overhead(repeats=61, min_sample_time=2e-4):
    """Timing of a one-element numpy add: many short samples (each the mean of a few hundred calls).

    The per-call overhead is a low percentile of them (``OVERHEAD_PERCENTILE``): a sample slowed by
    another program is an outlier upwards, never downwards.
    """
    one, two, res = np.array([1.5]), np.array([2.5]), np.empty(1)
    return time_kernel(np.add, one, two, out=res, repeats=repeats, warmup=3, min_sample_time=min_sample_time)


def measure_cache_bandwidth(l2_bytes, threads, repeats=15):
    """(byte/s, Timing): an fp64 add whose three arrays fill half of one core's L2, times ``threads``
    (each core has its own L2). A roof for kernels whose data sits in the caches."""
    n = max(int(l2_bytes // 2 // 24), 256)
    x = np.random.default_rng(2).random(n) + 1.0
    y, out = x[::-1].copy(), np.empty(n)
    t = time_kernel(np.add, x, y, out=out, repeats=repeats, warmup=2, min_sample_time=1e-3)
    return threads * t.best_rate(24.0 * n), t


def measure_matmul_peak(dtype, sizes, repeats, available=None, seed=1):
    """(best FLOP/s, the size that gave it, {size: Timing}) of np.matmul over ``sizes``: the best
    sustained figure over sizes and repeats, as LINPACK reports its best run."""
    best, best_n, timings = measure_matmul_peaks((dtype,), sizes, repeats, available, seed)
    return best[dtype], best_n[dtype], timings[dtype]


def measure_matmul_peaks(dtypes, sizes, repeats, available=None, seed=1):
    """Like ``measure_matmul_peak`` for several dtypes at once, their repeats interleaved (one call of
    each dtype in turn), so that other programs slow them alike and their ratio stays sound."""
    np_dtypes = {"fp64": np.float64, "fp32": np.float32}
    rng = np.random.default_rng(seed)
    best = {d: 0.0 for d in dtypes}
    best_n = {d: None for d in dtypes}
    timings = {d: {} for d in dtypes}
    for n in sizes:
        operands = {}
        for d in dtypes:
            check_allocation(3 * n**2 * np.dtype(np_dtypes[d]).itemsize, available)
            x = (rng.random((n, n)) + 0.5).astype(np_dtypes[d])
            y = (rng.random((n, n)) + 0.5).astype(np_dtypes[d])
            operands[d] = (x, y, np.empty_like(x))
            np.matmul(x, y, out=operands[d][2])  # warm-up
        samples = {d: [] for d in dtypes}
        for _ in range(repeats):
            for d in dtypes:
                samples[d].append(time_kernel(np.matmul, *operands[d][:2], out=operands[d][2], repeats=1,
                                              warmup=0, number=1).samples[0])
        for d in dtypes:
            timings[d][n] = Timing(np.array(samples[d]), 1)
            rate = timings[d][n].best_rate(2.0 * n**3)
            if rate > best[d]:
                best[d], best_n[d] = rate, n
    return best, best_n, timings


def measure_machine(quick=False, *, threads=None, array_bytes=None, llc_bytes=None, llc_multiple=4,
                    matmul_n=None, matmul_sizes=None, repeats=None, progress=None, available=None):
    """Measure this machine's memory bandwidth, peak matmul FLOP/s and per-call overhead.

    quick         a ~2 s version for notebooks: smaller arrays (which may not exceed the cache:
                  the profile says so in ``warnings``) and smaller matrices
    threads       threads for the STREAM kernels (default: one per core); the matrix products use
                  the BLAS library's own threads (normally one per core too)
    array_bytes   bytes per STREAM array; default: the three arrays together are ``llc_multiple``
                  times the last-level cache (at least 64 MiB each)
    matmul_sizes  matrix sizes to try (default 256, 512, 1024 quick; 512, 1024, 2048 full); the peak is
                  the best over sizes and repeats. ``matmul_n`` alone tries that one size
    progress      print a line per step (default: on for the full measurement)
    available     bytes of available memory to plan against (default: read from the system)

    Figures the operating system could not give (load average, memory, cache sizes) are replaced by
    stated assumptions, listed in the profile's ``warnings``.

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb); also used in chapter 08.
    """
    start = time.perf_counter()
    info = system.probe()
    warnings = list(info.warnings)
    load_before = info.load_average
    progress = (not quick) if progress is None else progress
    threads = threads or info.cores
    if llc_bytes is None:
        llc_bytes, llc_source = info.llc_bytes, info.llc_source
    else:
        llc_source = "given"
    available = info.available_memory if available is None else available
    if array_bytes is None:
        array_bytes = max(llc_multiple * llc_bytes / 3, 64 * 2**20)
        if quick:
            array_bytes = min(array_bytes, 64 * 2**20)
        array_bytes = min(array_bytes, MEMORY_FRACTION * available / 3)
    n = int(array_bytes // 8)
    if n < 1024 * threads:
        raise ValueError(f"array_bytes={array_bytes} is too small: need at least {1024 * threads * 8} bytes")
    check_allocation(3 * n * 8, available)
    if 3 * n * 8 < llc_multiple * llc_bytes:
        warnings.append(f"the STREAM arrays ({3 * n * 8 / 2**20:.0f} MiB together) are less than {llc_multiple}x "
                        f"the last-level cache ({llc_bytes / 2**20:.0f} MiB): part of the traffic may be "
                        "served by the cache, so the memory roof may be high")
    repeats = repeats or (7 if quick else 10)
    if matmul_sizes is None:
        matmul_sizes = (matmul_n,) if matmul_n else ((256, 512, 1024) if quick else (512, 1024, 2048))
    matmul_sizes = tuple(int(m) for m in matmul_sizes)
    if not matmul_sizes or min(matmul_sizes) < 1:
        raise ValueError(f"matmul_sizes must be positive integers, got {matmul_sizes}")
    timings = {}

    # the overhead first: after the matrix products the BLAS threads still spin for a while
    _say(progress, "[1/5] per-call overhead of a one-element numpy add")
    timings["tiny_call"] = measure_overhead(repeats=41 if quick else 81)
    overhead = timings["tiny_call"].percentile(OVERHEAD_PERCENTILE)

    _say(progress, "[2/5] cache bandwidth (an add whose arrays sit in one core's L2)")
    l2 = info.caches.get(2, 256 * 2**10)
    cache_bw, timings["cache_add"] = measure_cache_bandwidth(l2, threads, repeats=max(repeats, 9))

    _say(progress, f"[3/5] STREAM arrays: 3 x {n * 8 / 2**20:.0f} MiB, {threads} threads (filling with random data)")
    kernels = StreamKernels(n, threads)
    try:
        for name in ("copy", "add", "triad"):
            timings[name] = time_kernel(getattr(kernels, name), repeats=repeats, warmup=1, number=1)
            _say(progress, f"      {name}: {timings[name].best_rate(stream_bytes(name, n)) / 1e9:.2f} GB/s (best)")
    finally:
        kernels.close()
    bandwidth = {k: timings[k].best_rate(stream_bytes(k, n)) for k in ("copy", "add", "triad")}

    _say(progress, f"[4/5] matrix products, n = {', '.join(map(str, matmul_sizes))}")
    flops, best_n, by_dtype = measure_matmul_peaks(("fp64", "fp32"), matmul_sizes, repeats, available)
    for dtype, by_size in by_dtype.items():
        timings |= {f"matmul_{dtype}_{m}": t for m, t in by_size.items()}
        _say(progress, f"      {dtype}: {flops[dtype] / 1e9:.1f} GFLOP/s (best, n = {best_n[dtype]})")

    _say(progress, "[5/5] done")
    load_after = system.load_average()[0]
    # the load after includes this measurement's own threads, so only the load before is judged
    if load_before is not None and load_before > 0.5 * threads:
        warnings.append(f"the machine was busy (1-min load {load_before:.2f} on {threads} cores before the "
                        "measurement): other programs share the memory bus and cores")
    hw = Accelerator(
        name="this machine (measured)",
        vendor="measured",
        peak_flops_by_dtype=dict(flops),
        mem_bandwidth=memory_roof(bandwidth),
        mem_capacity=float(info.total_memory),
        compute_units=threads,
        sources={"mem_bandwidth": f"best of STREAM add and triad (fastest of {repeats} repeats), {threads} threads",
                 "peak_flops": f"np.matmul, best over n = {', '.join(map(str, matmul_sizes))} and {repeats} repeats"},
        notes="measured by roofline_lib.measure.measure_machine",
    )
    return MachineProfile(
        accelerator=hw, overhead_per_call=overhead, bandwidth=bandwidth, flops=flops, timings=timings,
        spreads={k: t.spread for k, t in timings.items()}, array_bytes=n * 8, llc_bytes=int(llc_bytes),
        llc_source=llc_source, threads=threads, matmul_n=max(matmul_sizes), quick=quick,
        load_average=(load_before, load_after), seconds=time.perf_counter() - start, warnings=tuple(warnings),
        cache_bandwidth=float(cache_bw), matmul_sizes=matmul_sizes, best_matmul_n=best_n, platform=info.platform,
    )


def has_simd(machine=None):
    """True on CPUs whose vector units do twice the fp32 operations of fp64 per instruction
    (x86-64's SSE/AVX, arm64's NEON): there a sound measurement finds fp32 faster than fp64."""
    import platform as _platform

    machine = (machine or _platform.machine()).lower()
    return machine in ("x86_64", "amd64", "arm64", "aarch64")


def agreement(values):
    """(max - min) / median of repeated figures: 0.1 means they agree within 10%."""
    values = np.asarray(values, dtype=float)
    if values.size < 2 or np.any(~np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"agreement needs at least two finite positive figures, got {values}")
    return float((values.max() - values.min()) / np.median(values))


__all__ = [
    "agreement", "has_simd", "MachineProfile", "measure_cache_bandwidth", "measure_machine", "measure_matmul_peak",
    "measure_matmul_peaks", "measure_overhead", "memory_roof", "OVERHEAD_PERCENTILE",
]
