"""Exercises ask what the page has not printed (issue 12), read from the chapter masters.

For each question a master asks (its first cell with `# BEGIN SOLUTION`), the expected value, to 3
significant figures, is looked for in the outputs of the lecture cells above it (exercise cells' own
feedback is left out: it echoes the learner's answer). At most one question in five per chapter may be
found there. Add a chapter to CHAPTERS once its exercises meet the rule.
"""

import json
import math
import pathlib
import re

import pytest

from roofline_lib.exercises import get_question, questions

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
CHAPTERS = ["00", "01", "02", "03", "04"]
# the kinds that need thinking the page has not printed, named in each prompt
THINKING = ("Predict", "Design", "Explain", "Find the mistake")
NUMBER = re.compile(r"(?<![A-Za-wyz_\d.])[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
CHECK = re.compile(r"""exercises\.check\(\s*["']([^"']+)["']""")


def _master(chapter):
    return next(p for p in NOTEBOOKS.glob(f"{chapter}_*.ipynb"))


def _output_text(cell):
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append("".join(out["text"]))
        for mime in ("text/plain", "text/latex", "text/markdown"):
            if mime in out.get("data", {}):
                parts.append("".join(out["data"][mime]))
    return "\n".join(parts)


def _significant(text):
    digits = re.sub(r"[eE].*", "", text).lstrip("+-").replace(",", "").replace(".", "").lstrip("0")
    return len(digits)


def _round3(value):
    if value == 0:
        return 0.0
    return round(value, 2 - math.floor(math.log10(abs(value))))


def printed_numbers(text):
    """(value, significant digits) of every number in ``text`` that is not part of a name (H200, bf16)."""
    found = []
    for token in NUMBER.findall(text):
        token = token.rstrip(",")
        try:
            found.append((float(token.replace(",", "")), _significant(token)))
        except ValueError:
            continue
    return found


def shows(expected, numbers):
    """Whether ``expected`` appears to 3 significant figures among ``numbers``.

    A number printed with 3 or more significant figures matches at any power of 1000 (4.04 ms for
    0.00404 s, 102 TFLOP/s for 1.02e14); a shorter one ("2", "0.5") only as it stands.
    """
    target = _round3(float(expected))
    for value, digits in numbers:
        scales = [1000.0**k for k in range(-5, 6)] if digits >= 3 else [1.0]
        if any(math.isclose(_round3(value * s), target, rel_tol=1e-9) for s in scales):
            return True
    return False


def asked(chapter):
    """[(question id, its exercise cell index)] in the master's order, and the notebook's cells."""
    cells = json.loads(_master(chapter).read_text(encoding="utf-8"))["cells"]
    order, seen = [], set()
    for i, cell in enumerate(cells):
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and "# BEGIN SOLUTION" in src:
            for qid in CHECK.findall(src):
                if qid not in seen:
                    seen.add(qid)
                    order.append((qid, i))
    return order, cells


def printed_above(chapter):
    """The numeric questions of ``chapter`` whose expected value a lecture cell above them printed."""
    order, cells = asked(chapter)
    found = []
    for qid, index in order:
        q = get_question(qid)
        if q.kind != "number":
            continue
        above = [c for c in cells[:index]
                 if c["cell_type"] == "code" and "# BEGIN SOLUTION" not in "".join(c["source"])]
        numbers = printed_numbers("\n".join(_output_text(c) for c in above))
        if shows(q.expected(), numbers):
            found.append(qid)
    return found


def test_the_matcher_on_hand_made_outputs():
    numbers = printed_numbers("T_math = 4.04 ms, ridge 206 FLOP/B on the H200, bf16 is 2 bytes, x1.311, 2,181 MB")
    assert shows(0.004043, numbers) and shows(206.1, numbers) and shows(1.311, numbers)
    assert shows(2.181e9, numbers) and shows(2, numbers)
    assert not shows(200, numbers) and not shows(16, numbers)       # "H200", "bf16" are names
    assert not shows(2e6, numbers)                                   # "2" has one significant figure
    assert not shows(0.00405, numbers)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_at_most_one_question_in_five_is_printed_above_it(chapter):
    order, _ = asked(chapter)
    assert order, f"chapter {chapter} asks no question"
    found = printed_above(chapter)
    assert len(found) * 5 <= len(order), f"{chapter}: {found} of {len(order)} are printed above their question"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_question_of_the_chapter_is_asked_in_its_master(chapter):
    order, _ = asked(chapter)
    assert {qid for qid, _ in order} == {q.id for q in questions(f"{chapter}.")}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_at_least_three_questions_need_thinking(chapter):
    kinds = [q.prompt.split(":")[0] for q in questions(f"{chapter}.")]
    assert sum(k in THINKING for k in kinds) >= 3, kinds


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_proofs_sit_in_collapsed_cells(chapter):
    """No visible code cell holds more than 2 asserts; a collapsed one opens with a comment saying what it checks."""
    for i, cell in enumerate(json.loads(_master(chapter).read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        asserts = sum(line.lstrip().startswith("assert ") for line in src.splitlines())
        if cell["metadata"].get("jupyter", {}).get("source_hidden"):
            assert src.startswith("# "), f"{chapter} cell {i}: a collapsed cell opens with a one-line comment"
        else:
            assert asserts <= 2, f"{chapter} cell {i} shows {asserts} asserts"
