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


def test_fusion_removes_the_folded_round_trips():
    import roofline_lib as rl

    eager = launch.decode_kernel_times("llama-3-8b", "H200", 64, 2048)
    fused = launch.decode_kernel_times("llama-3-8b", "H200", 64, 2048, fused=True)
    assert fused.size < eager.size and fused.sum() < eager.sum()
    # what fusion saves at most: the memory time of the folded parts other than the cache write
    step = rl.decode_step("llama-3-8b", 64, 2048)
    hw = rl.get_accelerator("H200")
    folded = sum(float(rl.estimate(p, hw).t_mem) for p in step.leaves()
                 if not p.kind.kernel and p.kind.category != "KV cache")
    assert 0 < eager.sum() - fused.sum() <= folded * (1 + 1e-9)


def test_device_gap_by_hand():
    # launches end at 5 and 10 us; kernels of 1 and 2 us; a 1 us gap: 5-6, then max(10, 6 + 1) = 10-12
    t = launch.simulate_queue([1e-6, 2e-6], 5e-6, device_gap=1e-6)
    np.testing.assert_allclose(t.start, [5e-6, 10e-6])
    # launched at once (no CPU cost), the gap sets the pace: 0-1, 2-4
    t = launch.simulate_queue([1e-6, 2e-6], 0.0, device_gap=1e-6)
    np.testing.assert_allclose(t.end, [1e-6, 4e-6])


def test_graph_by_hand():
    # one 2.5 us replay, then 1, 2, 3 us kernels 5 us apart: 2.5 + 6 + 2 x 5 = 18.5 us
    t = launch.simulate_graph([1e-6, 2e-6, 3e-6])
    assert t.total == pytest.approx(18.5e-6)
    assert t.idle == pytest.approx(12.5e-6)


def test_eager_kernel_count_by_hand():
    # gpt-fast's model.py per layer: 2 norms x 8, QKV 1, RoPE 2 x 9, cache write 2, attention 4, output 1,
    # 2 residual adds, w1 and w3, silu and the product, w2 = 49; once: embedding, final norm 8, LM head, 10 extras
    t = launch.eager_kernel_times("llama-2-7b", "A100", 1, 100)
    assert t.size == 49 * 32 + 1 + 8 + 1 + 10
    assert t.sum() == pytest.approx(launch.decode_kernel_times("llama-2-7b", "A100", 1, 100).sum())


def test_gpt_fast_eager_and_compiled_within_a_quarter():
    # PyTorch blog "Accelerating Generative AI with PyTorch II: GPT, Fast": 7B at batch 1 on a 330 W A100-80GB,
    # eager 25.5 tok/s, torch.compile + static KV cache (CUDA graphs) 107.0 tok/s; mid-generation context ~105
    from roofline_lib.reality import calibrated

    a100 = calibrated("A100")
    eager = launch.simulate_queue(launch.eager_kernel_times("llama-2-7b", a100, 1, 105),
                                  launch.EAGER_CPU_PER_KERNEL_S, device_gap=launch.STREAM_BOUNDARY_S).total
    compiled = launch.simulate_graph(launch.decode_kernel_times("llama-2-7b", a100, 1, 105, fused=True)).total
    assert 1 / eager == pytest.approx(25.5, rel=0.01)  # the CPU cost per eager kernel is fitted to it
    assert 1 / compiled == pytest.approx(107.0, rel=0.25)
    assert eager / compiled == pytest.approx(107.0 / 25.5, rel=0.25)
    # and graphs alone, without fusion, stay above the roofline time by their 387 boundaries
    unfused = launch.decode_kernel_times("llama-2-7b", a100, 1, 105)
    assert launch.simulate_graph(unfused).total > unfused.sum() + 387 * 4.9e-6


@pytest.mark.parametrize("chip, itl", [("H100", 8e-3), ("H200", 6e-3)])
def test_tensorrt_llm_time_between_tokens_within_a_quarter(chip, itl):
    # TensorRT-LLM v0.14 behind Triton, Llama-3.1-8B bf16 at batch 1 (data/measurements): fused kernels in a graph
    from roofline_lib.reality import calibrated

    t = launch.simulate_graph(launch.decode_kernel_times("llama-3-8b", calibrated(chip), 1, 467 + 128, fused=True))
    assert t.total == pytest.approx(itl, rel=0.25)


def test_moe_refused():
    with pytest.raises(ValueError, match="mixture-of-experts"):
        launch.decode_kernel_times("mixtral-8x7b", "H200", 1, 128)
