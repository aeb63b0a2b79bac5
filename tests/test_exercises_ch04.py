"""Chapter 04's questions (attention) against hand computations: the chapter's intensity formulas solved by hand,
H200 SXM 989.4 TFLOP/s bf16 over 4.8 TB/s, and FlashAttention-3's exponential rate (16 per SM per clock, 132 SMs,
1.83 GHz)."""

import pytest
from exercise_hand import asked_in_notebook, chapter_ids, chapter_tests

from roofline_lib.exercises import check

H200_RIDGE = 989.4 / 4.8            # FLOP/byte, dense bf16 over HBM3e

HAND = {
    "04.prefill_slip_g4": 4 * 512 / (4 + 1),                 # erratum 5: G T / (G + 1) per bf16 byte, 409.6
    "04.spec_tokens_h200": 53,                               # 32 T 8192 / (32 T + 65536) >= 206.1: T >= 52.9
    "04.why_batch": "own",                                   # batch multiplies FLOPs and K/V bytes alike
    "04.predict_exp_d96": 989.4e12 / (2 * (96 + 96) * 16 * 132 * 1.83e9),   # P / (2 (d_qk + d_v) P_exp): 0.667
    "04.decode_time_h200": 2 * 16 * (8192 * 8 * 256 + 1 * 32 * 256) / 4.8e12,   # K, V + Q, O bytes / bandwidth
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("04", HAND)


def test_hand_values_match_published_figures():
    t_star = H200_RIDGE * 8 * 8192 / (32 * 8192 - 32 * H200_RIDGE)  # 32 T S = R (32 T + 8 S), solved for T
    assert 52 < t_star < 53 == HAND["04.spec_tokens_h200"]
    assert 2 * 512 / (1 + 4) / 2 < H200_RIDGE < HAND["04.prefill_slip_g4"]   # the slip flips the bound


@pytest.mark.parametrize("qid, wrong", [
    ("04.prefill_slip_g4", 2 * 512 / (1 + 4) / 2),               # the source's 2T/(1+G), halved (erratum 5)
    ("04.prefill_slip_g4", 2 * 4 * 512 / (4 + 1)),               # per element instead of per byte (erratum 4)
])
def test_the_sources_slips_are_rejected(qid, wrong):
    assert not check(qid, wrong).correct


def test_every_question_is_asked_in_its_notebook():
    assert asked_in_notebook("04") == chapter_ids("04")
