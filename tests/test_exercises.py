"""The self-check machinery (roofline_lib/exercises/core.py) and the questions of chapters 00 and 01.

Expected values are hand computations from datasheet figures, never read back from the library:
H200 SXM 989.4 TFLOP/s dense bf16, 4.8 TB/s; H100 SXM5 989.4 TFLOP/s, 3.35 TB/s;
A100 312 TFLOP/s, 2.039 TB/s (80GB SXM4), 1.555 TB/s (40GB).
"""

import json
import math
import pathlib
import re

import numpy as np
import pytest
import sympy as sp

import roofline_lib as rl
from roofline_lib.exercises import check, get_question, questions
from roofline_lib.exercises.core import diagnose_ratio

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
CH01 = NOTEBOOKS / "01_time_bounds_and_intensity.ipynb"

H100_T_MATH = 4e12 / 989.4e12
H100_T_MEM = 10e9 / 3.35e12
HAND = {
    "00.demo_bytes": 2 * 1e6,
    "01.ridge_h200": 989.4e12 / 4.8e12,                    # 206.1 FLOP/byte
    "01.t_math_h100": H100_T_MATH,                         # 4.04 ms
    "01.t_mem_h100": H100_T_MEM,                           # 2.99 ms
    "01.gap_h100": (H100_T_MATH + H100_T_MEM) / H100_T_MATH,
    "01.ridge_a100_80gb": 312e12 / 2.039e12,               # 153.0
    "01.a100_slip_factor": 2.039 / 1.555,                  # 1.311
    "01.flops_to_ridge_h200": 989.4e12 / 4.8e12 * 1e9,     # 2.06e11 FLOP
}


# ---------------------------------------------------------------- correct answers


@pytest.mark.parametrize("qid, value", sorted(HAND.items()))
def test_hand_computed_answer_is_accepted(qid, value):
    feedback = check(qid, value)
    assert feedback.correct, feedback.message
    assert bool(feedback) and feedback.message.startswith("✅")


def test_hand_values_are_what_the_text_says():
    # guard the hand values themselves against typos
    assert round(HAND["01.ridge_h200"]) == 206
    assert round(HAND["01.ridge_a100_80gb"]) == 153
    assert round(HAND["01.gap_h100"], 3) == 1.738


def test_bound_h100_is_compute():
    # intensity 4e12 / 10e9 = 400 FLOP/B > ridge 989.4 / 3.35 = 295 FLOP/B
    assert 4e12 / 10e9 > 989.4 / 3.35
    assert check("01.bound_h100", "compute").correct
    assert not check("01.bound_h100", "memory").correct


def test_answers_within_tolerance_pass_and_outside_fail():
    ridge = HAND["01.ridge_h200"]
    assert check("01.ridge_h200", ridge * 1.01).correct
    assert check("01.ridge_h200", round(ridge)).correct
    too_high = check("01.ridge_h200", ridge * 1.3)
    assert not too_high.correct and "too high" in too_high.message
    too_low = check("01.ridge_h200", ridge / 1.3)
    assert not too_low.correct and "too low" in too_low.message


@pytest.mark.parametrize("wrap", [np.float64, np.float32, lambda v: np.array(v), lambda v: np.array([v]),
                                  lambda v: sp.Float(v)])
def test_numeric_types_are_accepted(wrap):
    assert check("01.ridge_h200", wrap(HAND["01.ridge_h200"])).correct


def test_sympy_exact_answer_is_accepted():
    assert check("01.ridge_a100_80gb", sp.Rational(312_000, 2_039)).correct


# ---------------------------------------------------------------- diagnosed slips


@pytest.mark.parametrize("factor, text", [(1e3, "10^3"), (1e-3, "10^-3"), (1e6, "10^6"), (1e12, "10^12")])
def test_power_of_ten_is_diagnosed_as_units(factor, text):
    feedback = check("01.ridge_h200", HAND["01.ridge_h200"] * factor)
    assert not feedback.correct
    assert text in feedback.message and "units" in feedback.message


def test_milliseconds_instead_of_seconds():
    feedback = check("01.t_math_h100", H100_T_MATH * 1e3)   # 4.04 "ms" typed as seconds
    assert not feedback.correct and "10^3" in feedback.message


@pytest.mark.parametrize("factor, word", [(2, "twice"), (0.5, "half")])
def test_factor_two_is_diagnosed(factor, word):
    feedback = check("00.demo_bytes", HAND["00.demo_bytes"] * factor)
    assert not feedback.correct
    assert word in feedback.message and "elements vs bytes" in feedback.message


