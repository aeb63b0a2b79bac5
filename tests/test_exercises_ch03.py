"""Chapter 03's questions (matmuls) against hand computations: M N K / (M N + N K + M K) by hand, datasheet
figures A100 80GB SXM4 312 TFLOP/s bf16 over 2.039 TB/s, H100 SXM5 795 over 3.35, H200 SXM 989.4 over 4.8."""

import pytest
from exercise_hand import asked_in_notebook, chapter_ids, chapter_tests

import roofline_lib as rl
from roofline_lib.exercises import check

H200_RIDGE = 989.4 / 4.8            # FLOP/byte, dense bf16 over HBM3e
A100_RIDGE = 312 / 2.039            # A100 80GB SXM4, fp16 = bf16 = 312 TFLOP/s dense


def _critical_m(ridge, n, k):       # M N K / (M N + N K + M K) = R, solved by hand for M
    return ridge * n * k / (n * k - ridge * (n + k))


HAND = {
    "03.flops_4096": 2 * 4096**3,
    "03.limit_fp8_bf16_ffn": 2 * 4096 * 14336 / (14336 + 2 * 4096),  # erratum 3: 5213, not 2NK/(N+K) = 6372
    "03.gemv_bound": "memory",                               # about 1 FLOP/B
    "03.critical_M_a100_fp16": _critical_m(A100_RIDGE, 4096, 14336),
    "03.bytes_b200_example": 2 * (64 * 4096 + 4096 * 8192 + 64 * 8192),   # ~69e6 byte
    "03.reuse_predict": 32 * 8192 / (32 + 8192 + 32),       # MNK / (MN + NK + MK) at N = K: 31.75, about M
    "03.tile_design": 512,                                   # m_t / 2 >= 795 / 3.35 = 237.3: m_t >= 475 -> 512
    "03.batch_doubling": (128 + 8192 + 128) / (64 + 8192 + 64),   # memory-bound: bytes ratio, 1.0154
    "03.why_critical_M": "reuse",                            # 2M FLOPs per 2-byte weight
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("03", HAND)


def test_hand_values_match_published_figures():
    assert round(HAND["03.bytes_b200_example"] / 1e6) == 69
    assert round(HAND["03.limit_fp8_bf16_ffn"]) == 5213
    # the measured bf16 GEMM rate over the datasheet bandwidth: 795 / 3.35 = 237 FLOP/B; 256 too small, 512 enough
    ridge = rl.measurements.calibrated("H100 SXM").peak_flops("bf16") / rl.get_accelerator("H100 SXM").mem_bandwidth
    assert ridge == pytest.approx(795 / 3.35) and 256 / 2 < ridge <= 512 / 2
    assert 128 < _critical_m(H200_RIDGE, 8192, 8192)         # both batches are memory-bound


@pytest.mark.parametrize("qid, wrong", [
    ("03.limit_fp8_bf16_ffn", 2 * 4096 * 14336 / (4096 + 14336)),  # the source's 2NK/(N+K) (erratum 3)
    ("03.batch_doubling", 2.0),                                   # the teammate's claim
    ("03.batch_doubling", 1.0),                                   # "no change": 1.5 % off, outside 0.2 %
    ("03.tile_design", 256),
])
def test_the_sources_slips_are_rejected(qid, wrong):
    assert not check(qid, wrong).correct


def test_every_question_is_asked_in_its_notebook():
    assert asked_in_notebook("03") == chapter_ids("03")
