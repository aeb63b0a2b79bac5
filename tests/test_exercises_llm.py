"""The chapter 05 and 06 self-checks accept their own answer, diagnose slips, and have enough questions."""

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
    # 06.h200_vs_h100: a memory-bound step speeds up by the bandwidth ratio 4.8 / 3.35
    assert rl.exercises.check("06.h200_vs_h100", 4.8 / 3.35).correct
    # 06.flash_decoding: 32 blocks on 132 SMs (24%) vs 4 splits, 128 blocks in one wave (97%)
    assert rl.exercises.check("06.flash_decoding", (128 / 132) / (32 / 132)).correct
    assert rl.exercises.check("05.prefill_bound", "compute-bound").correct
