"""Chapter 12's additions to the training room: the FLOP-weighted peak of an FP8 run, against hand counts from
the model's config.json and the H100 SXM5 datasheet (989.4 TFLOP/s dense bf16, 1,978.9 dense FP8)."""

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib import training

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
