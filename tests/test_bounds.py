"""Time bounds and attainable FLOP/s against worked numbers, plus hypothesis invariants."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import roofline_lib as rl

sizes = st.floats(min_value=1, max_value=1e6, allow_nan=False)
chips = st.sampled_from([n for n in rl.list_accelerators() if "bf16" in rl.get_accelerator(n).dtypes])  # bf16 work


def test_scaling_book_b200_example():
    # [64,4096] x [4096,8192] bf16 on a B200 at 8 TB/s: memory-bound, ~8.6 us.
    b200_8tbs = rl.Accelerator(name="B200 at 8 TB/s", peak_flops_by_dtype={"bf16": 2250e12},
                               mem_bandwidth=8e12, mem_capacity=192e9)
    est = rl.estimate(rl.matmul(64, 8192, 4096), b200_8tbs)
    assert est.bound == "memory"
    assert est.t_mem == pytest.approx(8.6e-6, rel=0.01)


def test_estimate_by_hand():
    hw = rl.get_accelerator("H200")
    w = rl.matmul(4096, 4096, 4096)
    est = rl.estimate(w, hw)
    assert est.t_math == pytest.approx(2 * 4096**3 / 989.4e12)
    assert est.t_mem == pytest.approx(3 * 2 * 4096**2 / 4.8e12)
    # compute-bound: the lower bound is the matmul's time, the no-overlap time both terms, by hand
    assert est.lower == pytest.approx(2 * 4096**3 / 989.4e12)
    assert est.no_overlap == pytest.approx(2 * 4096**3 / 989.4e12 + 3 * 2 * 4096**2 / 4.8e12)
    with pytest.warns(DeprecationWarning, match="no_overlap"):   # upper: the older name, one release more
        assert est.upper == est.no_overlap
    assert est.bound == "compute"


def test_mixed_dtype_parts_use_their_own_peaks():
    hw = rl.get_accelerator("H100")
    a, b = rl.matmul(1024, 1024, 1024, "fp8"), rl.matmul(1024, 1024, 1024, "bf16")
    est = rl.estimate(a + b, hw)
    assert est.t_math == pytest.approx(a.flops / 1978.9e12 + b.flops / 989.4e12)
    assert [p.workload for p in est.parts] == [a, b]


def test_attainable_by_hand():
    hw = rl.get_accelerator("A100")
    assert rl.attainable_flops(10, hw) == pytest.approx(10 * 2.039e12)
    assert rl.attainable_flops(1000, hw) == 312e12
    arr = rl.attainable_flops(np.array([1, 10, 1e4]), "A100")
    assert arr.shape == (3,)


def test_estimate_rejects_non_workloads():
    with pytest.raises(ValueError, match="needs a Workload"):
        rl.estimate(12, "H200")


@given(st.floats(min_value=1e-3, max_value=1e6), chips)
def test_attainable_never_exceeds_peak(intensity, chip):
    hw = rl.get_accelerator(chip)
    dtype = hw.dtypes[0]
    assert rl.attainable_flops(intensity, hw, dtype) <= hw.peak_flops(dtype)


@given(sizes, sizes, sizes, chips)
def test_lower_le_upper_le_twice_lower(M, N, K, chip):
    est = rl.estimate(rl.matmul(M, N, K, "int8" if chip.startswith("TPU") else "bf16"), chip)
    assert est.lower <= est.no_overlap <= 2 * est.lower * (1 + 1e-12)


@given(sizes, sizes, sizes, st.floats(min_value=1.0, max_value=100.0), st.sampled_from("MNK"))
def test_matmul_intensity_never_falls_when_a_dimension_grows(M, N, K, factor, which):
    dims = {"M": M, "N": N, "K": K}
    before = rl.matmul(**dims).intensity
    dims[which] *= factor
    assert rl.matmul(**dims).intensity >= before * (1 - 1e-12)


def test_mbu_and_mfu_by_hand():
    w = rl.matmul(4096, 4096, 4096)   # 2 x 4096^3 FLOP, 3 x 4096^2 x 2 bytes
    a100 = rl.get_accelerator("A100")
    assert rl.mfu(w, 1e-3, a100) == pytest.approx(2 * 4096**3 / 1e-3 / 312e12)
    assert rl.mbu(w, 1e-3, a100) == pytest.approx(3 * 4096**2 * 2 / 1e-3 / 2.039e12)
    assert rl.mfu(w, 1e-3, a100, n_chips=2) == pytest.approx(rl.mfu(w, 1e-3, a100) / 2)
    assert np.allclose(rl.mbu(w, np.array([1e-3, 2e-3]), a100), [rl.mbu(w, 1e-3, a100), rl.mbu(w, 2e-3, a100)])
    # fp8 compute doubles the H100's peak (1,978.9 vs 989.4 TFLOP/s): half the MFU for the same time
    h100 = rl.get_accelerator("H100")
    assert rl.mfu(w, 1e-3, h100, "fp8") == pytest.approx(rl.mfu(w, 1e-3, h100, "bf16") / 2, rel=1e-3)


@pytest.mark.parametrize("args, message", [
    ((rl.matmul(8, 8, 8), 0, "A100"), "seconds .* must be finite and > 0"),
    ((rl.matmul(8, 8, 8), float("nan"), "A100"), "must be finite and > 0"),
    ((rl.matmul(8, 8, 8), 1.0, "A1000"), "unknown accelerator"),
    (("matmul", 1.0, "A100"), "needs a Workload"),
])
def test_mbu_rejects_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        rl.mbu(*args)
