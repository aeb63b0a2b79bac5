"""Exercises ask what the page has not printed (issue 12), for EVERY chapter master in notebooks/.

For each question a master checks, in the order it checks them, the expected value is looked for
among the numbers printed by every code cell above its check cell (stream and plain-text outputs;
the check lines of earlier exercises count too, since the master shows them). A number matches when
it equals the expected value to 3 significant figures (the issue's rule), read as printed or scaled by
its unit prefix ("4.04 ms" is 4.04e-3); for a question in a unit that takes SI prefixes (seconds,
bytes, FLOP, FLOP/s ...), a figure printed with 3 or more significant figures also matches at any
power of 1000 ("102" for 1.02e14 in a table headed TFLOP/s). Ratios, intensities and counts are
not scaled: a "1024" on the page is not the answer 1.02x. A printed number within 1 % of the answer
also counts when the checker would accept it (213 for 214): a learner could copy it. At most one
question in five per chapter may be found there.

Multiple-choice questions have no number to copy and count only in the total. A question on the
reader's own measurement takes the value its check line printed in the master, and matches only to
3 significant figures, without the checker's 1 %: its answer differs on every machine, so a figure
that happens to lie within 1 % of it in one saved run (07's 2.667 FLOP/B for matmul 32 beside a
ridge ratio of 2.648) is luck of that run, not an answer a learner could copy on theirs.

Each chapter also asks at least three problems that need thinking: the prompt of each names its
kind first ("Predict", "Predict, then check", "Design", "Explain", "Find the mistake"); every other
question is a computation.
"""

import json
import math
import pathlib
import re

import pytest

from roofline_lib.exercises import get_question, questions

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
MASTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
CHAPTERS = [p.name[:2] for p in MASTERS]
# units whose values a page may print with any SI prefix
SCALABLE = {"B", "byte", "GB", "MB", "FLOP", "FLOP/s", "s", "ms", "calls/s", "tok/s", "elements"}
THINKING = ("Predict", "Design", "Explain", "Find the mistake")
PREFIX = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "m": 1e-3, "µ": 1e-6, "u": 1e-6, "n": 1e-9}
# a number not glued to a name (H200, bf16, x1.5 stays a number), with an optional unit prefix before a unit
NUMBER = re.compile(r"(?<![A-Za-wyz_\d.\-])([-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)"
                    r"(?:\s?([kMGTPmµun])(?=[A-Za-z/]))?")
QUESTION_ID = re.compile(r"\b\d\d\.[a-z][A-Za-z0-9_]*")
CHECK = re.compile(r"""exercises\.check\(\s*["'](\d\d\.[A-Za-z0-9_]+)["']""")
CHECKED_VALUE = re.compile(r"correct \(([-+\d.e]+)")


def _master(chapter):
    return next(p for p in MASTERS if p.name.startswith(chapter))


def _cells(chapter):
    return json.loads(_master(chapter).read_text(encoding="utf-8"))["cells"]


def _text(output):
    if output["output_type"] == "stream":
        return "".join(output["text"])
    data = output.get("data", {})
    if "image/png" in data:
        return ""  # a figure's repr ("<Figure size 700x400 ...>") is not a printed answer
    return "\n".join("".join(data[m]) for m in ("text/plain", "text/latex", "text/markdown") if m in data)


def _significant(token):
    return len(re.sub(r"[eE].*", "", token).lstrip("+-").replace(",", "").replace(".", "").lstrip("0"))


def printed_numbers(text):
    """(value, significant digits) of every number in ``text``, also scaled by its unit prefix."""
    found = []
    for token, prefix in NUMBER.findall(QUESTION_ID.sub(" ", text)):
        token = token.rstrip(",")
        try:
            x = float(token.replace(",", ""))
        except ValueError:
            continue
        found.append((x, _significant(token)))
        if prefix:
            found.append((x * PREFIX[prefix], _significant(token)))
    return found


def _sig3(x):
    return float(f"{x:.3g}")


