"""The chapter 05 and 06 self-checks accept their own answer, diagnose slips, and have enough questions."""

import math

import pytest

import roofline_lib as rl


@pytest.mark.parametrize("chapter", ["05.", "06."])
def test_at_least_four_questions(chapter):
    assert len(rl.exercises.questions(chapter)) >= 4


@pytest.mark.parametrize("q", rl.exercises.questions("05.") + rl.exercises.questions("06."), ids=lambda q: q.id)
def test_expected_answer_is_accepted_and_a_unit_slip_is_not(q):
    value = q.expected()
    assert rl.exercises.check(q.id, value).correct
    if q.kind == "number":
        feedback = rl.exercises.check(q.id, value * 1000)
        assert not feedback.correct and "10^3" in feedback.message


def test_independent_values():
    # 05.kv_llama3_70b by hand: 2 x 80 x 8 x 128 x 8192 x 16 x 2 bytes
    assert rl.exercises.check("05.kv_llama3_70b", 2 * 80 * 8 * 128 * 8192 * 16 * 2 / 1e9).correct
    # 06.h200_vs_h100: a memory-bound step speeds up by the bandwidth ratio 4.8 / 3.35
    assert rl.exercises.check("06.h200_vs_h100", 4.8 / 3.35).correct
    # 06.flash_decoding: 32 blocks on 132 SMs (24%) vs 4 splits, 128 blocks in one wave (97%)
    assert rl.exercises.check("06.flash_decoding", (128 / 132) / (32 / 132)).correct
    assert rl.exercises.check("05.prefill_bound", "compute-bound").correct


def test_independent_values_by_hand():
    # 05.decode_latency_13b: every weight but the embedding table (a lookup) plus the KV cache of 1,024
    # positions (2 x 40 layers x 5120 x 2 bytes each), at the A100 80GB SXM4's 2.039 TB/s
    weights = 2 * (13_015_864_320 - 32_000 * 5_120)
    kv = 2 * 40 * 5_120 * 2 * 1_024
    assert rl.exercises.check("05.decode_latency_13b", (weights + kv) / 2.039e12 * 1e3).correct
    # 05.critical_batch_70b_h200: B K N / (B K + K N + B N) >= P solved for B, with the H200 datasheet's
    # 989.5 TFLOP/s (half the 1,979 sparse headline) over 4.8 TB/s
    K, N, P = 28_672, 8_192, 989.5e12 / 4.8e12
    assert rl.exercises.check("05.critical_batch_70b_h200", math.ceil(P * K * N / (K * N - P * (K + N)))).correct
    # 05.max_batch_fp8: (0.9 x 143,771 MiB - 1 byte per parameter) / (2 x 80 x 8 x 128 x 8192 x 2 bytes),
    # rounded down: 24. The slips: "141 GB" read as 141e9 bytes (26), or all of the memory (29)
    per_sequence = 2 * 80 * 8 * 128 * 8_192 * 2
    assert rl.exercises.check("05.max_batch_fp8", (0.9 * 143_771 * 2**20 - 70_553_706_496) // per_sequence).correct
    assert (0.9 * 143_771 * 2**20 - 70_553_706_496) // per_sequence == 24
    for slip in ((141e9 - 70_553_706_496) // per_sequence, (143_771 * 2**20 - 70_553_706_496) // per_sequence):
        assert not rl.exercises.check("05.max_batch_fp8", slip).correct
    # 06.int4_speedup: Llama-2-7B, weights but the embedding at 2 vs 0.5 bytes, plus 2,048 positions of KV cache
    body = 6_738_415_616 - 32_000 * 4_096
    kv = 2 * 32 * 4_096 * 2 * 2_048
    assert rl.exercises.check("06.int4_speedup", (2 * body + kv) / (0.5 * body + kv)).correct
    # 06.fused_mlp_bytes: x read once more, six [2048, 11008] crossings saved, bf16
    assert rl.exercises.check("06.fused_mlp_bytes", 2 * (2_048 * 4_096 + 6 * 2_048 * 11_008) / 1e6).correct
    # 06.prefill_int4: prefill is compute-bound, so fewer weight bytes do not change its time
    assert rl.exercises.check("06.prefill_int4", 1.0).correct


def test_chapter_10_against_published_and_hand_values():
    # the held-out records, as their sources print them: gpt-fast README 38.01 tok/s; torchao README 180.80
    q = rl.exercises.get_question("10.holdout_tp4")
    assert q.expected() == pytest.approx(38.01, rel=1e-9)
    assert rl.exercises.get_question("10.holdout_int4").expected() == pytest.approx(180.80, rel=1e-9)
    assert rl.exercises.check("10.holdout_tp4", 36.0).correct and not rl.exercises.check("10.holdout_tp4", 47.4).correct
    # 10.impossible: 20 x 2 x 13,015,864,320 bytes at 2.039 TB/s = 255 ms > 142.5 ms
    assert 20 * 2 * 13_015_864_320 / 2.039e12 > 142.5e-3
    assert rl.exercises.check("10.impossible", "impossible").correct
    assert not rl.exercises.check("10.impossible", "possible").correct
