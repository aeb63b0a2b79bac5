"""roofline_lib.measure.launch: the launch queue against hand-worked timelines; decode kernel counts by hand."""

import numpy as np
import pytest

from roofline_lib.measure import launch


def test_async_queue_by_hand():
    # launches end at 5, 10, 15 us; kernels of 2, 8, 1 us: 5-7, 10-18, 18-19
    t = launch.simulate_queue([2e-6, 8e-6, 1e-6], 5e-6)
    np.testing.assert_allclose(t.start, [5e-6, 10e-6, 18e-6])
    np.testing.assert_allclose(t.end, [7e-6, 18e-6, 19e-6])
    assert t.busy == pytest.approx(11e-6) and t.idle == pytest.approx(8e-6)


def test_sync_queue_adds_overhead_and_work():
    t = launch.simulate_queue([2e-6, 8e-6, 1e-6], 5e-6, synchronous=True)
    assert t.total == pytest.approx(3 * 5e-6 + 11e-6)  # each call: launch, then its kernel


@pytest.mark.parametrize("d", [1e-6, 5e-6, 20e-6])
def test_identical_kernels_closed_form(d):
    # N identical kernels: the first starts after one launch, then max(launch, d) apart, the last runs d
    n, L = 50, 5e-6
    assert launch.simulate_queue(np.full(n, d), L).total == pytest.approx(L + (n - 1) * max(L, d) + d)


def test_queue_rejects_bad_input():
    with pytest.raises(ValueError, match="durations"):
        launch.simulate_queue([], 1e-6)
    with pytest.raises(ValueError, match="durations"):
        launch.simulate_queue([1e-6, -1.0], 1e-6)
    with pytest.raises(ValueError, match="launch_cost"):
        launch.simulate_queue([1e-6], float("nan"))


def test_decode_kernel_counts_by_hand():
    # Llama-3-8B, 32 layers; per layer: 2 RMSNorms, QKV, RoPE, KV write, attention, output projection,
    # 2 residual adds, gate+up, SiLU x up, down = 12; plus embedding, final norm, LM head
    assert launch.decode_kernel_count("llama-3-8b") == 12 * 32 + 3
    # fused: QKV, attention, output, gate+up, down per layer, plus embedding and LM head
    assert launch.decode_kernel_count("llama-3-8b", fused=True) == 5 * 32 + 2
    assert launch.decode_kernel_count("llama-2-13b") == 12 * 40 + 3


def test_fusion_keeps_the_work():
    eager = launch.decode_kernel_times("llama-3-8b", "H200", 4, 2048)
    fused = launch.decode_kernel_times("llama-3-8b", "H200", 4, 2048, fused=True)
    assert fused.sum() == pytest.approx(eager.sum()) and fused.size < eager.size


def test_moe_refused():
    with pytest.raises(ValueError, match="mixture-of-experts"):
        launch.decode_kernel_times("mixtral-8x7b", "H200", 1, 128)
