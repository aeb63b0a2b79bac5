"""Chapter 00's questions against hand computations from datasheet figures, never read back from the library:
H200 SXM 989.4 TFLOP/s dense bf16, 4.8 TB/s, 143,771 MiB as nvidia-smi reports it."""

import pytest
from exercise_hand import chapter_tests

from roofline_lib.exercises import check

T_MATH_4096_H200 = 2 * 4096**3 / 989.4e12
HAND = {
    "00.demo_bytes": 2 * 1e6,
    "00.bf16_bytes": 2,                                    # 16 bits
    "00.ridge_h200": 989.4e12 / 4.8e12,                    # 206.1 FLOP/byte
    "00.intensity_4096": 2 * 4096**3 / (3 * 4096**2 * 2),  # 2 M N K over three 4096^2 bf16 matrices: 1365.3
    "00.t_math_h200": T_MATH_4096_H200,                    # 0.139 ms
    "00.bound_h200": "compute",                            # 1365 FLOP/byte > 206
    "00.full_read_h200": 143771 * 2**20 / 4.8e12,          # nvidia-smi's 143771 MiB at 4.8 TB/s: 31.4 ms
    # ridges 125/0.6 = 208, 2250/7.7 = 292, 989.4/4.8 = 206, 121/0.3 = 403, 918/1.638 = 560
    "00.highest_ridge": "tpu v6e",
    # 2 * 4096**3 / 989.4 is 1e12 times 2 * 4096**3 / 989.4e12: a TFLOP/s figure used as FLOP/s
    "00.units_slip": "units",
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("00", HAND)


def test_hand_values_are_what_the_text_says():
    # guard the hand values themselves against typos
    assert round(HAND["00.ridge_h200"]) == 206
    assert HAND["00.intensity_4096"] > HAND["00.ridge_h200"]
    assert round(HAND["00.full_read_h200"] * 1e3, 1) == 31.4


def test_hand_values_of_the_choices():
    ridges = {"a10": 125 / 0.6, "b200": 2250 / 7.7, "h200 sxm": 989.4 / 4.8, "l4": 121 / 0.3, "tpu v6e": 918 / 1.638}
    assert max(ridges, key=ridges.get) == HAND["00.highest_ridge"]
    assert (2 * 4096**3 / 989.4) / T_MATH_4096_H200 == pytest.approx(1e12, rel=1e-12)


def test_a_factor_of_two_in_the_bytes_is_rejected():
    assert not check("00.bf16_bytes", 1) and not check("00.bf16_bytes", 4)
    assert not check("00.demo_bytes", 1e6)