def test_wrong_sign_is_diagnosed():
    feedback = check("01.ridge_h200", -HAND["01.ridge_h200"])
    assert not feedback.correct and "wrong sign" in feedback.message and "positive" in feedback.message


def test_zero_is_wrong():
    feedback = check("01.ridge_h200", 0)
    assert not feedback.correct and feedback.answered


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_is_wrong(bad):
    feedback = check("01.ridge_h200", bad)
    assert not feedback.correct and "finite" in feedback.message


@pytest.mark.parametrize("bad", ["206", True, [206.1], {"ridge": 206}, sp.Symbol("x"), 206 + 0j,
                                 np.array([206.1, 206.1]), np.array([206.1 + 0j])])
def test_wrong_type_is_explained(bad):
    feedback = check("01.ridge_h200", bad)
    assert not feedback.correct and feedback.answered
    assert "expected a number" in feedback.message


@pytest.mark.parametrize("blank", [..., None])
def test_unanswered(blank):
    feedback = check("01.ridge_h200", blank)
    assert not feedback.correct and not feedback.answered
    assert "not answered yet" in feedback.message


def test_diagnose_ratio_directly():
    assert "10^3" in diagnose_ratio(1000.0, 0.02)
    assert "10^-9" in diagnose_ratio(1.005e-9, 0.02)
    assert "twice" in diagnose_ratio(2.01, 0.02)
    assert "half" in diagnose_ratio(0.5, 0.02)
    assert diagnose_ratio(1.3, 0.02) is None
    assert diagnose_ratio(3.0, 0.02) is None


# ---------------------------------------------------------------- choice questions


@pytest.mark.parametrize("spelling", ["compute", "Compute", " COMPUTE ", "compute-bound", "Compute-Bound",
                                      "compute bound", "math-bound"])
def test_choice_spellings_of_compute(spelling):
    assert check("01.bound_h100", spelling).correct


@pytest.mark.parametrize("spelling", ["memory", "memory-bound", "Memory Bound", "bandwidth-bound"])
def test_choice_spellings_of_memory_are_understood_but_wrong(spelling):
    feedback = check("01.bound_h100", spelling)
    assert not feedback.correct and "not 'memory'" in feedback.message


def test_choice_outside_the_choices():
    feedback = check("01.bound_h100", "overhead")
    assert not feedback.correct and "not one of the choices" in feedback.message


@pytest.mark.parametrize("bad", [1, 1.0, True, ["compute"]])
def test_choice_wrong_type(bad):
    feedback = check("01.bound_h100", bad)
    assert not feedback.correct and "expected one of" in feedback.message


# ---------------------------------------------------------------- question ids


def test_unknown_id_names_close_matches():
    with pytest.raises(ValueError, match=r"unknown question id '01\.ridge_h20'.*01\.ridge_h200"):
        check("01.ridge_h20", 206)
    with pytest.raises(ValueError, match="unknown question id"):
        get_question("99.nothing_like_it")


def test_chapter_01_has_at_least_four_questions():
    ids = [q.id for q in questions("01.")]
    assert len(ids) >= 4 and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"01\.[a-z0-9_]+", qid) for qid in ids)
    assert set(HAND) | {"01.bound_h100"} >= set(ids) | {"00.demo_bytes"}, "every question has a hand value here"


@pytest.mark.parametrize("q", questions("00.") + questions("01."), ids=lambda q: q.id)
def test_every_question_is_answerable(q):
    assert q.prompt.strip()
    expected = q.expected()
    if q.kind == "choice":
        assert expected in q.choices
        assert all(alias_target in q.choices for alias_target in q.aliases.values())
        assert check(q.id, expected).correct
    else:
        assert q.kind == "number"
        assert isinstance(float(expected), float) and math.isfinite(expected) and expected > 0
        assert check(q.id, expected).correct


# ---------------------------------------------------------------- notebook 01's exercise cells


def _code_cells(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def _exercise_cells(path):
    return [src for src in _code_cells(path) if "# BEGIN SOLUTION" in src]


def test_every_question_id_used_in_notebook_01_exists():
    used = set()
    for src in _code_cells(CH01):
        used |= set(re.findall(r"""exercises\.check\(\s*["']([^"']+)["']""", src))
    assert len(used) >= 4
    for qid in used:
        get_question(qid)  # raises ValueError if unknown
    assert used == {q.id for q in questions("01.")}, "every chapter-01 question is asked in the notebook"


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
    # the student's version: the solution replaced by `answer = ...`
    blank = re.sub(r"# BEGIN SOLUTION.*?# END SOLUTION", "answer = ...", src, flags=re.S)
    namespace = {"rl": rl, "np": np}
    exec(compile(blank, "<exercise>", "exec"), namespace)
    assert not eval(last, namespace).answered
