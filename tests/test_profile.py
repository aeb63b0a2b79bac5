"""roofline_lib.measure: the machine's caches and memory, the refusal before allocating, a tiny whole
measurement, agreement of repeats, the best matmul rate over sizes.

Small and fast: tiny arrays, fake clocks; no assertion depends on how fast this machine is.
"""

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib import measure
from roofline_lib.measure import system


def test_measure_machine_refuses_before_allocating():
    with pytest.raises(MemoryError, match="needs .* GB"):
        measure.measure_machine(array_bytes=2**30, available=2**30, progress=False)


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
    assert system.linux_caches(tmp_path) == {1: 48 * 1024, 2: 2048 * 1024, 3: 30 * 2**20}
    size, source, notes = system.last_level_cache("linux", tmp_path)
    assert size == 30 * 2**20 and source.startswith("L3") and not notes


def test_last_level_cache_fallback_says_so(tmp_path):
    size, source, notes = system.last_level_cache("linux", tmp_path / "missing")
    assert size == system.FALLBACK_LLC_BYTES
    assert "could not read" in notes[0]


def test_memory_figures_are_plausible():
    total, available = system.memory()[:2]
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
    assert hw.mem_capacity == system.memory()[0]
    assert any("less than 4x the last-level cache" in w for w in p.warnings)
    assert len(p.timings["triad"].samples) == 3
    # it plugs into the roofline like a datasheet chip
    assert rl.estimate(rl.vector_add(10**6, "fp64"), hw).bound == "memory"


def test_agreement():
    assert measure.agreement([9.0, 10.0, 11.0]) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="agreement needs at least two"):
        measure.agreement([1.0])


def test_matmul_peak_is_the_best_over_sizes(monkeypatch):
    # fake timings: size 64 takes 1 s per call (rate 2*64^3), size 32 takes 0.001 s (rate 2*32^3/1e-3)
    def fake_time_kernel(fn, x, y, out=None, **kwargs):
        n = x.shape[0]
        return measure.Timing(np.array([1.0, 2.0]) * (1.0 if n == 64 else 1e-3))

    monkeypatch.setattr(measure.profile, "time_kernel", fake_time_kernel)
    best, n, timings = measure.measure_matmul_peak("fp32", (32, 64), repeats=2)
    assert n == 32 and best == 2 * 32**3 / 1e-3 and set(timings) == {32, 64}


def test_has_simd():
    assert measure.has_simd("x86_64") and measure.has_simd("AMD64") and measure.has_simd("arm64")
    assert not measure.has_simd("riscv64")
