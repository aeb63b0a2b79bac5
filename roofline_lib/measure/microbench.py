"""Timing a kernel, and the kernels ``measure`` times: STREAM's copy, add and triad, a Horner
polynomial (a tunable FLOP count per element), and the bytes of a strided read.

    t = rl.measure.time_kernel(np.add, x, y)    # median of repeats, with the spread

Every timing is the median of several timed repeats after a warm-up, with the spread
(interquartile range / median) and the raw samples kept; inputs must not be all zeros.
"""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import system

# STREAM's byte counts, in words (array elements) per element of the loop.
STREAM_WORDS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}
TRIAD_SCALAR = 3.0
MEMORY_FRACTION = 0.25  # no measurement allocates more than this share of the available memory


class NotEnoughMemoryError(MemoryError):
    """A measurement would need more than its share of the available memory."""


def check_allocation(nbytes, available=None, fraction=MEMORY_FRACTION):
    """Refuse to allocate ``nbytes`` if that is more than ``fraction`` of the available memory.

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb)."""
    available = system.memory()[1] if available is None else available
    limit = fraction * available
    if nbytes > limit:
        raise NotEnoughMemoryError(
            f"this measurement needs {nbytes / 1e9:.2f} GB but may use at most {fraction:.0%} of the "
            f"{available / 1e9:.2f} GB available ({limit / 1e9:.2f} GB). Close other programs, or pass a "
            f"smaller array_bytes= (the figure is then less certain to exceed the cache).")
    return nbytes


def stream_bytes(kernel, n, itemsize=8):
    """Bytes STREAM counts for one pass of ``kernel`` over n elements of ``itemsize`` bytes."""
    if kernel not in STREAM_WORDS:
        raise ValueError(f"unknown STREAM kernel {kernel!r}; known: {', '.join(STREAM_WORDS)}")
    if n <= 0 or itemsize <= 0:
        raise ValueError(f"n and itemsize must be > 0, got n={n}, itemsize={itemsize}")
    return STREAM_WORDS[kernel] * n * itemsize


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
        """The median of the samples, seconds."""
        return float(np.median(self.samples))

    @property
    def min(self):
        """The fastest sample, seconds."""
        return float(np.min(self.samples))

    @property
    def max(self):
        """The slowest sample, seconds."""
        return float(np.max(self.samples))

    @property
    def spread(self):
        """Interquartile range / median: 0.05 means the middle half of the repeats lie within 5%."""
        q25, q75 = np.percentile(self.samples, [25, 75])
        return float((q75 - q25) / self.median)

    def percentile(self, q):
        """The q-th percentile of the samples (q = 10: a low figure that one lucky sample cannot set)."""
        if not 0 <= q <= 100:
            raise ValueError(f"percentile must be between 0 and 100, got {q}")
        return float(np.percentile(self.samples, q))

    def rate(self, amount):
        """``amount`` (FLOPs, bytes) per second at the median time."""
        return amount / self.median

    def best_rate(self, amount):
        """``amount`` per second in the fastest sample: the sustained best, as STREAM reports it."""
        return amount / self.min

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

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb); also used in chapter 08.
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

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb).
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
        """STREAM copy, c = a, over every thread's part of the arrays."""
        list(self.pool.map(self._copy_part, range(len(self.parts))))

    def add(self):
        """STREAM add, c = a + b, over every thread's part of the arrays."""
        list(self.pool.map(self._add_part, range(len(self.parts))))

    def triad(self):
        """STREAM triad, a = b + s c, over every thread's part of the arrays."""
        list(self.pool.map(self._triad_part, range(len(self.parts))))

    def close(self):
        """Stop the threads and let the arrays go."""
        self.pool.shutdown()
        self.a = self.b = self.c = self.blocks = None


def horner(x, degree, out, block=1 << 14):
    """out = x^d + x^(d-1) + ... + 1 by Horner's rule, in cache-sized blocks.

    Memory traffic is fixed (read x, write out: 2 words per element) while the FLOPs
    grow with ``degree`` (exactly one multiply and one add per degree and element, starting
    from y = 1, so ``horner_flops`` is the count executed): the knob of the "raise the FLOPs
    at fixed bytes" experiment.

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb).
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
    """FLOPs of ``horner`` over n elements: one multiply and one add per degree and element.

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb)."""
    return 2.0 * degree * n


def strided_bytes(n, stride, itemsize=8, line=64):
    """Bytes memory moves for ``horner`` reading every ``stride``-th element of x and writing n.

    Memory moves whole cache lines: reading with stride s fetches min(s * itemsize, line)
    bytes per element used, so a stride is a knob that raises the bytes at fixed FLOPs.

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb).
    """
    if stride < 1 or n <= 0:
        raise ValueError(f"stride must be >= 1 and n > 0, got stride={stride}, n={n}")
    return n * (min(stride * itemsize, line) + itemsize)


__all__ = [
    "check_allocation", "horner", "horner_flops", "MEMORY_FRACTION", "NotEnoughMemoryError", "random_fill",
    "require_nonzero", "stream_bytes", "STREAM_WORDS", "StreamKernels", "strided_bytes", "time_kernel", "Timing",
    "TRIAD_SCALAR",
]
