"""Chapter 14's questions (mixture of experts) against hand computations: exact fractions for the experts touched,
the dispatch's bytes counted by hand, memory per GPU from the expert's 3 x 7168 x 2048 weights and the latent cache's
61 x 576 x 2 bytes per position, a GEMM's roofline by hand, GPU-hours over GPUs."""

from fractions import Fraction

from exercise_hand import chapter_tests

from roofline_lib.exercises import check

EXPERT = 3 * 7168 * 2048  # one routed expert's fp8 bytes (gate, up, down)
KV_128 = 128 * 4097 * 61 * 576 * 2  # 128 sequences at 4,096 positions (+ the new one), bf16 latent: 36.85 GB
NON_EXPERT = 671e9 - 58 * 256 * EXPERT  # the README's 671e9 parameters less the routed experts, fp8: 17.1 GB


def _fits(ep):  # 85 % of the H800's 81,559 MiB (nvidia-smi's memory.total): 72.7 GB
    return NON_EXPERT + 58 * (256 + (-256) % ep) / ep * EXPERT + KV_128 <= 0.85 * 81559 * 2**20


HAND = {
    "14.touched_32": float(256 * (1 - (1 - Fraction(8, 256)) ** 32)),
    "14.dispatch_qwen3": 8 * (4096 + 4096 // 128 * 4),
    # per H200: 32 experts x 58 layers x 44.0 MB = 81.7 GB of expert weights at 4.8 TB/s, 17 ms, and a little more as
    # the batch grows; the attention side reads the other 17.7 GB of weights (3.7 ms) plus each sequence's 2,001 x
    # 70,272 bytes of latent (0.029 ms per sequence at 4.8 TB/s): 3.7 + 256 x 0.029 = 11 ms < 18 ms at 256,
    # 3.7 + 512 x 0.029 = 19 ms > 18.7 ms at 512
    "14.predict_attention_overtakes": 512,
    # EP32: 17.1 + 20.4 + 36.85 = 74.4 GB > 72.7 (it would fit the whole 85.5); EP64: 17.1 + 10.2 + 36.85 = 64.2 GB
    # fits
    "14.design_smallest_ep": next(n for n in (8, 16, 32, 64, 72, 144) if _fits(n)),
    "14.predict_gemm_share": (2 * 8 * 4096 * 7168 / 1978.9e12)
    / ((7168 * 4096 + 8 * 7168 + 8 * 4096 * 2) / 3.35e12),
    "14.pretraining_wall_clock": 2.664e6 / 2048 * 3600,
    "14.mistake_per_node": "per node",
    "14.explain_double_ep": "expert weights",
}

test_hand_values, test_every_question_has_a_hand_value = chapter_tests("14", HAND)


def test_hand_design_is_64():
    assert HAND["14.design_smallest_ep"] == 64
    assert not check("14.design_smallest_ep", 32)  # fits only with the whole memory counted


def test_the_traps_are_rejected():
    assert not check("14.touched_32", 256)                # every expert: true only for large batches
    assert not check("14.touched_32", 32 * 8)             # assignments, not distinct experts
    assert not check("14.dispatch_qwen3", 8 * 4096)       # the scales left out
    assert not check("14.dispatch_qwen3", 8 * 4096 * 2)   # bf16 dispatch
    assert not check("14.pretraining_wall_clock", 2.664e6 * 3600)  # GPU-seconds, not wall clock
    assert not check("14.mistake_per_node", "nothing")
