"""Chapter 05's questions (LLM inference) against hand computations from the model cards' shapes and datasheet
figures: A100 80GB SXM4 312 TFLOP/s bf16, 2.039 TB/s; H200 SXM 989.4 TFLOP/s, 4.8 TB/s, 143,771 MiB (nvidia-smi);
Llama-3-70B 70,553,706,496 parameters, 80 layers, 8 KV heads of 128."""

import math

import pytest
from exercise_hand import LLAMA_3_8B, chapter_tests, memory_bound_time

import roofline_lib as rl

KV_PER_POSITION_70B = 2 * 80 * 8 * 128 * 2      # K and V, 80 layers, 8 KV heads of 128, bf16: 327,680 bytes
K, N, P = 14_336, 4_096, 312e12 / 2.039e12       # Llama-3-8B's down projection [b, K] x [K, N]; the A100's ridge

HAND = {
    "05.kv_llama3_70b": KV_PER_POSITION_70B * 8192 * 16 / 1e9,
    # b K N / (b K + K N + b N) >= P solved for b: b* = 160.7 -> 161
    "05.critical_batch_8b_a100": math.ceil(P * K * N / (K * N - P * (K + N))),
    # every kernel of the step at the H200's 4.8 TB/s (memory-bound; the hand count is in exercise_hand.py)
    "05.predict_step_batch64": memory_bound_time(LLAMA_3_8B, 64, 4096, 989.4e12, 4.8e12) * 1e3,
    "05.design_dtype_32k": "int4",            # test_design_dtype_by_hand
    "05.explain_prefill_memory": "shorter prompt",   # intensity ~64 < 153
    "05.mistake_kv_heads": "kv heads",        # test_thinking_questions_by_hand
    # (0.9 x 143,771 MiB - 1 byte per parameter) // (KV bytes of one sequence of 8,192 positions): 24
    "05.max_batch_fp8": int((0.9 * 143_771 * 2**20 - 70_553_706_496) // (KV_PER_POSITION_70B * 8192)),
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("05", HAND)


def test_kv_cache_and_prefill_by_hand():
    # 05.kv_llama3_70b by hand: 2 x 80 x 8 x 128 x 8192 x 16 x 2 bytes
    assert rl.exercises.check("05.kv_llama3_70b", 2 * 80 * 8 * 128 * 8192 * 16 * 2 / 1e9).correct
    # 05.explain_prefill_memory: a 64-token prefill has intensity ~64 < 153, the A100's ridge; the others raise it
    assert rl.exercises.check("05.explain_prefill_memory", "shorter prompt").correct


def test_critical_batch_and_max_batch_by_hand():
    # 05.critical_batch_8b_a100: b K N / (b K + K N + b N) >= P solved for b, with the A100 80GB SXM4 datasheet's
    # 312 TFLOP/s bf16 over 2.039 TB/s: b* = 160.7 -> 161
    K, N, P = 14_336, 4_096, 312e12 / 2.039e12
    assert math.ceil(P * K * N / (K * N - P * (K + N))) == 161
    assert rl.exercises.get_question("05.critical_batch_8b_a100").expected() == 161
    # 05.max_batch_fp8: (0.9 x 143,771 MiB - 1 byte per parameter) / (2 x 80 x 8 x 128 x 8192 x 2 bytes),
    # rounded down: 24. The slips: "141 GB" read as 141e9 bytes (26), or all of the memory (29)
    per_sequence = 2 * 80 * 8 * 128 * 8_192 * 2
    assert rl.exercises.check("05.max_batch_fp8", (0.9 * 143_771 * 2**20 - 70_553_706_496) // per_sequence).correct
    assert (0.9 * 143_771 * 2**20 - 70_553_706_496) // per_sequence == 24
    for slip in ((141e9 - 70_553_706_496) // per_sequence, (143_771 * 2**20 - 70_553_706_496) // per_sequence):
        assert not rl.exercises.check("05.max_batch_fp8", slip).correct


def test_thinking_questions_by_hand():
    # 05.predict_step_batch64: Llama-3-8B weights but the embedding (8,030,261,248 - 128,256 x 4,096 parameters,
    # 2 bytes) once, plus 64 KV caches of 4,096 positions (2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes
    # per position), at the H200's 4.8 TB/s: 10.29 ms (with the activations: 10.44 ms)
    weights = 2 * (8_030_261_248 - 128_256 * 4_096)
    kv = 64 * 4_096 * 2 * 32 * 8 * 128 * 2
    hand = (weights + kv) / 4.8e12 * 1e3
    assert hand == pytest.approx(10.285, abs=0.001)
    assert HAND["05.predict_step_batch64"] == pytest.approx(10.44, abs=0.01)
    assert rl.exercises.check("05.predict_step_batch64", hand).correct
    assert not rl.exercises.check("05.predict_step_batch64", 64 * 3.24).correct  # 64 x batch 1: the weights once each
    # 05.design_dtype_32k: usable = 0.9 x 143,771 MiB - 0.5 GiB; a 32,768-position sequence's KV = 2 x 80 x 8 x 128 x
    # 32,768 x 2 bytes; Llama-3-70B's 70,553,706,496 parameters at 2, 1 and 0.5 bytes
    usable = 0.9 * 143_771 * 2**20 - 0.5 * 2**30
    per_sequence = 2 * 80 * 8 * 128 * 32_768 * 2
    sizes = {"bf16": 2, "fp8": 1, "int4": 0.5}
    fit = {d: int((usable - 70_553_706_496 * size) // per_sequence) for d, size in sizes.items()}
    assert fit["bf16"] < 0 and fit["fp8"] == 6 and fit["int4"] == 9
    assert rl.exercises.check("05.design_dtype_32k", "int4").correct
    feedback = rl.exercises.check("05.design_dtype_32k", "fp8")
    assert not feedback.correct and "6 sequences" in feedback.message
    # 05.mistake_kv_heads: with the 8 KV heads the colleague's sum gives the chapter's 42.95 GB, not 344 GB
    kv = rl.get_model("llama-2-70b").kv_cache_bytes(16, 8192)
    assert kv == 2 * 80 * 8 * 128 * 2 * 16 * 8_192 and kv / 1e9 == pytest.approx(42.95, rel=1e-3)
    assert 64 / 8 * kv / 1e9 == pytest.approx(343.6, rel=1e-3)  # all 64 query heads counted instead
    assert rl.exercises.check("05.mistake_kv_heads", "KV heads").correct
    assert "2 bytes" in rl.exercises.check("05.mistake_kv_heads", "bytes").message
    # 05.explain_prefill_memory: each weight serves 64 tokens, intensity ~ 64 < 312 / 2.039 = 153
    assert 64 < rl.get_accelerator("A100").ridge_point("bf16") == pytest.approx(312 / 2.039)
    for wrong in ("int4 weights", "more bandwidth", "larger batch"):
        feedback = rl.exercises.check("05.explain_prefill_memory", wrong)
        assert not feedback.correct and "Hint" not in feedback.message  # each wrong choice says what is wrong with it
