"""roofline_lib.measure.microbench: STREAM and Horner byte and FLOP counts by hand, the kernels' results, refusals,
and time_kernel's statistics on a fake clock. No assertion depends on how fast this machine is."""

import time

import numpy as np
import pytest

from roofline_lib.measure import microbench

# ---------------------------------------------------------------- byte counting (STREAM's rules, by hand)

def test_stream_bytes_match_stream_hand_counts():
    n = 1000
    # STREAM: copy a=b reads b, writes a -> 16 bytes per fp64 element; triad a=b+s*c -> 24.
    assert microbench.stream_bytes("copy", n) == 16_000
    assert microbench.stream_bytes("add", n) == 24_000
    assert microbench.stream_bytes("triad", n) == 24_000
    assert microbench.stream_bytes("triad", n, itemsize=4) == 12_000


def test_stream_bytes_rejects_unknown_kernel():
    with pytest.raises(ValueError, match="unknown STREAM kernel"):
        microbench.stream_bytes("daxpy", 10)


def test_horner_flop_count_by_hand():
    # degree 3 by Horner from y = 1: ((1 * x + 1) * x + 1) * x + 1 -> 3 multiplies and 3 adds per element
    assert microbench.horner_flops(10, 3) == 60


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
    microbench.horner(x, degree, np.empty_like(x), block=300)
    monkeypatch.undo()
    assert sum(executed) == microbench.horner_flops(1000, degree)


# ---------------------------------------------------------------- the kernels compute what they claim

def test_stream_kernels_results():
    k = microbench.StreamKernels(5001, threads=2, block=512)
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
    microbench.horner(x, 5, out, block=128)
    np.testing.assert_allclose(out, np.polyval(np.ones(6), x))


# ---------------------------------------------------------------- refusals

def test_quarter_of_memory_refusal():
    microbench.check_allocation(250, available=1000)
    with pytest.raises(microbench.NotEnoughMemoryError, match="at most 25%"):
        microbench.check_allocation(251, available=1000)


def test_zero_data_refused():
    with pytest.raises(ValueError, match="all zeros"):
        microbench.require_nonzero(np.ones(3), np.zeros(10))
    with pytest.raises(ValueError, match="all zeros"):
        microbench.time_kernel(np.sum, np.zeros(100), number=1, repeats=1)
    # an output buffer passed by keyword may be zeros
    x = np.ones(4)
    microbench.time_kernel(np.add, x, x, out=np.zeros(4), number=1, repeats=1)


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

    t = microbench.time_kernel(kernel, repeats=5, warmup=1, number=1, clock=clock)
    assert list(t.samples) == [3.0, 1.0, 2.0, 5.0, 4.0]  # warm-up not among them
    assert t.median == 3.0 and t.min == 1.0 and t.max == 5.0
    assert t.spread == pytest.approx((4.0 - 2.0) / 3.0)  # quartiles of 1..5 are 2 and 4
    assert t.rate(6.0) == 2.0


def test_time_kernel_grows_batch_until_sample_is_long_enough():
    clock = FakeClock()

    step = 2.0**-13  # a power of two, so the fake clock's sums are exact

    def kernel():
        clock.now += step

    t = microbench.time_kernel(kernel, repeats=3, warmup=0, min_sample_time=20 * step, clock=clock)
    # 1 call (under a tenth of the target) -> x10; 10 calls (half of it) -> x2; 20 calls: enough
    assert t.number == 20
    np.testing.assert_allclose(t.samples, step)


def test_time_kernel_on_sleep_is_at_least_the_sleep():
    t = microbench.time_kernel(time.sleep, 0.002, repeats=3, warmup=0, number=1)
    assert t.min >= 0.002


def test_time_kernel_rejects_bad_arguments():
    with pytest.raises(ValueError, match="callable"):
        microbench.time_kernel(3)
    with pytest.raises(ValueError, match="repeats"):
        microbench.time_kernel(lambda: None, repeats=0)


def test_strided_bytes_count_whole_lines():
    # contiguous fp64: read 8 + write 8 per element; stride 2: half of each 64-byte line unused -> 16 read;
    # stride 8 or more: one whole line per element read
    assert microbench.strided_bytes(100, 1) == 1600
    assert microbench.strided_bytes(100, 2) == 2400
    assert microbench.strided_bytes(100, 8) == microbench.strided_bytes(100, 32) == 7200


# ---------------------------------------------------------------- roofs: best-of, percentiles

def test_percentile_and_best_rate_on_known_samples():
    t = microbench.Timing(np.array([4.0, 1.0, 3.0, 2.0, 5.0]))
    assert t.percentile(0) == 1.0 and t.percentile(50) == 3.0 and t.percentile(25) == 2.0
    assert t.best_rate(10.0) == 10.0  # the fastest sample: 10 units in 1 s
    with pytest.raises(ValueError, match="between 0 and 100"):
        t.percentile(101)
