"""rl.measure.measure_device: the timers with fake events and clocks, the plan from made-up device properties, the
message without PyTorch, and (where torch is installed, its CPU build in CI) a real quick measurement of the CPU,
whose bytes and FLOPs are counted (on a fake timer) as the numpy measurement counts them."""

import importlib.util
import sys

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.measure import device as dev
from roofline_lib.measure.microbench import NotEnoughMemoryError

GiB, MiB = 2**30, 2**20
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed (pip install '.[gpu]'): "
                                                       "measure_device cannot run")

# Device properties as torch reports them, made up for the plan: memory, L2 and compute capability of each kind
T4 = dev.DeviceInfo("cuda", "Tesla T4", 15 * GiB, 14.5 * GiB, 4 * MiB, (7, 5), units=40)
A100 = dev.DeviceInfo("cuda", "NVIDIA A100-SXM4-80GB", 80 * GiB, 79 * GiB, 40 * MiB, (8, 0), units=108)
H200 = dev.DeviceInfo("cuda", "NVIDIA H200", 140 * GiB, 139 * GiB, 60 * MiB, (9, 0), units=132)
MI300X = dev.DeviceInfo("rocm", "AMD Instinct MI300X", 192 * GiB, 191 * GiB, 4 * MiB, (9, 4), arch="gfx942:sramecc+")
TINY = dev.DeviceInfo("cuda", "a 2 GB card, nearly full", 2 * GiB, 0.3 * GiB, 4 * MiB, (7, 5))


class FakeClock:
    def __init__(self):
        self.now = 0.0


class FakeEvent:
    """A CUDA event on a fake device clock: record() stamps the clock, elapsed_time() gives milliseconds."""

    def __init__(self, clock):
        self.clock, self.stamp, self.synced = clock, None, False

    def record(self):
        self.stamp = self.clock.now

    def synchronize(self):
        self.synced = True

    def elapsed_time(self, other):
        return (other.stamp - self.stamp) * 1e3


def test_event_timer_times_the_call_between_its_events_and_flushes_outside():
    clock, calls, events = FakeClock(), [], []

    def event():
        events.append(FakeEvent(clock))
        return events[-1]

    def kernel():
        calls.append("kernel")
        clock.now += 0.004  # 4 ms on the device

    def flush():
        calls.append("flush")
        clock.now += 1.0  # a long flush that must not be timed

    timer = dev.EventTimer(event, synchronize=lambda: None)
    t = dev.time_on_device(kernel, timer, repeats=5, warmup=2, flush=flush)
    assert np.allclose(t.samples, 0.004) and t.spread < 1e-9
    assert calls == ["kernel"] * 2 + ["flush", "kernel"] * 5  # warm-up unflushed; each timed call after a flush
    assert all(e.synced for e in events[1::2])  # the end event is waited for before it is read


def test_sync_timer_uses_the_host_clock_between_synchronisations():
    clock, syncs = FakeClock(), []
    timer = dev.SyncTimer(lambda: syncs.append(clock.now), clock=lambda: clock.now)

    def kernel():
        clock.now += 0.25

    assert timer(kernel) == pytest.approx(0.25) and len(syncs) == 2


def test_a_zero_time_is_refused():
    with pytest.raises(ValueError, match="resolution"):
        dev.time_on_device(lambda: None, lambda fn: 0.0, repeats=3, warmup=0)


@pytest.mark.parametrize("info,formats", [
    (T4, ("fp32", "fp16")),                    # Turing: fp16 tensor cores, no bf16 (compute capability 7.5)
    (A100, ("fp32", "fp16", "bf16")),          # Ampere: bf16 from 8.0, no fp8
    (H200, ("fp32", "fp16", "bf16", "fp8")),   # Hopper: fp8 from 8.9
    (MI300X, ("fp32", "fp16", "bf16", "fp8")),  # CDNA 3 (gfx94x)
])
def test_formats_follow_the_architecture(info, formats):
    assert dev.native_dtypes(info) == formats
    assert dev.plan(info).dtypes == formats