def shows(expected, numbers, scalable=True, rtol=0.0):
    """Whether ``expected`` can be read off ``numbers`` (see the module's docstring); ``rtol`` is the checker's."""
    expected = float(expected)
    if expected == 0:
        return any(v == 0 for v, _ in numbers)
    target, close = _sig3(expected), min(rtol, 0.01)
    for value, digits in numbers:
        if not value:
            continue
        scales = [1000.0**k for k in range(-5, 6)] if scalable and digits >= 3 else [1.0]
        if abs(value / expected - 1) <= close:
            return True
        if any(math.isclose(_sig3(value * s), target, rel_tol=1e-9) for s in scales):
            return True
    return False


def asked(chapter):
    """[(question id, kind, expected value or None for a choice, question, numbers printed above, on the reader's
    measurement)] in check order."""
    result, seen, above = [], set(), []
    for cell in _cells(chapter):
        if cell["cell_type"] != "code":
            continue
        texts = [_text(o) for o in cell.get("outputs", [])]
        for qid in CHECK.findall("".join(cell["source"])):
            if qid in seen:
                continue
            seen.add(qid)
            q = get_question(qid)
            expected, measured = None, False
            if q.kind != "choice":
                try:
                    expected = float(q.expected())
                except TypeError:  # a question on the reader's measurement: the value its check line printed
                    expected, measured = float(CHECKED_VALUE.search("".join(texts)).group(1)), True
            result.append((qid, q.kind, expected, q, list(above), measured))
        for text in texts:
            above.extend(printed_numbers(text))
    return result


def printed_above(chapter):
    return [qid for qid, _, expected, q, above, measured in asked(chapter)
            if expected is not None and shows(expected, above, q.unit in SCALABLE, 0.0 if measured else q.rtol)]


def kind_of(q):
    return next((k for k in THINKING if q.prompt.startswith(k)), "compute")


def test_the_matcher_on_hand_made_outputs():
    numbers = printed_numbers("T_math = 4.04 ms, ridge 206 FLOP/B on the H200, bf16 is 2 bytes, x1.311, 2,181 MB, "
                              "✅ 05.kv_llama3_70b: correct (42.95 GB)")
    assert shows(0.004043, numbers) and shows(206.1, numbers) and shows(1.311, numbers)
    assert shows(2.181e9, numbers) and shows(2, numbers) and shows(42.95e9, numbers)
    assert not shows(200, numbers) and not shows(16, numbers)       # "H200", "bf16" are names
    assert not shows(5, numbers) and not shows(70, numbers)         # so is a question id
    assert not shows(2e6, numbers)                                   # "2" has one significant figure
    assert not shows(0.00405, numbers)
    assert not shows(2.181, numbers, scalable=False)                 # a ratio is not read off "2,181 MB"
    assert not shows(207.5, numbers) and shows(207.5, numbers, rtol=0.02)  # within 1 %: the checker accepts it


RESERVED = set()  # chapters the numbering skips (none now: 14 is the mixture of experts)


def test_every_chapter_is_covered():
    expected = [f"{n:02d}" for n in range(int(CHAPTERS[-1]) + 1) if f"{n:02d}" not in RESERVED]
    assert CHAPTERS == expected and len(CHAPTERS) >= 12, CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_at_most_one_question_in_five_is_printed_above_it(chapter):
    order = asked(chapter)
    assert len(order) >= 5, f"chapter {chapter} asks {len(order)} questions"
    found = printed_above(chapter)
    assert len(found) * 5 <= len(order), f"{chapter}: {found} of {len(order)} are printed above their question"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_question_of_the_chapter_is_asked_in_its_master(chapter):
    assert {qid for qid, *_ in asked(chapter)} == {q.id for q in questions(f"{chapter}.")}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_at_least_three_questions_need_thinking(chapter):
    kinds = [kind_of(q) for q in questions(f"{chapter}.")]
    assert sum(k != "compute" for k in kinds) >= 3, kinds


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_proofs_sit_in_collapsed_cells(chapter):
    """No visible code cell holds more than 2 asserts; a collapsed one opens with a comment saying what it checks."""
    for i, cell in enumerate(_cells(chapter)):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        asserts = sum(line.lstrip().startswith("assert ") for line in src.splitlines())
        if cell["metadata"].get("jupyter", {}).get("source_hidden"):
            assert src.startswith("# "), f"{chapter} cell {i}: a collapsed cell opens with a one-line comment"
        else:
            assert asserts <= 2, f"{chapter} cell {i} shows {asserts} asserts"
