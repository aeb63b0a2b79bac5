"""Chapter 01's questions against hand computations from datasheet figures, never read back from the library:
H100 SXM5 989.4 TFLOP/s dense bf16, 3.35 TB/s; H200 SXM 989.4 TFLOP/s, 4.8 TB/s; A100 80GB SXM4 312 TFLOP/s
(624 with 2:4 sparsity), 2.039 TB/s; A100 40GB SXM4 312 TFLOP/s, 1.555 TB/s. Also the notebook's exercise cells:
solutions pass, student versions are blank."""

import json
import pathlib
import re

import numpy as np
import pytest
from exercise_hand import asked_in_notebook, chapter_ids, chapter_tests

import roofline_lib as rl
from roofline_lib.exercises import check

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
CH01 = NOTEBOOKS / "01_time_bounds_and_intensity.ipynb"

H100_T_MATH = 4e12 / 989.4e12
H100_T_MEM = 10e9 / 3.35e12
HAND = {
    "01.t_math_h100": H100_T_MATH,                         # 4.04 ms
    "01.t_mem_h100": H100_T_MEM,                           # 2.99 ms
    "01.bound_h100": "compute",                            # T_math > T_mem
    "01.gap_h100": (H100_T_MATH + H100_T_MEM) / H100_T_MATH,
    "01.predict_a100_lower": max(1.8e12 / 312e12, 10e9 / 1.555e12),   # T_mem 6.43 ms > T_math 5.77 ms
    "01.fuse_bytes_h200": 1.8e12 / (989.4e12 / 4.8e12),    # Q = F / R: 8.73 GB
    "01.sparse_slip_a100": "sparse",     # 624 = 2 x 312, the 2:4-sparse figure: dense T_math 8.0 ms > T_mem 5.9 ms
    "01.slow_kernel": "rates",           # 5.1 ms > T_math + T_mem = 1.8/989.4 + 10/4.8 ms = 3.90 ms
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("01", HAND)


def test_hand_values_are_what_the_text_says():
    # guard the hand values themselves against typos
    assert round(HAND["01.predict_a100_lower"] * 1e3, 2) == 6.43
    assert round(HAND["01.gap_h100"], 3) == 1.738


def test_bound_h100_is_compute():
    # intensity 4e12 / 10e9 = 400 FLOP/B > ridge 989.4 / 3.35 = 295 FLOP/B
    ridge = rl.get_accelerator("H100 SXM").ridge_point("bf16")
    assert ridge == pytest.approx(989.4 / 3.35) and 4e12 / 10e9 > ridge
    assert check("01.bound_h100", "compute").correct
    assert not check("01.bound_h100", "memory").correct


def test_hand_values_of_the_choices():
    # the A100's sparse bf16 peak flips the bound: 2.5e12 / 312e12 > 12e9 / 2.039e12 > 2.5e12 / 624e12
    a100 = rl.get_accelerator("A100 80GB SXM4")
    dense, sparse = a100.peak_flops("bf16"), a100.sparse_flops_by_dtype["bf16"]
    assert (dense, sparse) == (312e12, 624e12) and a100.mem_bandwidth == pytest.approx(2.039e12)
    assert 2.5e12 / dense > 12e9 / a100.mem_bandwidth > 2.5e12 / sparse
    # the example kernel on an H200 without overlap: 1.8e12 / 989.4e12 + 10e9 / 4.8e12 = 3.9 ms, under the 5.1 ms
    # measured, so the rates (not overlap) are what the measurement misses
    no_overlap = rl.estimate(rl.Workload("example", 1.8e12, 10e9, "bf16"), "H200").no_overlap
    assert no_overlap == pytest.approx(1.8e12 / 989.4e12 + 10e9 / 4.8e12) and no_overlap < 5.1e-3


# ---------------------------------------------------------------- notebook 01's exercise cells


def _exercise_cells(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code" and "# BEGIN SOLUTION" in "".join(c["source"])]


def test_every_question_id_used_in_notebook_01_exists():
    assert asked_in_notebook("01") == chapter_ids("01"), "every chapter-01 question is asked in the notebook"


@pytest.mark.parametrize("src", _exercise_cells(CH01), ids=lambda s: re.search(r'check\("([^"]+)"', s).group(1))
def test_notebook_01_solutions_are_correct_and_blank_version_works(src):
    assert src.count("# BEGIN SOLUTION") == 1 and src.count("# END SOLUTION") == 1
    assert src.index("# BEGIN SOLUTION") < src.index("# END SOLUTION") < src.index("rl.exercises.check(")
    # the model answer, run alone with only the library at hand
    namespace = {"rl": rl, "np": np}
    exec(compile(src, "<exercise>", "exec"), namespace)
    last = src.strip().splitlines()[-1]
    feedback = eval(last, namespace)
    assert feedback.correct, feedback.message
    # the student's version: each name the solution assigns becomes `name = ...`
    from roofline_lib.teach.student import strip_solutions

    blank = strip_solutions(src)
    namespace = {"rl": rl, "np": np}
    exec(compile(blank, "<exercise>", "exec"), namespace)
    assert not eval(last, namespace).answered


def test_notebook_01_has_exercise_cells():
    assert len(_exercise_cells(CH01)) >= 4