@pytest.mark.parametrize("info", [T4, A100, H200, MI300X])
def test_plan_beats_the_cache_and_fits_the_memory(info):
    p = dev.plan(info)
    assert p.stream_elements * 4 >= 4 * info.cache_bytes and p.stream_elements * 4 >= 64 * MiB
    assert p.flush_bytes >= 2 * info.cache_bytes and p.flush_bytes >= 256 * MiB
    assert p.needs_bytes <= info.free_memory / 4
    assert all(3 * n * n * 4 <= info.free_memory / 8 for n in p.matmul_sizes)
    assert dev.plan(info, quick=True).matmul_sizes == (4096,) and len(p.matmul_sizes) == 3


def test_a_device_short_of_memory_is_refused_with_what_it_needs():
    with pytest.raises(NotEnoughMemoryError, match="needs about .* GB .* more than a quarter"):
        dev.plan(TINY)


def test_without_torch_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(ModuleNotFoundError, match=r'pip install "\.\[gpu\]"'):
        rl.measure.measure_device("cpu")


def test_a_torch_that_does_not_import_is_reported(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def broken(name, *args, **kwargs):
        if name == "torch":
            raise OSError("libtorch_cpu.so: cannot open shared object file")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setattr(builtins, "__import__", broken)
    reason = dev.torch_status()
    assert "installed but does not import here (OSError: libtorch_cpu.so" in reason and ".[gpu]" in reason


@needs_torch
def test_an_unknown_device_is_named():
    with pytest.raises(ValueError, match="device must be one of cuda, mps, cpu"):
        dev.pick_device("tpu")


def test_import_roofline_lib_does_not_import_torch():
    import subprocess

    code = "import sys, roofline_lib as rl; rl.measure; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@needs_torch
def test_measure_the_cpu_through_torch():
    profile = rl.measure.measure_device("cpu", quick=True)
    hw = profile.accelerator
    est = rl.estimate(rl.vector_add(10**7), hw)  # the measured chip drops into the library
    assert est.t_mem == pytest.approx(3 * 4 * 10**7 / hw.mem_bandwidth)
    # a plausibility floor, as chapter 07's (0.1 GFLOP/s): over 1000x below a CPU's fp32 matmul rate, which a
    # busy machine can cut 100-fold (the counts themselves: the fake-timer test below)
    assert "fp32" in profile.flops and profile.flops["fp32"] > 1e8
    assert 0 < profile.launch["issue"] < 1e-3 and profile.launch["round trip"] > 0
    assert "CUDA graph" in profile.skipped  # a CPU has none
    # every STREAM kernel and matmul size kept its plan's repeats (statistics: test_microbench.py)
    assert {len(t.samples) for t in profile.timings.values()} == {profile.plan.repeats}
    assert {"stream copy", "stream add", "stream triad"} <= set(profile.timings)


@needs_torch
def test_bytes_and_flops_are_counted_as_stream_and_the_numpy_measurement_count_them(monkeypatch):
    # every timed call takes 1 ms on a fake timer (the kernels are not run): copy moves 2 fp32 words per
    # element, add and triad 3 (read two arrays, write one: STREAM's count, and measure_machine's), and an
    # n x n matmul does 2 n^3 FLOPs
    monkeypatch.setattr(dev, "_timer", lambda torch, device: lambda fn: 1e-3)
    profile = rl.measure.measure_device("cpu", quick=True)
    n = profile.plan.stream_elements
    assert profile.bandwidth["copy"] == pytest.approx(2 * 4 * n / 1e-3)
    assert profile.bandwidth_copied_once == pytest.approx(4 * n / 1e-3)  # nvbandwidth's count: the bytes once
    assert profile.bandwidth["add"] == profile.bandwidth["triad"] == pytest.approx(3 * 4 * n / 1e-3)
    assert profile.accelerator.mem_bandwidth == pytest.approx(3 * 4 * n / 1e-3)
    m = max(profile.plan.matmul_sizes)  # at equal times the largest size has the highest rate
    assert profile.best_matmul_size["fp32"] == m and profile.flops["fp32"] == pytest.approx(2 * m**3 / 1e-3)
    # the numpy measurement (rl.measure.measure_machine) counts the same words, of 8 bytes there
    from roofline_lib.measure import microbench
    assert [microbench.stream_bytes(k, n, 4) for k in ("copy", "add", "triad")] == [8 * n, 12 * n, 12 * n]
