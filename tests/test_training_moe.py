"""training.moe: MoE training with expert parallelism, against hand arithmetic and DeepSeek-V3's report; the
DeepSeek-V3 pretraining run through the whole-run loader."""

import itertools

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.multichip import expert_serving as X
from roofline_lib.training import moe as T
from roofline_lib.training import records as R

DSV3 = "deepseek-v3"


def test_fp8_training_bytes():
    """FP32 master weights (4) and gradients (4), BF16 AdamW moments (2 + 2): 12 bytes per parameter."""
    assert T.fp8_training_bytes_per_param() == 4 + 4 + 2 + 2


def test_grouped_gemm_efficiency_by_hand():
    """One expert's gate/up GEMM, [M, 7168] x [7168, 4096] in fp8 on an H800: at M = 1 it reads 7168 x 4096 weight
    bytes + 7168 input bytes + 4096 x 2 output bytes at 3.35 TB/s, and computes 2 x 7168 x 4096 FLOPs at 1978.9
    TFLOP/s: the share of the peak is their ratio; by M = 1024 it is compute-bound (1)."""
    flops = 2 * 7168 * 4096
    t_mem = (7168 * 4096 + 7168 + 4096 * 2) / 3.35e12
    assert T.grouped_gemm_efficiency(DSV3, "H800", 1) == pytest.approx(flops / 1978.9e12 / t_mem, rel=1e-9)
    eff = T.grouped_gemm_efficiency(DSV3, "H800", np.array([1, 8, 64, 256, 1024]))
    assert np.all(np.diff(eff) > 0) and eff[-1] == 1.0 and eff[0] < 0.01


def test_nodes_touched_with_a_node_limit_by_enumeration():
    """8 experts on 4 nodes (2 each), top-2 among the experts of 2 chosen nodes: over the 6 pairs of those 4
    experts, 2 sit on one node and 4 on two: 10/6 nodes."""
    pairs = list(itertools.combinations(range(4), 2))
    mean = np.mean([len({a // 2, b // 2}) for a, b in pairs])
    assert X.nodes_touched("mixtral-8x7b", 4, node_limit=2) == pytest.approx(mean, rel=1e-12) == pytest.approx(10 / 6)


def test_expert_gradient_bytes_by_hand():
    """EP64 in 128-way data parallelism: each expert has 2 copies; a chip holds 58 x 256 / 64 experts of 3 x 7168 x
    2048 weights, reduces their bf16 gradients by a ring over 2: 2 (2 - 1)/2 = 1 x their bytes = 20.43 GB."""
    held = 58 * 256 / 64 * 3 * 7168 * 2048 * 2
    assert T.expert_gradient_bytes(DSV3, 64, 128) == pytest.approx(held, rel=1e-12)
    assert held == pytest.approx(20.43e9, rel=1e-3)
    assert T.expert_gradient_bytes(DSV3, 64, 64) == 0
    with pytest.raises(ValueError, match="multiple of ep"):
        T.expert_gradient_bytes(DSV3, 64, 96)


def test_layer_times_and_dualpipe():
    """All-to-all bytes per step are the four per layer x 58 MoE layers; DualPipe takes the larger of compute and
    communication; communication over compute scales with the MFU the compute runs at."""
    full = T.moe_layer_times(DSV3, "H800", 4096, 64, node_limit=4)
    half = T.moe_layer_times(DSV3, "H800", 4096, 64, node_limit=4, mfu=0.5)
    assert half.ratio == pytest.approx(full.ratio * 0.5) and full.dualpipe == max(full.t_compute, full.t_comm)
    assert full.sequential == pytest.approx(full.t_compute + full.t_comm)
    fwd = X.alltoall_bytes_per_layer(DSV3, 4096, 64, mode="normal", node_limit=4)
    # backward: the combine's gradient goes out in FP8 like the forward dispatch (V3 report, Sec. 3.3.3), the
    # dispatch's gradient in BF16 like the forward combine: the backward moves the forward's bytes again
    per_layer = 2 * sum(vars(fwd).values())
    assert T.alltoall_bytes_per_step(DSV3, 4096, 64, node_limit=4) == pytest.approx(58 * per_layer)


def test_pipeline_bubbles_from_the_report():
    """DeepSeek-V3 report, Table 2, at PP = 16, F = 1, B = 2, W = 0.5: 1F1B 15 x 3 = 45; ZB1P 15 x 2 = 30;
    DualPipe 7 x (3 + 2 - 1.5) = 24.5."""
    assert T.pipeline_bubble("1f1b", 16, 1, 2, 0.5) == 45
    assert T.pipeline_bubble("zb1p", 16, 1, 2, 0.5) == 30
    assert T.pipeline_bubble("dualpipe", 16, 1, 2, 0.5) == 24.5
    with pytest.raises(ValueError, match="even"):
        T.pipeline_bubble("dualpipe", 15, 1, 2)
    with pytest.raises(ValueError, match="schedule"):
        T.pipeline_bubble("gpipe", 16, 1, 2)


def test_deepseek_v3_pretraining_run():
    """2.664M H800 GPU-hours for 14.8T tokens: by hand, 6 x 37e9 activated parameters x 14.8e12 tokens over 2.664e6
    x 3600 s x 989.4 TFLOP/s (the bf16 dense peak) is 34.7 %; the loader's 6N over the course's active count
    (embedding included) agrees within 2 %, and with attention (causal, 4K) it is 39 %: plausible for a whole run."""
    run, = R.training_runs(R.RUNS_DIR / "moe")
    assert run.chip == "H800 SXM5" and run.gpu_hours == 2.664e6 and run.tokens_trained == 14.8e12
    hand = 6 * 37e9 * 14.8e12 / (2.664e6 * 3600 * 989.4e12)
    assert hand == pytest.approx(0.3466, abs=5e-4)
    assert run.implied_mfu("6N") == pytest.approx(hand, rel=0.02)
    assert 0.3 < run.implied_mfu() < 0.5


def test_nemo_moe_records_beside_their_bounds():
    """NeMo 25.11's MoE rows (data/training/moe/): none beats its bound (the dense peak of its precision over the
    causal count of active parameters), and that count times the published tokens/s gives Megatron-Bridge's own
    published Model TFLOP/s per GPU within 4 % (782, 1003, 557, 728, 121; the B200 row is the 3.8 % one): two
    independent FLOP counts agree."""
    published = {"nemo2511-dgx-gb200-deepseekv3-bf16": 782e12, "nemo2511-dgx-gb200-deepseekv3-mxfp8": 1003e12,
                 "nemo2511-dgx-b200-deepseekv3-mxfp8": 557e12, "nemo2511-dgx-gb200-qwen3-235b-a22b-bf16": 728e12,
                 "nemo2511-dgx-h100-qwen3-30b-a3b-fp8cs": 121e12}
    comparisons = R.measured_vs_predicted(R.published_measurements(R.TRAINING_DIR / "moe"))
    assert {c.id for c in comparisons} == set(published)
    for c in comparisons:
        assert c.measured_tokens_per_s_per_chip < c.bound_tokens_per_s_per_chip and c.mfu < 1
        rate = c.mfu_bf16_peak * rl.get_accelerator(c.record.chip).peak_flops("bf16")
        assert rate == pytest.approx(published[c.id], rel=0.04), c.id
