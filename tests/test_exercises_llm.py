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
    # 06.flash_decoding_13b: 40 blocks on 132 SMs (30%) vs 3 splits, 120 blocks in one wave (91%; the best, 132 of
    # 132, needs 33 splits: 3 is the fewest within 85 % of it)
    assert rl.exercises.get_question("06.flash_decoding_13b").expected() == pytest.approx((120 / 132) / (40 / 132),
                                                                                         rel=1e-9)
    # 05.explain_prefill_memory: a 64-token prefill has intensity ~64 < 153, the A100's ridge; the others raise it
    assert rl.exercises.check("05.explain_prefill_memory", "shorter prompt").correct


def test_independent_values_by_hand():
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
    # 06.int4_speedup: Llama-2-7B, weights but the embedding at 2 vs 0.5 bytes, plus 4,096 positions of KV cache
    body = 6_738_415_616 - 32_000 * 4_096
    kv = 2 * 32 * 4_096 * 2 * 4_096
    assert rl.exercises.check("06.int4_speedup", (2 * body + kv) / (0.5 * body + kv)).correct
    # 06.fused_mlp_bytes_8b: x read once more, six [4096, 14336] crossings saved, bf16
    assert rl.exercises.get_question("06.fused_mlp_bytes_8b").expected() == pytest.approx(
        2 * (4_096 * 4_096 + 6 * 4_096 * 14_336) / 1e6, rel=1e-9)


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


def test_chapter_05_thinking_questions_by_hand():
    # 05.predict_step_batch64: Llama-3-8B weights but the embedding (8,030,261,248 - 128,256 x 4,096 parameters,
    # 2 bytes) once, plus 64 KV caches of 4,096 positions (2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes
    # per position), at the H200's 4.8 TB/s: 10.29 ms (the library adds activations: 10.44 ms)
    weights = 2 * (8_030_261_248 - 128_256 * 4_096)
    kv = 64 * 4_096 * 2 * 32 * 8 * 128 * 2
    hand = (weights + kv) / 4.8e12 * 1e3
    assert hand == pytest.approx(10.285, abs=0.001)
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
    assert 2 * 80 * 8 * 128 * 2 * 16 * 8_192 / 1e9 == pytest.approx(42.94967296, rel=1e-9)
    assert 2 * 80 * 64 * 128 * 2 * 16 * 8_192 / 1e9 == pytest.approx(343.6, rel=1e-3)
    assert rl.exercises.check("05.mistake_kv_heads", "KV heads").correct
    assert "2 bytes" in rl.exercises.check("05.mistake_kv_heads", "bytes").message
    # 05.explain_prefill_memory: each weight serves 64 tokens, intensity ~ 64 < 312 / 2.039 = 153
    assert 64 < 312e12 / 2.039e12
    for wrong in ("int4 weights", "more bandwidth", "larger batch"):
        feedback = rl.exercises.check("05.explain_prefill_memory", wrong)
        assert not feedback.correct and "Hint" not in feedback.message  # each wrong choice says what is wrong with it


def test_chapter_06_thinking_questions_by_hand():
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


def test_chapter_10_thinking_questions_by_hand():
    # 10.predict_calibrated_13b: Llama-2-13B's weights but the embedding (13,015,864,320 - 32,000 x 5,120 parameters,
    # 2 bytes) plus 1,024 positions of KV cache (2 x 40 layers x 5,120 x 2 bytes), at the A100's achieved 1.6 TB/s
    hand = (2 * (13_015_864_320 - 32_000 * 5_120) + 2 * 40 * 5_120 * 2 * 1_024) / 1.6e12 * 1e3
    assert rl.exercises.check("10.predict_calibrated_13b", hand).correct
    assert not rl.exercises.check("10.predict_calibrated_13b", hand * 1.6e12 / 2.039e12).correct  # the datasheet's
    # 10.design_a100s_30_tokens: the calibrated bound is 1/n of Llama-2-70B's step at 1.6 TB/s (42.97 ms on 2 GPUs,
    # section 4c), plus 160 all-reduces at ~29 us (the median of 27.7, 29.1, 31.4, 24.6, 32.9 us): 47.6 ms on 2 GPUs,
    # 26.1 ms on 4; 30 tokens/s needs 33.3 ms or less
    per_allreduce = 29.1e-6
    assert 42.97e-3 + 160 * per_allreduce > 1 / 30 > 42.97e-3 / 2 + 160 * per_allreduce
    assert rl.exercises.check("10.design_a100s_30_tokens", "4").correct
    assert "21 tokens/s" in rl.exercises.check("10.design_a100s_30_tokens", "2").message
    # 10.mistake_int4_mbu: the bound / 0.7 overshoots the held-out measurement (180.80 tok/s) twofold
    assert 0.7 / 1.85e-3 > 2 * 180.80
    assert rl.exercises.check("10.mistake_int4_mbu", "int4 mbu").correct
    assert rl.exercises.check("10.explain_server_tpot", "batch").correct
    for wrong in ("fp8", "network", "bound wrong"):
        assert "Hint" not in rl.exercises.check("10.explain_server_tpot", wrong).message
