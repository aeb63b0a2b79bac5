"""Chapter 12's additions to the training room (flops.mixed_peak_flops, practice): the FLOP-weighted peak of an FP8
run, gradient accumulation and activation offloading, against hand counts from the model's config.json and the
H100 SXM5 datasheet (989.4 TFLOP/s dense bf16, 1,978.9 dense FP8, PCIe Gen5 x16: 64 GB/s each way)."""

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib import training
from roofline_lib.training import practice

# Llama-3-8B: h 4096, 32 layers, 32 query / 8 KV heads of 128, MLP 14,336, vocabulary 128,256 (untied)
LAYERS_8B = 32 * (4096 * 32 * 128 + 2 * 4096 * 8 * 128 + 32 * 128 * 4096 + 3 * 4096 * 14336)
HEAD_8B = 128256 * 4096


@pytest.mark.parametrize("seq_len", [2048, 8192, 131072])
def test_mixed_peak_is_the_flop_weighted_harmonic_mean(seq_len):
    fp8_part = 6 * LAYERS_8B
    bf16_part = 6 * HEAD_8B + 6 * 32 * 32 * 128 * seq_len  # the LM head and causal attention
    by_hand = (fp8_part + bf16_part) / (fp8_part / 1978.9e12 + bf16_part / 989.4e12)
    got = training.mixed_peak_flops("llama-3-8b", "H100 SXM5", seq_len)
    assert got == pytest.approx(by_hand, rel=1e-4)
    assert 989.4e12 < got < 1978.9e12


def test_mixed_peak_falls_toward_bf16_with_context_and_is_the_peak_for_one_format():
    peaks = training.mixed_peak_flops("llama-3-8b", "H100 SXM5", np.array([1024, 8192, 65536, 1048576]))
    assert np.all(np.diff(peaks) < 0)
    same = training.mixed_peak_flops("llama-3-8b", "H100 SXM5", 8192, matmul_dtype="bf16")
    assert same == pytest.approx(989.4e12, rel=1e-4)


def test_mixed_peak_refuses_what_it_cannot_price():
    with pytest.raises(ValueError, match="seq_len"):
        training.mixed_peak_flops("llama-3-8b", "H100 SXM5", 0)
    with pytest.raises(ValueError):
        training.mixed_peak_flops("llama-3-8b", "A100 80GB SXM4", 8192)  # an A100 has no FP8
    assert rl.get_accelerator("H100 SXM5").peak_flops("fp8") == pytest.approx(1978.9e12, rel=1e-4)


@pytest.mark.parametrize(("global_batch", "micro", "dp", "steps"),
                         [(256, 2, 128, 1), (1024, 2, 128, 4), (504, 3, 8, 21)])
def test_accumulation_is_the_third_factor_of_the_batch(global_batch, micro, dp, steps):
    assert practice.accumulation_steps(global_batch, micro, dp) == steps
    assert micro * steps * dp == global_batch


def test_a_batch_that_does_not_split_is_refused_with_the_multiple():
    with pytest.raises(ValueError, match="multiple of micro_batch x dp = 256"):
        practice.accumulation_steps(1000, 2, 128)
    with pytest.raises(ValueError, match="micro_batch"):
        practice.accumulation_steps(1024, 0, 128)


def test_offloading_a_llama_3_8b_layer_over_pcie_and_c2c_by_hand():
    s = 4096
    # FlashAttention activations of one layer, 16-bit: norms' and blocks' inputs 8 s h, Q K V O 2 s (32+8+8+32) 128,
    # log-sum-exp 4 x 32 s, the MLP's input of SiLU, the up projection and their product 6 s i
    activations = 8 * s * 4096 + 2 * s * 80 * 128 + 4 * 32 * s + 6 * s * 14336
    layer = 4096 * 32 * 128 * 2 + 2 * 4096 * 8 * 128 + 3 * 4096 * 14336
    forward = (2 * layer * s + 2 * 32 * 128 * s * s) / 795e12  # weights and causal attention at 795 TFLOP/s
    pcie = practice.activation_offload("llama-3-8b", "H100 SXM5", 1, s, flops_per_s=795e12)
    assert pcie.bytes_per_layer == pytest.approx(activations, rel=1e-9)
    assert pcie.copy_s == pytest.approx(activations / 64e9, rel=1e-9)
    assert pcie.forward_s == pytest.approx(forward, rel=1e-9)
    assert pcie.hidden_share == pytest.approx(forward / (activations / 64e9), rel=1e-9) and pcie.hidden_share < 0.3
    c2c = practice.activation_offload("llama-3-8b", "H100 SXM5", 1, s, flops_per_s=795e12, link_bandwidth=450e9)
    assert c2c.hidden_share == 1.0 and c2c.copy_s < c2c.forward_s


def test_offload_refuses_a_missing_link():
    with pytest.raises(ValueError, match="link_bandwidth"):
        practice.activation_offload("llama-3-8b", "H100 SXM5", 1, 4096, link_bandwidth=0)


def test_an_fp8_record_is_read_against_the_mixed_peak():
    # NeMo 25.11's Llama 3 8B on H100 in FP8: 744 TFLOP/s per GPU in the causal count at 8,192 tokens
    rows = {c.id: c for c in training.measured_vs_predicted()}
    nemo = rows["nemo2511-dgx-h100-llama3_8b-fp8-cs"]
    fp8_part, bf16_part = 6 * LAYERS_8B, 6 * HEAD_8B + 6 * 32 * 32 * 128 * 8192
    mixed = (fp8_part + bf16_part) / (fp8_part / 1978.9e12 + bf16_part / 989.4e12)
    assert nemo.mfu_mixed_peak == pytest.approx(744e12 / mixed, rel=1e-3)
    assert nemo.mfu == pytest.approx(744e12 / 1978.9e12, rel=1e-3)
    assert nemo.mfu < nemo.mfu_mixed_peak < nemo.mfu_bf16_peak
    bf16 = rows["fmsfsdp-llama2-7b-a100-128gpu"]
    assert bf16.mfu_mixed_peak == bf16.mfu


def test_a_moe_router_stays_in_bf16_in_the_mixed_peak():
    # Mixtral-8x7B (config.json): h 4096, 32 layers, 32 / 8 heads of 128, 8 experts of 14,336, 2 per token, vocab 32,000
    attention = 2 * 4096 * 32 * 128 + 2 * 4096 * 8 * 128
    fp8_part = 6 * 32 * (attention + 2 * 3 * 4096 * 14336)
    bf16_part = 6 * 32 * 4096 * 8 + 6 * 32000 * 4096 + 6 * 32 * 32 * 128 * 4096  # router, LM head, attention
    by_hand = (fp8_part + bf16_part) / (fp8_part / 1978.9e12 + bf16_part / 989.4e12)
    assert training.mixed_peak_flops("mixtral-8x7b", "H100 SXM5", 4096) == pytest.approx(by_hand, rel=1e-4)
