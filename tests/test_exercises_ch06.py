"""Chapter 06's questions (optimisations) against hand computations from the model cards' shapes and datasheet
figures: A100 80GB SXM4 312 TFLOP/s bf16, 2.039 TB/s, no fp8 tensor-core rate; H100 SXM5 989.4 TFLOP/s,
3.35 TB/s, 132 SMs."""

import pytest
from exercise_hand import LLAMA_2_7B, LLAMA_3_8B, chapter_tests, memory_bound_time

import roofline_lib as rl

A100, H100 = (312e12, 2.039e12), (989.4e12, 3.35e12)

HAND = {
    # every kernel of a batch-1 step at 4,096 positions, bf16 weights over int4 weights; both memory-bound
    "06.int4_speedup": memory_bound_time(LLAMA_2_7B, 1, 4096, *A100)
    / memory_bound_time(LLAMA_2_7B, 1, 4096, *A100, weight="int4"),
    # x read once more, six [4096, 14336] crossings saved, bf16
    "06.fused_mlp_bytes_8b": 2 * (4_096 * 4_096 + 6 * 4_096 * 14_336) / 1e6,
    # 40 blocks on 132 SMs (30 %) vs 3 splits, 120 blocks in one wave (91 %)
    "06.flash_decoding_13b": (120 / 132) / (40 / 132),
    # batch 8 at 32,768 positions: a bf16 KV cache over an fp8 one
    "06.predict_fp8_kv_32k": memory_bound_time(LLAMA_3_8B, 8, 32768, *H100)
    / memory_bound_time(LLAMA_3_8B, 8, 32768, *H100, kv="fp8"),
    "06.design_one_change_4ms": "int4 weights",    # test_thinking_questions_by_hand
    "06.explain_int4_gap": "dequantisation",
    "06.mistake_fp8_a100": "no fp8 peak",
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("06", HAND)


def test_flash_decoding_splits_by_hand():
    # 06.flash_decoding_13b: 40 blocks on 132 SMs (30%) vs 3 splits, 120 blocks in one wave (91%; the best, 132 of
    # 132, needs 33 splits: 3 is the fewest within 85 % of it)
    assert rl.exercises.get_question("06.flash_decoding_13b").expected() == pytest.approx((120 / 132) / (40 / 132),
                                                                                         rel=1e-9)


def test_int4_speedup_and_fused_mlp_bytes_by_hand():
    # 06.int4_speedup: Llama-2-7B, weights but the embedding at 2 vs 0.5 bytes, plus 4,096 positions of KV cache
    body = 6_738_415_616 - 32_000 * 4_096
    kv = 2 * 32 * 4_096 * 2 * 4_096
    assert rl.exercises.check("06.int4_speedup", (2 * body + kv) / (0.5 * body + kv)).correct
    # 06.fused_mlp_bytes_8b: x read once more, six [4096, 14336] crossings saved, bf16
    assert rl.exercises.get_question("06.fused_mlp_bytes_8b").expected() == pytest.approx(
        2 * (4_096 * 4_096 + 6 * 4_096 * 14_336) / 1e6, rel=1e-9)


def test_thinking_questions_by_hand():
    # 06.predict_fp8_kv_32k: Llama-3-8B weights but the embedding in bf16, plus 8 KV caches of 32,768 positions
    # (131,072 bytes each in bf16): fp8 halves only the second term
    weights = 2 * (8_030_261_248 - 128_256 * 4_096)
    kv = 8 * 32_768 * 131_072
    assert rl.exercises.check("06.predict_fp8_kv_32k", (weights + kv) / (weights + kv / 2)).correct
    assert not rl.exercises.check("06.predict_fp8_kv_32k", 2.0).correct  # the KV halved is not the step halved
    # 06.design_one_change_4ms at 3.35 TB/s: KV of 8 x 8,192 positions = 8.59 GB in bf16
    kv = 8 * 8_192 * 131_072
    step = {"int8 weights": (weights / 2 + kv), "int4 weights": (weights / 4 + kv), "fp8 kv": (weights + kv / 2)}
    ms = {k: b / 3.35e12 * 1e3 for k, b in step.items()}
    assert ms["int4 weights"] < 3.8 < 4 < 4.4 < min(ms["int8 weights"], ms["fp8 kv"])
    assert rl.exercises.check("06.design_one_change_4ms", "int4 weights").correct
    assert rl.exercises.check("06.design_one_change_4ms", "FP8 KV").message.count("4.5 ms") == 1
    # 06.explain_int4_gap and 06.mistake_fp8_a100: the A100 80GB SXM4's datasheet lists no fp8 tensor-core rate
    assert "fp8" not in rl.get_accelerator("A100").peak_flops_by_dtype
    assert rl.exercises.check("06.mistake_fp8_a100", "no fp8 peak").correct
    assert rl.exercises.check("06.explain_int4_gap", "dequantization").correct
    for wrong in ("kv cache", "compute-bound", "bandwidth"):
        feedback = rl.exercises.check("06.explain_int4_gap", wrong)
        assert not feedback.correct and "Hint" not in feedback.message
