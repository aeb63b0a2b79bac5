"""The self-check machinery (roofline_lib/exercises/core.py): tolerance, diagnosed slips, choice spellings,
question ids, hints, and what every question of every chapter must satisfy. Each chapter's expected values are
tested against hand computations in tests/test_exercises_chNN.py."""

import math
import re

import numpy as np
import pytest
import sympy as sp

import roofline_lib as rl
from roofline_lib.exercises import check, core, get_question, questions
from roofline_lib.exercises.core import BOUND_ALIASES, diagnose_ratio

# Hand values of the questions these tests answer (chapter 00 and 01's files derive them)
H100_T_MATH = 4e12 / 989.4e12
HAND = {"00.demo_bytes": 2 * 1e6, "00.ridge_h200": 989.4e12 / 4.8e12}


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
        assert math.isfinite(float(expected)) and expected > 0  # float() raises on a non-number
        assert check(q.id, expected).correct


@pytest.mark.parametrize("q", [q for q in questions() if q.kind == "choice" and q.why],
                         ids=lambda q: q.id)
def test_every_wrong_choice_with_feedback_gets_it(q):
    # chapters 00-04 spell the feedback ``why``, 05-11 ``feedback``: both are checked
    expected = q.expected()
    explained = q.why
    assert expected not in explained, "the right answer has no 'why'"
    for choice, why in explained.items():
        assert choice in q.choices
        feedback = check(q.id, choice)
        assert not feedback.correct and why in feedback.message
    for alias, target in q.aliases.items():
        if BOUND_ALIASES.get(alias) != target:  # the question's own aliases (the defaults: the test below)
            assert target in q.choices, (alias, target)


def test_no_alias_points_outside_the_choices():
    for q in questions():
        if q.kind == "choice":
            assert {t for t in q.aliases.values()} <= set(q.choices), q.id
    assert check("09.explain_efficiency", "bandwidth-bound").message.startswith("❌ 09.explain_efficiency: not")


def test_choice_questions_with_feedback_exist_in_every_chapter_from_00_to_10():
    chapters = {q.id[:2] for q in questions() if q.kind == "choice" and q.why}
    assert chapters >= {f"{n:02d}" for n in range(11)}


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
    assert get_question("00.demo_bytes").hints[0] in hint("00.demo_bytes")  # a first call: the nudge


@pytest.mark.parametrize("level", [0, 3, 1.0, True, "1"])
def test_a_hint_level_out_of_range_is_refused(level):
    from roofline_lib.exercises import hint

    with pytest.raises(ValueError, match="from 1 to 2"):
        hint("00.highest_ridge", level)
    with pytest.raises(ValueError, match="unknown question id"):
        hint("00.no_such_one")


# ---------------------------------------------------------------- every chapter's questions


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


def test_chapters_07_to_09_have_four_questions_with_prompts():
    for prefix in ("07.", "08.", "09."):
        qs = rl.exercises.questions(prefix)
        assert len(qs) >= 4
        assert all(q.prompt for q in qs)


def test_a_gib_gb_slip_is_named():
    # 40 GiB reported as 40e9 bytes where 42.95e9 is expected: 40e9 / 42.95e9 = 10^9 / 2^30
    slip = diagnose_ratio(1e9 / 2**30, 0.02)
    assert "GiB / GB slip" in slip and "2^30" in slip
    assert "MiB / MB slip" in diagnose_ratio(2**20 / 1e6, 0.02)
    # the same slip with the answer given in GB instead of bytes
    assert "off by 10^-9 besides" in diagnose_ratio(1e-9 * 1e9 / 2**30, 0.02)
    # an unrelated factor is not called a slip
    assert diagnose_ratio(1.3, 0.02) is None


def test_a_gib_answer_to_a_gb_question_is_named():
    import roofline_lib as rl

    # 05.kv_llama3_70b asks for GB: 16 x 8192 positions of Llama-3-70B's bf16 KV cache = 42.95 GB = 40.0 GiB
    feedback = rl.exercises.check("05.kv_llama3_70b", 40.0)
    assert not feedback.correct and "GiB / GB slip" in feedback.message


def test_wrong_type_messages_are_grammatical():
    import roofline_lib as rl

    assert "got an int (3)" in rl.exercises.check("08.fewer_kernels", 3).message
    assert "got a str ('forty')" in rl.exercises.check("05.kv_llama3_70b", "forty").message


# ---------------------------------------------------------------- counts: whole numbers, rounded as asked

COUNTS = [q for q in core.questions() if q.rounding]
SUPERLATIVE = re.compile(r"\b(smallest|largest|fewest)\b", re.I)


def test_every_smallest_largest_or_fewest_number_is_a_count_with_its_rounding():
    superlative = [q.id for q in core.questions() if q.kind == "number" and SUPERLATIVE.search(q.prompt)]
    assert superlative and all(core.get_question(qid).rounding for qid in superlative), superlative
    for q in COUNTS:  # the rounding matches the prompt's own word where it has one
        word = SUPERLATIVE.search(q.prompt)
        if word:
            assert q.rounding == ("down" if word.group(1).lower() == "largest" else "up"), q.id


@pytest.mark.parametrize("q", COUNTS, ids=[q.id for q in COUNTS])
def test_a_count_takes_a_whole_number_and_says_which_way_to_round_a_fraction(q):
    import inspect

    if inspect.signature(q.expected).parameters:
        pytest.skip(f"{q.id}'s answer depends on the learner's machine")
    expected = q.expected()
    assert float(expected).is_integer(), f"{q.id}: a count's own answer {expected!r} is not whole"
    assert core.check(q.id, float(expected)).correct  # 24.0 is 24
    fraction = core.check(q.id, expected + 0.6)
    assert not fraction.correct and "is not a whole number" in fraction.message
    assert f"round {q.rounding}" in fraction.message and (q.unit or "items") in fraction.message


def test_the_two_counts_the_first_day_met_now_follow_one_rule():
    # an unrounded smallest batch and an unrounded largest batch are both refused, each with its way to round
    up, down = core.check("05.critical_batch_8b_a100", 160.7), core.check("05.max_batch_fp8", 24.6)
    assert not up.correct and "round up (the smallest that reaches it)" in up.message
    assert not down.correct and "round down (the largest that fits)" in down.message


def test_a_rounding_that_is_not_up_or_down_is_refused():
    with pytest.raises(ValueError, match="rounding must be one of '', 'up', 'down'"):
        core.Question("99.x", "?", lambda: 1, rounding="nearest")
