"""Every question's hints (roofline_lib/exercises/chNN.py): at least two, a nudge then the method, none empty or
repeated, none giving the number away, and rl.exercises.hint() handing them out in order."""

import re

import pytest

import roofline_lib as rl
from roofline_lib.exercises import core

QUESTIONS = rl.exercises.questions("")

# A number as a hint may write it: 1,536 or 143,771; 989.4e12; .5; 4096; 2^20 gives 2 and 20
NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?:[eE][-+]?\d+)?|\d*\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?",
                    re.ASCII)


def numbers_in(text):
    return [float(m.group().replace(",", "")) for m in NUMBER.finditer(text)]


@pytest.fixture
def fresh_hint_memory(monkeypatch):
    """hint() remembers, per question, how far a reader got: start each test from nothing, and leave it as it was."""
    monkeypatch.setattr(core, "_HINTS_GIVEN", {})


def test_the_number_pattern_reads_what_hints_write():
    assert numbers_in("0.9 x 143,771 x 2^20 bytes, over 4.8e12 B/s (.5 of 1,536); n = 2, 4, 8") == [
        0.9, 143771, 2, 20, 4.8e12, 0.5, 1536, 2, 4, 8]
    assert numbers_in("2·4096³ FLOPs at 989.4e12 FLOP/s") == [2, 4096, 989.4e12]


def test_there_are_questions_to_check():
    assert len(QUESTIONS) >= 100


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_at_least_two_hints_none_empty_none_repeated(q):
    hints = tuple(q.hints)
    assert len(hints) >= 2, f"{q.id}: a nudge and the method, got {len(hints)} hint(s)"
    assert all(isinstance(h, str) and h.strip() for h in hints), f"{q.id}: an empty hint"
    assert len({h.strip().lower() for h in hints}) == len(hints), f"{q.id}: two hints are the same"


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.kind == "number"], ids=lambda q: q.id)
def test_no_hint_gives_the_number_away(q):
    try:
        expected = float(q.expected())
    except TypeError:
        pytest.skip(f"{q.id}'s answer depends on the reader's own measurement")
    if expected == 0:
        pytest.skip(f"{q.id}: a zero answer has no 1 % band")
    shown = float(f"{expected:.3g}")              # the answer as a hint would print it, to 3 significant figures
    for text in q.hints:
        for value in numbers_in(text):
            for target in (expected, shown):
                assert abs(value / target - 1) > 0.01, f"{q.id}: hint {text!r} shows {value:g}, the answer"


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_hint_gives_the_nudge_then_the_method(q, fresh_hint_memory):
    n = len(q.hints)
    first, second = rl.exercises.hint(q.id), rl.exercises.hint(q.id)
    assert first == f"{q.id} hint 1/{n}: {q.hints[0]}"
    assert second == f"{q.id} hint 2/{n}: {q.hints[1]}"


def test_hint_remembers_how_far_a_reader_got(fresh_hint_memory):
    rl.exercises.hint("00.demo_bytes")
    assert core._HINTS_GIVEN == {"00.demo_bytes": 1}
