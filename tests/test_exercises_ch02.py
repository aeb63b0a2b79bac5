"""Chapter 02's questions (the roofline) against hand computations from datasheet figures:
A100 80GB SXM4 312 TFLOP/s dense bf16, 2.039 TB/s; H100 SXM5 989.4 TFLOP/s, 3.35 TB/s; H200 SXM 989.4 TFLOP/s,
4.8 TB/s; A100 measured (stas00/ml-engineering): 271.2 TFLOP/s, 1.6 TB/s; MI300X 5.3 TB/s; B200 7.7 TB/s."""

import pytest
from exercise_hand import asked_in_notebook, chapter_ids, chapter_tests

import roofline_lib as rl
from roofline_lib.exercises import check

HAND = {
    "02.attainable_a100_50": 2.039e12 * 50,                  # 102 TFLOP/s < 312: on the slope
    "02.predict_fusion_a100": 312 / (2.039 * 20),            # 20 on the slope, 400 past the ridge (153): 7.65
    "02.slowest_chip_4ms": "h200 sxm",                       # 16e9 / 4e-3 = 4 TB/s: H200 4.8 (3.3 ms) is the
                                                             # slowest above it (H100 3.35, MI300X 5.3, B200 7.7)
    "02.roof_cap_slip": "peak",                              # 4.8e15 > 989.4e12: the flat roof was forgotten
    "02.h200_no_speedup": "high",                            # 1000 > 295 and 206: the same peak on both chips
    "02.achieved_fraction_a100": 1.6 * 160 / 312,            # 160 FLOP/B: past the datasheet ridge (153), the
                                                             # flat 312; below the measured one (170), 1.6 x 160
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("02", HAND)


def test_hand_values_match_published_figures():
    assert round(HAND["02.predict_fusion_a100"], 2) == 7.65
    # 16 GB in 4 ms: H100 3.35 TB/s too slow, then H200 4.8, MI300X 5.3, B200 7.7 all fast enough
    t = {name: 16e9 / rl.get_accelerator(name).mem_bandwidth for name in ("H100 SXM", "H200", "MI300X", "B200")}
    assert t == pytest.approx({"H100 SXM": 16e9 / 3.35e12, "H200": 16e9 / 4.8e12, "MI300X": 16e9 / 5.3e12,
                               "B200": 16e9 / 7.7e12})
    assert t["H100 SXM"] > 4e-3 > t["H200"] > t["MI300X"] > t["B200"]


@pytest.mark.parametrize("qid, wrong", [
    ("02.roof_cap_slip", "units"),                                # byte/s x FLOP/byte is FLOP/s: not the slip
    ("02.predict_fusion_a100", 400 / 20),                         # the intensity ratio, past the flat roof
    ("02.achieved_fraction_a100", 1.6 / 2.039),                   # the bandwidth ratio: both roofs on the slope
    ("02.achieved_fraction_a100", 271.2 / 312),                   # the compute ratio: both roofs flat
])
def test_the_sources_slips_are_rejected(qid, wrong):
    assert not check(qid, wrong).correct


def test_every_question_is_asked_in_its_notebook():
    assert asked_in_notebook("02") == chapter_ids("02")
