"""Chapter 07's questions (measure your machine): the ones on measured numbers take the reader's measurement as
context, here a made-up machine (100 GFLOP/s fp64, 20 GB/s); the others against hand computations from datasheet
figures: H200 SXM fp64 (tensor) 67 TFLOP/s, 4.8 TB/s; H100 SXM5 989.4 TFLOP/s bf16, 3.35 TB/s."""

import math

import pytest
from exercise_hand import chapter_tests

import roofline_lib as rl
from roofline_lib.exercises import check

# a made-up measured machine: 100 GFLOP/s fp64, 20 GB/s
MEASURED = {"peak_fp64": 100e9, "bandwidth": 20e9}
# a kernel whose time grew 4x with 4x the FLOPs and not at all with 4x the bytes
DIAGNOSIS = dict(t_base=1.0, t_more_flops=4.0, t_more_bytes=1.0, flop_factor=4, byte_factor=4)
LLC = {"llc_bytes": 480 * 2**20}

HAND = {
    "07.vector_add_time": max(1e7 / 100e9, 3 * 8 * 1e7 / 20e9),   # 1 FLOP and 24 bytes per element: 12 ms
    "07.smallest_compute_bound_matmul": 60,                       # n / 12 >= 100 / 20: n = 60
    "07.diagnosis": "compute",                                    # log 4 / log 4 = 1 for FLOPs, 0 for bytes
    "07.h200_ridge_ratio": (67e12 / 4.8e12) / (100e9 / 20e9),     # 13.96 / 5
    "07.predict_knee_bytes": (3 + 2) / (3 + 1),                   # T_math = 3 T_mem, no overlap, bytes doubled
    "07.design_stream_elements": math.ceil(4 * 480 * 2**20 / (3 * 8)),   # 3 x 8 x n >= 4 x 480 MiB: 83,886,080
    "07.explain_small_matmul": "overhead",                        # three 8 x 8 fp64 matrices: 1,536 bytes, in L1
    "07.mistake_vector_add": "bytes",                             # 24 bytes per element, not 8
}
CONTEXT = {"07.vector_add_time": MEASURED, "07.smallest_compute_bound_matmul": MEASURED,
           "07.diagnosis": DIAGNOSIS, "07.h200_ridge_ratio": MEASURED, "07.design_stream_elements": LLC}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("07", HAND, CONTEXT)


def test_on_a_made_up_machine():
    assert check("07.vector_add_time", 24e7 / 20e9, **MEASURED)
    assert check("07.smallest_compute_bound_matmul", 60, **MEASURED)  # n / 12 = 5
    assert check("07.diagnosis", "compute", **DIAGNOSIS)
    assert not check("07.diagnosis", "memory", **DIAGNOSIS)
    # the same times with the roles swapped: memory-bound
    assert check("07.diagnosis", "memory", t_base=1.0, t_more_flops=1.0, t_more_bytes=4.0, flop_factor=4,
                 byte_factor=4)
    # H200 SXM datasheet: fp64 (tensor) 67 TFLOP/s, 4.8 TB/s
    assert check("07.h200_ridge_ratio", 67e12 / 4.8e12 / 5.0, **MEASURED)


def test_thinking_questions_by_hand():
    # 07.predict_knee_bytes: at 3 x the ridge T_math = 3 T_mem; no overlap: (3 + 2) / (3 + 1)
    assert rl.exercises.get_question("07.predict_knee_bytes").expected() == pytest.approx(5 / 4, rel=1e-9)
    assert not check("07.predict_knee_bytes", 2.0)  # as if bytes-bound
    assert not check("07.predict_knee_bytes", 1.0)  # as if overlapped
    # 07.design_stream_elements: a 480 MiB cache needs 3 x 8 x n >= 4 x 480 x 2^20 bytes: n = 83,886,080
    assert check("07.design_stream_elements", 83_886_080, llc_bytes=480 * 2**20)
    assert not check("07.design_stream_elements", 83_886_080 / 3, llc_bytes=480 * 2**20)  # one array, not three
    # 07.mistake_vector_add: 1 FLOP over 3 x 8 bytes
    assert (rl.vector_add(1, "fp64").flops, rl.vector_add(1, "fp64").bytes) == (1, 24)
    assert check("07.mistake_vector_add", "bytes") and "multiply-add" in check("07.mistake_vector_add", "flops").message
    # 07.explain_small_matmul: three 8 x 8 fp64 matrices are 1,536 bytes
    assert check("07.explain_small_matmul", "overhead")
    assert "1,536 bytes" in check("07.explain_small_matmul", "cache").message
