"""Chapter 10's questions (predictions against published measurements): the held-out records as their sources
print them (gpt-fast README 38.01 tok/s; torchao README 180.80 tok/s), and hand computations with the A100's
measured ceilings (stas00/ml-engineering: 271.2 TFLOP/s bf16, 1.6 TB/s) and its datasheet 2.039 TB/s."""

import pytest
from exercise_hand import LLAMA_2_13B, chapter_tests, memory_bound_time

import roofline_lib as rl

A100_ACHIEVED = (271.2e12, 1.6e12)

HAND = {
    "10.holdout_tp4": 38.01,
    "10.holdout_int4": 180.80,
    # 20 x 2 x (13,015,864,320 - 32,000 x 5,120) bytes (all but the embedding table) at 2.039 TB/s = 252 ms > 142.5 ms
    "10.impossible": "impossible",
    # every kernel of Llama-2-13B's batch-1 step at 1,024 positions, at the measured 1.6 TB/s
    "10.predict_calibrated_13b": memory_bound_time(LLAMA_2_13B, 1, 1024, *A100_ACHIEVED) * 1e3,
    "10.design_a100s_30_tokens": "4",          # test_thinking_questions_by_hand
    "10.explain_server_tpot": "batch",
    "10.mistake_int4_mbu": "int4 mbu",
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("10", HAND)


def test_against_published_and_hand_values():
    # the held-out records, as their sources print them: gpt-fast README 38.01 tok/s; torchao README 180.80
    q = rl.exercises.get_question("10.holdout_tp4")
    assert q.expected() == pytest.approx(38.01, rel=1e-9)
    assert rl.exercises.get_question("10.holdout_int4").expected() == pytest.approx(180.80, rel=1e-9)
    assert rl.exercises.check("10.holdout_tp4", 36.0).correct and not rl.exercises.check("10.holdout_tp4", 47.4).correct
    # 10.impossible: 20 x 2 x (13,015,864,320 - 32,000 x 5,120) bytes (all but the embedding table, of which a step
    # reads one row) at 2.039 TB/s = 252 ms > 142.5 ms
    weights = 2 * (13_015_864_320 - 32_000 * 5_120)
    assert 20 * weights / 2.039e12 > 142.5e-3
    assert rl.exercises.check("10.impossible", "impossible").correct
    assert not rl.exercises.check("10.impossible", "possible").correct


def test_thinking_questions_by_hand():
    # 10.predict_calibrated_13b: Llama-2-13B's weights but the embedding (13,015,864,320 - 32,000 x 5,120 parameters,
    # 2 bytes) plus 1,024 positions of KV cache (2 x 40 layers x 5,120 x 2 bytes), at the A100's achieved 1.6 TB/s
    hand = (2 * (13_015_864_320 - 32_000 * 5_120) + 2 * 40 * 5_120 * 2 * 1_024) / 1.6e12 * 1e3
    assert rl.exercises.check("10.predict_calibrated_13b", hand).correct
    assert not rl.exercises.check("10.predict_calibrated_13b", hand * 1.6e12 / 2.039e12).correct  # the datasheet's
    # 10.design_a100s_30_tokens: the calibrated bound is 1/n of Llama-2-70B's step at 1.6 TB/s (42.97 ms on 2 GPUs,
    # section 4c), plus 80 layers of tensor-parallel overhead at ~58 us (twice the median residue per slot of 27.7,
    # 29.1, 31.4, 24.6, 32.9 us): 47.6 ms on 2 GPUs, 26.1 ms on 4; 30 tokens/s needs 33.3 ms or less
    per_layer = 2 * 29.1e-6
    assert 42.97e-3 + 80 * per_layer > 1 / 30 > 42.97e-3 / 2 + 80 * per_layer
    assert rl.exercises.check("10.design_a100s_30_tokens", "4").correct
    assert "21 tokens/s" in rl.exercises.check("10.design_a100s_30_tokens", "2").message
    # 10.mistake_int4_mbu: the bound / 0.7 overshoots the held-out measurement (180.80 tok/s) twofold
    assert 0.7 / 1.85e-3 > 2 * rl.exercises.get_question("10.holdout_int4").expected()
    assert rl.exercises.check("10.mistake_int4_mbu", "int4 mbu").correct
    assert rl.exercises.check("10.explain_server_tpot", "batch").correct
    for wrong in ("fp8", "network", "bound wrong"):
        assert "Hint" not in rl.exercises.check("10.explain_server_tpot", wrong).message
