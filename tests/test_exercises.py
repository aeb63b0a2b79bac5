"""The self-check machinery (roofline_lib/exercises/core.py) and the questions of chapters 00 to 04.

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
    "00.ridge_h200": 989.4e12 / 4.8e12,                    # 206.1 FLOP/byte
    "00.full_read_h200": 143771 * 2**20 / 4.8e12,          # nvidia-smi's 143771 MiB at 4.8 TB/s: 31.4 ms
    "01.t_math_h100": H100_T_MATH,                         # 4.04 ms
    "01.t_mem_h100": H100_T_MEM,                           # 2.99 ms
    "01.gap_h100": (H100_T_MATH + H100_T_MEM) / H100_T_MATH,
    "01.predict_a100_lower": max(1.8e12 / 312e12, 10e9 / 2.039e12),   # T_math 5.77 ms > T_mem 4.90 ms
    "01.fuse_bytes_h200": 1.8e12 / (989.4e12 / 4.8e12),    # Q = F / R: 8.73 GB
}


# ---------------------------------------------------------------- correct answers


@pytest.mark.parametrize("qid, value", sorted(HAND.items()))
def test_hand_computed_answer_is_accepted(qid, value):
    feedback = check(qid, value)
    assert feedback.correct, feedback.message
    assert bool(feedback) and feedback.message.startswith("✅")


def test_hand_values_are_what_the_text_says():
    # guard the hand values themselves against typos
    assert round(HAND["00.ridge_h200"]) == 206
    assert round(HAND["01.predict_a100_lower"] * 1e3, 2) == 5.77
    assert round(HAND["01.gap_h100"], 3) == 1.738


def test_bound_h100_is_compute():
    # intensity 4e12 / 10e9 = 400 FLOP/B > ridge 989.4 / 3.35 = 295 FLOP/B
    assert 4e12 / 10e9 > 989.4 / 3.35
    assert check("01.bound_h100", "compute").correct
    assert not check("01.bound_h100", "memory").correct


def test_answers_within_tolerance_pass_and_outside_fail():
    ridge = HAND["00.ridge_h200"]
    assert check("00.ridge_h200", ridge * 1.01).correct
    assert check("00.ridge_h200", round(ridge)).correct
    too_high = check("00.ridge_h200", ridge * 1.3)
    assert not too_high.correct and "too high" in too_high.message
    too_low = check("00.ridge_h200", ridge / 1.3)
    assert not too_low.correct and "too low" in too_low.message


@pytest.mark.parametrize("wrap", [np.float64, np.float32, lambda v: np.array(v), lambda v: np.array([v]),
                                  lambda v: sp.Float(v)])
def test_numeric_types_are_accepted(wrap):
    assert check("00.ridge_h200", wrap(HAND["00.ridge_h200"])).correct


def test_sympy_exact_answer_is_accepted():
    assert check("00.ridge_h200", sp.Rational(9894, 48)).correct


# ---------------------------------------------------------------- diagnosed slips


@pytest.mark.parametrize("factor, text", [(1e3, "10^3"), (1e-3, "10^-3"), (1e6, "10^6"), (1e12, "10^12")])
def test_power_of_ten_is_diagnosed_as_units(factor, text):
    feedback = check("00.ridge_h200", HAND["00.ridge_h200"] * factor)
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
    feedback = check("00.ridge_h200", -HAND["00.ridge_h200"])
    assert not feedback.correct and "wrong sign" in feedback.message and "positive" in feedback.message


def test_zero_is_wrong():
    feedback = check("00.ridge_h200", 0)
    assert not feedback.correct and feedback.answered


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_is_wrong(bad):
    feedback = check("00.ridge_h200", bad)
    assert not feedback.correct and "finite" in feedback.message


@pytest.mark.parametrize("bad", ["206", True, [206.1], {"ridge": 206}, sp.Symbol("x"), 206 + 0j,
                                 np.array([206.1, 206.1]), np.array([206.1 + 0j])])
def test_wrong_type_is_explained(bad):
    feedback = check("00.ridge_h200", bad)
    assert not feedback.correct and feedback.answered
    assert "expected a number" in feedback.message


@pytest.mark.parametrize("blank", [..., None])
def test_unanswered(blank):
    feedback = check("00.ridge_h200", blank)
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
    with pytest.raises(ValueError, match=r"unknown question id '00\.ridge_h20'.*00\.ridge_h200"):
        check("00.ridge_h20", 206)
    with pytest.raises(ValueError, match="unknown question id"):
        get_question("99.nothing_like_it")


def test_chapter_01_has_at_least_four_questions():
    ids = [q.id for q in questions("01.")]
    assert len(ids) >= 4 and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"01\.[a-z0-9_]+", qid) for qid in ids)
    assert set(HAND) | set(HAND_CHOICES) | {"01.bound_h100"} >= set(ids), "every question has a hand value here"


@pytest.mark.parametrize("q", [q for ch in ("00.", "01.", "02.", "03.", "04.") for q in questions(ch)],
                         ids=lambda q: q.id)
def test_every_question_is_answerable(q):
    assert q.prompt.strip()
    expected = q.expected()
    if q.kind == "choice":
        assert expected in q.choices
        assert check(q.id, expected).correct
        if expected in ("compute", "memory", "communication", "overhead"):  # spellings readers use
            assert check(q.id, f" {expected.title()}-Bound ").correct
            assert check(q.id, f"{expected} bound").correct
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
    # the student's version: each name the solution assigns becomes `name = ...`
    from roofline_lib.teach.student import strip_solutions

    blank = strip_solutions(src)
    namespace = {"rl": rl, "np": np}
    exec(compile(blank, "<exercise>", "exec"), namespace)
    assert not eval(last, namespace).answered


# ---------------------------------------------------------------- chapters 02-04, against hand computations

H200_RIDGE = 989.4 / 4.8            # FLOP/byte, dense bf16 over HBM3e
A100_RIDGE = 312 / 2.039            # A100 80GB SXM4, fp16 = bf16 = 312 TFLOP/s dense


def _critical_m(ridge, n, k):       # M N K / (M N + N K + M K) = R, solved by hand for M
    return ridge * n * k / (n * k - ridge * (n + k))


HAND_02_04 = {
    "02.attainable_a100_50": 2.039e12 * 50,                  # 102 TFLOP/s < 312: on the slope
    "02.predict_fusion_a100": 312 / (2.039 * 20),            # 20 on the slope, 400 past the ridge (153): 7.65
    "02.slowest_chip_4ms": "h200 sxm",                       # 16e9 / 4e-3 = 4 TB/s: H200 4.8 (3.3 ms) is the
                                                             # slowest above it (H100 3.35, MI300X 5.3, B200 7.7)
    "02.roof_cap_slip": "peak",                              # 4.8e15 > 989.4e12: the flat roof was forgotten
    "02.h200_no_speedup": "high",                            # 1000 > 295 and 206: the same peak on both chips
    "02.achieved_fraction_h200": 4.0 / 4.8,                  # 100 FLOP/B is below both ridges (199, 206)
    "03.flops_4096": 2 * 4096**3,
    "03.limit_fp8_bf16_ffn": 2 * 4096 * 14336 / (14336 + 2 * 4096),  # erratum 3: 5213, not 2NK/(N+K) = 6372
    "03.gemv_bound": "memory",                               # about 1 FLOP/B
    "03.critical_M_a100_fp16": _critical_m(A100_RIDGE, 4096, 14336),
    "03.bytes_b200_example": 2 * (64 * 4096 + 4096 * 8192 + 64 * 8192),   # ~69e6, the scaling book's figure
    "03.reuse_predict": 32 * 8192 / (32 + 8192 + 32),       # MNK / (MN + NK + MK) at N = K: 31.75, about M
    "03.tile_design": 512,                                   # m_t / 2 >= 795 / 3.35 = 237.3: m_t >= 475 -> 512
    "03.batch_doubling": (128 + 8192 + 128) / (64 + 8192 + 64),   # memory-bound: bytes ratio, 1.0154
    "03.why_critical_M": "reuse",                            # 2M FLOPs per 2-byte weight
    "04.prefill_slip_g4": 4 * 512 / (4 + 1),                 # erratum 5: G T / (G + 1) per bf16 byte, 409.6
    "04.spec_tokens_h200": 53,                               # 32 T 8192 / (32 T + 65536) >= 206.1: T >= 52.9
    "04.why_batch": "own",                                   # batch multiplies FLOPs and K/V bytes alike
    "04.predict_exp_d96": 989.4e12 / (2 * (96 + 96) * 16 * 132 * 1.83e9),   # P / (2 (d_qk + d_v) P_exp): 0.667
    "04.decode_time_h200": 2 * 16 * (8192 * 8 * 256 + 1 * 32 * 256) / 4.8e12,   # K, V + Q, O bytes / bandwidth
}


def test_hand_values_02_04_match_published_figures():
    assert round(HAND_02_04["02.predict_fusion_a100"], 2) == 7.65
    assert 16e9 / 3.35e12 > 4e-3 > 16e9 / 4.8e12 > 16e9 / 5.3e12 > 16e9 / 7.7e12
    assert round(HAND_02_04["03.bytes_b200_example"] / 1e6) == 69
    assert round(HAND_02_04["03.limit_fp8_bf16_ffn"]) == 5213
    assert 256 / 2 < 795 / 3.35 <= 512 / 2                   # 256 is too small, 512 enough
    assert 128 < _critical_m(H200_RIDGE, 8192, 8192)         # both batches are memory-bound
    t_star = H200_RIDGE * 8 * 8192 / (32 * 8192 - 32 * H200_RIDGE)  # 32 T S = R (32 T + 8 S), solved for T
    assert 52 < t_star < 53 == HAND_02_04["04.spec_tokens_h200"]
    assert 2 * 512 / (1 + 4) / 2 < H200_RIDGE < HAND_02_04["04.prefill_slip_g4"]   # the slip flips the bound


@pytest.mark.parametrize("qid, value", sorted(HAND_02_04.items()))
def test_chapters_02_04_hand_answers_are_accepted(qid, value):
    feedback = check(qid, value)
    assert feedback.correct, feedback.message


def test_chapters_02_04_every_question_has_a_hand_value():
    ids = {q.id for prefix in ("02.", "03.", "04.") for q in questions(prefix)}
    assert ids == set(HAND_02_04)
    for prefix in ("02.", "03.", "04."):
        assert len(questions(prefix)) >= 4


@pytest.mark.parametrize("qid, wrong", [
    ("03.limit_fp8_bf16_ffn", 2 * 4096 * 14336 / (4096 + 14336)),  # the source's 2NK/(N+K) (erratum 3)
    ("03.batch_doubling", 2.0),                                   # the teammate's claim
    ("03.batch_doubling", 1.0),                                   # "no change": 1.5 % off, outside 0.2 %
    ("03.tile_design", 256),
    ("04.prefill_slip_g4", 2 * 512 / (1 + 4) / 2),               # the source's 2T/(1+G), halved (erratum 5)
    ("04.prefill_slip_g4", 2 * 4 * 512 / (4 + 1)),               # per element instead of per byte (erratum 4)
    ("02.roof_cap_slip", "units"),                                # byte/s x FLOP/byte is FLOP/s: not the slip
])
def test_the_sources_slips_are_rejected(qid, wrong):
    assert not check(qid, wrong).correct


@pytest.mark.parametrize("chapter", ["02", "03", "04"])
def test_every_question_of_chapters_02_04_is_asked_in_its_notebook(chapter):
    path = next(NOTEBOOKS.glob(f"{chapter}_*.ipynb"))
    used = set()
    for src in _code_cells(path):
        used |= set(re.findall(r"""exercises\.check\(\s*["']([^"']+)["']""", src))
    assert used == {q.id for q in questions(f"{chapter}.")}


NUMERIC_HAND = sorted((q, v) for q, v in {**HAND, **HAND_02_04}.items() if not isinstance(v, str))


@pytest.mark.parametrize("qid, value", NUMERIC_HAND)
def test_expected_values_equal_the_hand_values(qid, value):
    # tighter than the 2 % a student is allowed: the library's own answer must be the hand value
    assert float(get_question(qid).expected()) == pytest.approx(value, rel=1e-9)


# ---------------------------------------------------------------- issue 12: choices with feedback, hints


HAND_CHOICES = {
    # ridges 125/0.6 = 208, 2250/7.7 = 292, 989.4/4.8 = 206, 121/0.3 = 403, 918/1.638 = 560
    "00.highest_ridge": "tpu v6e",
    # 2 * 4096**3 / 989.4 is 1e12 times 2 * 4096**3 / 989.4e12: a TFLOP/s figure used as FLOP/s
    "00.units_slip": "units",
    "01.sparse_slip_a100": "sparse",     # 624 = 2 x 312, the 2:4-sparse figure: dense T_math 8.0 ms > T_mem 5.9 ms
    "01.slow_kernel": "rates",           # 5.1 ms > T_math + T_mem = 1.8/989.4 + 10/4.8 ms = 3.90 ms
}


def test_hand_values_of_the_new_choices():
    ridges = {"a10": 125 / 0.6, "b200": 2250 / 7.7, "h200 sxm": 989.4 / 4.8, "l4": 121 / 0.3, "tpu v6e": 918 / 1.638}
    assert max(ridges, key=ridges.get) == HAND_CHOICES["00.highest_ridge"]
    assert (2 * 4096**3 / 989.4) / (2 * 4096**3 / 989.4e12) == pytest.approx(1e12, rel=1e-12)
    assert 2.5e12 / 312e12 > 12e9 / 2.039e12 > 2.5e12 / 624e12          # the sparse peak flips the bound
    assert 1.8e12 / 989.4e12 + 10e9 / 4.8e12 < 5.1e-3


@pytest.mark.parametrize("qid, value", sorted(HAND_CHOICES.items()))
def test_new_choice_questions_accept_the_hand_answer(qid, value):
    assert get_question(qid).expected() == value
    assert check(qid, value).correct


@pytest.mark.parametrize("q", [q for q in questions() if q.kind == "choice" and q.why], ids=lambda q: q.id)
def test_every_wrong_choice_with_feedback_gets_it(q):
    expected = q.expected()
    assert expected not in q.why, "the right answer has no 'why'"
    for choice, why in q.why.items():
        assert choice in q.choices
        feedback = check(q.id, choice)
        assert not feedback.correct and why in feedback.message
    for alias, target in q.aliases.items():
        assert target in q.choices, (alias, target)


def test_hints_go_from_a_nudge_to_the_method_and_stay_there():
    from roofline_lib.exercises import core, hint

    core._HINTS_GIVEN.pop("00.highest_ridge", None)
    q = get_question("00.highest_ridge")
    assert len(q.hints) == 2
    first, second, third = hint("00.highest_ridge"), hint("00.highest_ridge"), hint("00.highest_ridge")
    assert q.hints[0] in first and "1/2" in first
    assert q.hints[1] in second and q.hints[1] in third and "2/2" in third
    assert repr(first) == str(first)                                   # shows without quotes
    assert hint("00.highest_ridge", 1) == first
    assert get_question("00.demo_bytes").hint in hint("00.demo_bytes")  # one hint: the question's own


@pytest.mark.parametrize("level", [0, 3, 1.0, True, "1"])
def test_a_hint_level_out_of_range_is_refused(level):
    from roofline_lib.exercises import hint

    with pytest.raises(ValueError, match="from 1 to 2"):
        hint("00.highest_ridge", level)
    with pytest.raises(ValueError, match="unknown question id"):
        hint("00.no_such_one")
