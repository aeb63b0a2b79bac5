"""Chapters 05-10: few exercises whose answer is already printed above them in the master.

An exercise that asks for a number the page has printed teaches copying (issue 12). For each
question a chapter master checks, this reads every output stored above its check cell (stream and
plain-text outputs, the check lines of earlier exercises included) and looks for a printed number
that equals the question's expected value to 3 significant figures, read with its unit prefix
("4.04 ms" is 4.04e-3 and 4.04), or within 1 % of it (a rounded figure the checker would accept,
such as 213 for 214). At most one question in five may have such a number above it.

Multiple-choice questions have no number to copy and are not counted as printed; they count in
the total. The expected value of a question is the library's (``q.expected()``); a question on the
reader's own measurement takes the value its check line printed in the master.
"""

import json
import pathlib
import re

import pytest

import roofline_lib as rl

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = ["05_llm_inference", "06_optimizations", "07_measure_your_machine", "08_overhead_bound",
            "09_communication_bound", "10_reality_check"]
PREFIX = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "m": 1e-3, "µ": 1e-6, "u": 1e-6, "n": 1e-9}
NUMBER = re.compile(r"(?<![\w.\-])(\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(?:\s?([kMGTPmµun])(?=[A-Za-z/]))?")
QUESTION_ID = re.compile(r"\b\d\d\.[a-z][a-z0-9_]*")
CHECK = re.compile(r"""rl\.exercises\.check\(\s*["'](\d\d\.[a-z0-9_]+)["']""")
CHECKED_VALUE = re.compile(r"correct \(([-+\d.e]+)")


def _text(output):
    if output["output_type"] == "stream":
        return "".join(output["text"])
    data = output.get("data", {})
    if "image/png" in data or "text/plain" not in data:
        return ""  # a figure's repr ("<Figure size 700x400 ...>") is not a printed answer
    return "".join(data["text/plain"])


def printed_numbers(text):
    """Every number in ``text``, also scaled by its unit prefix where it has one."""
    text = QUESTION_ID.sub(" ", text)
    values = []
    for number, prefix in NUMBER.findall(text):
        try:
            x = float(number.replace(",", ""))
        except ValueError:
            continue
        values.append(x)
        if prefix:
            values.append(x * PREFIX[prefix])
    return values


def _sig3(x):
    return float(f"{x:.3g}")


def shows(values, expected, rtol):
    """Whether a printed value gives the answer: equal to 3 significant figures, or within 1 % and
    accepted by the checker (a tolerance wider than 1 % is for predictions, not for copying)."""
    if expected == 0:
        return any(v == 0 for v in values)
    close = min(rtol, 0.01)
    return any(_sig3(v) == _sig3(expected) or abs(v / expected - 1) <= close for v in values if v)


def questions_with_printed_answers(name):
    """[(question id, kind, printed above?)] in the order the master checks them."""
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
    above, result = [], []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        texts = [_text(o) for o in cell.get("outputs", [])]
        for qid in CHECK.findall("".join(cell["source"])):
            q = rl.exercises.get_question(qid)
            if q.kind == "choice":
                result.append((qid, q.kind, False))
                continue
            try:
                expected = float(q.expected())
            except TypeError:  # a question on the reader's measurement: the value its check line printed
                expected = float(CHECKED_VALUE.search("".join(texts)).group(1))
            result.append((qid, q.kind, shows(above, expected, q.rtol)))
        for text in texts:
            above.extend(printed_numbers(text))
    return result


def test_the_reader_sees_numbers_as_printed():
    values = printed_numbers("step 4.04 ms, 1,024 sequences, 150.75e9 bytes, ✅ 05.kv_llama3_70b: correct (42.95 GB)")
    assert 4.04 in values and 4.04e-3 in values and 1024 in values and 150.75e9 in values and 42.95 in values
    assert 5 not in values and 70 not in values  # the question id is not a printed answer
    assert shows([4.0], 4.0, 0.02) and shows([3.26], 3.258, 0.0) and not shows([213.0], 214, 0.0)
    assert shows([213.0], 214, 0.01)  # the checker would accept it: printed, for a learner


@pytest.mark.parametrize("name", CHAPTERS)
def test_at_most_one_question_in_five_is_printed_above_it(name):
    found = questions_with_printed_answers(name)
    printed = [qid for qid, _, shown in found if shown]
    assert len(found) >= 5, found
    assert 5 * len(printed) <= len(found), f"{name}: answers printed above their question: {printed}"
