"""roofline_lib.measure: byte counting, memory and zero-data refusals, timing statistics.

Small and fast: tiny arrays, fake clocks; no assertion depends on how fast this machine is.
"""

import time

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib import measure

# ---------------------------------------------------------------- byte counting (STREAM's rules, by hand)

def test_stream_bytes_match_stream_hand_counts():
    n = 1000
    # STREAM: copy a=b reads b, writes a -> 16 bytes per fp64 element; triad a=b+s*c -> 24.
    assert measure.stream_bytes("copy", n) == 16_000
    assert measure.stream_bytes("add", n) == 24_000
    assert measure.stream_bytes("triad", n) == 24_000
    assert measure.stream_bytes("triad", n, itemsize=4) == 12_000


def test_stream_bytes_rejects_unknown_kernel():
    with pytest.raises(ValueError, match="unknown STREAM kernel"):
        measure.stream_bytes("daxpy", 10)


def test_horner_flop_count_by_hand():
    # degree 3 by Horner from y = 1: ((1 * x + 1) * x + 1) * x + 1 -> 3 multiplies and 3 adds per element
    assert measure.horner_flops(10, 3) == 60


@pytest.mark.parametrize("degree", [1, 4, 32])
def test_horner_flops_count_what_it_executes(monkeypatch, degree):
    # brute force: count the elements every multiply and add call actually processes
    executed = []
    real_multiply, real_add = np.multiply, np.add

    def counting(real):
        def ufunc(a, b, out):
            executed.append(out.size)
            return real(a, b, out=out)
        return ufunc

    monkeypatch.setattr(np, "multiply", counting(real_multiply))
    monkeypatch.setattr(np, "add", counting(real_add))
    x = np.random.default_rng(0).random(1000) + 0.5
    measure.horner(x, degree, np.empty_like(x), block=300)
    monkeypatch.undo()
    assert sum(executed) == measure.horner_flops(1000, degree)


# ---------------------------------------------------------------- the kernels compute what they claim

def test_stream_kernels_results():
    k = measure.StreamKernels(5001, threads=2, block=512)
    b, c = k.b.copy(), k.c.copy()
    k.triad()
    np.testing.assert_allclose(k.a, b + 3.0 * c)
    k.add()
    np.testing.assert_allclose(k.a, b + c)
    k.copy()
    np.testing.assert_array_equal(k.a, b)
    assert np.all((b >= 1) & (b < 2))  # random, never zero
    k.close()


def test_horner_matches_polyval():
    x = np.random.default_rng(3).random(1000)
    out = np.empty_like(x)
    measure.horner(x, 5, out, block=128)
    np.testing.assert_allclose(out, np.polyval(np.ones(6), x))


# ---------------------------------------------------------------- refusals

def test_quarter_of_memory_refusal():
    measure.check_allocation(250, available=1000)
    with pytest.raises(measure.NotEnoughMemoryError, match="at most 25%"):
        measure.check_allocation(251, available=1000)


def test_measure_machine_refuses_before_allocating():
    with pytest.raises(MemoryError, match="needs .* GB"):
        measure.measure_machine(array_bytes=2**30, available=2**30, progress=False)


def test_zero_data_refused():
    with pytest.raises(ValueError, match="all zeros"):
        measure.require_nonzero(np.ones(3), np.zeros(10))
    with pytest.raises(ValueError, match="all zeros"):
        measure.time_kernel(np.sum, np.zeros(100), number=1, repeats=1)
    # an output buffer passed by keyword may be zeros
    x = np.ones(4)
    measure.time_kernel(np.add, x, x, out=np.zeros(4), number=1, repeats=1)


# ---------------------------------------------------------------- time_kernel statistics on a fake clock

class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_time_kernel_median_and_spread_on_fake_clock():
    clock = FakeClock()
    durations = iter([100.0, 3.0, 1.0, 2.0, 5.0, 4.0])  # the warm-up call, then five timed ones

    def kernel():
        clock.now += next(durations)

    t = measure.time_kernel(kernel, repeats=5, warmup=1, number=1, clock=clock)
    assert list(t.samples) == [3.0, 1.0, 2.0, 5.0, 4.0]  # warm-up not among them
    assert t.median == 3.0 and t.min == 1.0 and t.max == 5.0
    assert t.spread == pytest.approx((4.0 - 2.0) / 3.0)  # quartiles of 1..5 are 2 and 4
    assert t.rate(6.0) == 2.0


def test_time_kernel_grows_batch_until_sample_is_long_enough():
    clock = FakeClock()

    step = 2.0**-13  # a power of two, so the fake clock's sums are exact

    def kernel():
        clock.now += step

    t = measure.time_kernel(kernel, repeats=3, warmup=0, min_sample_time=20 * step, clock=clock)
    # 1 call (under a tenth of the target) -> x10; 10 calls (half of it) -> x2; 20 calls: enough
    assert t.number == 20
    np.testing.assert_allclose(t.samples, step)


def test_time_kernel_on_sleep_is_at_least_the_sleep():
    t = measure.time_kernel(time.sleep, 0.002, repeats=3, warmup=0, number=1)
    assert t.min >= 0.002


def test_time_kernel_rejects_bad_arguments():
    with pytest.raises(ValueError, match="callable"):
        measure.time_kernel(3)
    with pytest.raises(ValueError, match="repeats"):
        measure.time_kernel(lambda: None, repeats=0)


# ---------------------------------------------------------------- reading the system

def _fake_cache(root, entries):
    for i, (level, kind, size) in enumerate(entries):
        d = root / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")


def test_last_level_cache_reads_highest_level(tmp_path):
    _fake_cache(tmp_path, [(1, "Data", "48K"), (1, "Instruction", "64K"), (2, "Unified", "2048K"),
                           (3, "Unified", "30M")])
    assert measure.cache_sizes(tmp_path) == {1: 48 * 1024, 2: 2048 * 1024, 3: 30 * 2**20}
    size, source = measure.last_level_cache(tmp_path)
    assert size == 30 * 2**20 and source.startswith("L3")


def test_last_level_cache_fallback_says_so(tmp_path):
    size, source = measure.last_level_cache(tmp_path / "missing")
    assert size == measure.FALLBACK_LLC_BYTES
    assert "could not read" in source


def test_memory_figures_are_plausible():
    total, available = measure.total_memory(), measure.available_memory()
    assert 0 < available <= total


# ---------------------------------------------------------------- a tiny whole measurement

def test_measure_machine_tiny_run_gives_an_accelerator():
    p = measure.measure_machine(quick=True, array_bytes=2**20, llc_bytes=2**20, matmul_n=64, repeats=3,
                                progress=False)
    hw = p.accelerator
    assert isinstance(hw, rl.Accelerator)
    for value in (*p.bandwidth.values(), *p.flops.values(), p.overhead_per_call):
        assert np.isfinite(value) and value > 0
    assert hw.mem_bandwidth == max(p.bandwidth["add"], p.bandwidth["triad"])
    assert hw.peak_flops("fp64") == p.flops["fp64"]
    assert hw.mem_capacity == measure.total_memory()
    assert any("less than 4x the last-level cache" in w for w in p.warnings)
    assert len(p.timings["triad"].samples) == 3
    # it plugs into the roofline like a datasheet chip
    assert rl.estimate(rl.vector_add(10**6, "fp64"), hw).bound == "memory"


# ---------------------------------------------------------------- the diagnostic and agreement

def test_classify_response():
    assert measure.classify_response(1.0, 2.0, 1.02, 2, 2)[0] == "compute"
    assert measure.classify_response(1.0, 1.02, 2.0, 2, 2)[0] == "memory"
    assert measure.classify_response(1.0, 1.01, 1.03, 2, 2)[0] == "overhead"
    assert measure.classify_response(1.0, 1.5, 1.5, 2, 2)[0] == "near the knee"
    verdict, r_flops, r_bytes = measure.classify_response(1.0, 4.0, 1.0, 4, 2.5)
    assert (r_flops, r_bytes) == (1.0, 0.0)
    assert measure.classify_response(1.0, 1.0, 2.5, 4, 2.5)[2] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        measure.classify_response(0.0, 1.0, 1.0, 2, 2)


def test_strided_bytes_count_whole_lines():
    # contiguous fp64: read 8 + write 8 per element; stride 2: half of each 64-byte line unused -> 16 read;
    # stride 8 or more: one whole line per element read
    assert measure.strided_bytes(100, 1) == 1600
    assert measure.strided_bytes(100, 2) == 2400
    assert measure.strided_bytes(100, 8) == measure.strided_bytes(100, 32) == 7200


def test_agreement():
    assert measure.agreement([9.0, 10.0, 11.0]) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        measure.agreement([1.0])


# ---------------------------------------------------------------- roofs: best-of, percentiles

def test_percentile_and_best_rate_on_known_samples():
    t = measure.Timing(np.array([4.0, 1.0, 3.0, 2.0, 5.0]))
    assert t.percentile(0) == 1.0 and t.percentile(50) == 3.0 and t.percentile(25) == 2.0
    assert t.best_rate(10.0) == 10.0  # the fastest sample: 10 units in 1 s
    with pytest.raises(ValueError, match="between 0 and 100"):
        t.percentile(101)


def test_matmul_peak_is_the_best_over_sizes(monkeypatch):
    # fake timings: size 64 takes 1 s per call (rate 2*64^3), size 32 takes 0.001 s (rate 2*32^3/1e-3)
    def fake_time_kernel(fn, x, y, out=None, **kwargs):
        n = x.shape[0]
        return measure.Timing(np.array([1.0, 2.0]) * (1.0 if n == 64 else 1e-3))

    monkeypatch.setattr(measure, "time_kernel", fake_time_kernel)
    best, n, timings = measure.measure_matmul_peak("fp32", (32, 64), repeats=2)
    assert n == 32 and best == 2 * 32**3 / 1e-3 and set(timings) == {32, 64}


def test_has_simd():
    assert measure.has_simd("x86_64") and measure.has_simd("AMD64") and measure.has_simd("arm64")
    assert not measure.has_simd("riscv64")
