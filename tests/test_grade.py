"""The grading command: planted answers in copies of a fixture master give known scores.

Every expected score below follows from what the test planted (a right or a
wrong answer, a cell that raises, loops, exits, floods its output...), not from
the grader. The right answers are the fixture master's own solutions, which
nbval checks against stored "correct" outputs.
"""

import asyncio
import copy
import csv
import json
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import sympy

import roofline_lib as rl
from roofline_lib.teach import discovery, grade, kernel, report, sandbox

SANDBOXED = not sandbox.problem()  # without bwrap (not Linux...), graded as this account: see test_grade_sandbox
UNSANDBOXED = [] if SANDBOXED else ["--unsandboxed"]

FIXTURE = Path(__file__).parent / "fixtures" / "exercise_master.ipynb"
QUESTIONS = ["00.bf16_bytes", "00.ridge_h200", "00.intensity_4096", "00.t_math_h200", "00.bound_h200"]


def master():
    return nbformat.read(FIXTURE, as_version=4)


def exercise_cell(nb, qid):
    (cell,) = [c for c in nb.cells if f'check("{qid}"' in c.source]
    return cell


def plant(nb, qid, code):
    """Replace the solution block of ``qid``'s cell with ``code``."""
    cell = exercise_cell(nb, qid)
    cell.source = re.sub(r"# BEGIN SOLUTION\n.*# END SOLUTION\n", code + "\n", cell.source, flags=re.S)
    return nb


def text(nb):
    return nbformat.writes(nb).encode()


def setup_cell(nb):
    return nb.cells[1]


def submissions(grades_path, originals):
    """{student: bytes} and the scores each must get, by construction."""
    subs, expected = {}, {}

    subs["alice"] = text(master())  # the master itself: all right
    expected["alice"] = dict.fromkeys(QUESTIONS, 1)

    nb = plant(master(), "00.bf16_bytes", "answer = 4  # counted bits/4")
    plant(nb, "00.bound_h200", 'bound = "memory"')
    subs["bob"] = text(nb)  # partly wrong
    expected["bob"] = {**dict.fromkeys(QUESTIONS, 1), "00.bf16_bytes": 0, "00.bound_h200": 0}

    subs["carol"] = text(plant(master(), "00.ridge_h200", "ridge = 1 / 0"))  # raises
    expected["carol"] = {**dict.fromkeys(QUESTIONS, 1), "00.ridge_h200": 0}

    # Loops forever and swallows the interrupt; later questions must still be graded.
    stubborn = ("import time\nwhile True:\n    try:\n        time.sleep(0.05)\n"
                "    except KeyboardInterrupt:\n        pass\nintensity = 1365.33")
    subs["dave"] = text(plant(master(), "00.intensity_4096", stubborn))
    expected["dave"] = {**dict.fromkeys(QUESTIONS, 1), "00.intensity_4096": 0}

    subs["erin"] = text(plant(master(), "00.bf16_bytes", "import sys\nsys.exit(0)\nanswer = 2"))
    expected["erin"] = {**dict.fromkeys(QUESTIONS, 1), "00.bf16_bytes": 0}

    subs["frank"] = text(plant(master(), "00.t_math_h200", "import os\nos._exit(1)"))  # kills the kernel
    expected["frank"] = {**dict.fromkeys(QUESTIONS, 1), "00.t_math_h200": 0}

    nb = master()
    setup_cell(nb).source += '\nprint("x" * 20_000_000)'  # 20 MB of output, then carries on
    subs["grace"] = text(nb)
    expected["grace"] = dict.fromkeys(QUESTIONS, 1)

    nb = master()
    nb.cells = [c for c in nb.cells if "00.intensity_4096" not in c.source and "00.bound_h200" not in c.source]
    subs["heidi"] = text(nb)  # deleted two exercise cells
    expected["heidi"] = {**dict.fromkeys(QUESTIONS, 1), "00.intensity_4096": 0, "00.bound_h200": 0}

    # Patches the checker (in every place it can be reached) and answers everything wrong.
    nb = master()
    setup_cell(nb).source += (
        "\nimport roofline_lib.exercises.core as core\n"
        "ok = lambda qid, *a, **k: core.Feedback(qid, True, '✅ ' + qid + ': correct')\n"
        "rl.exercises.check = core.check = ok\n"
        "rl.exercises.judge = core.judge = lambda q, *a: core.Feedback(q.id, True, 'correct')\n"
        "core.Question.expected = property(lambda self: (lambda **k: 123.0))\n")
    for qid, code in zip(QUESTIONS, ["answer = 3", "ridge = 100", "intensity = 10", "t_math = 1.0",
                                     'bound = "memory"'], strict=True):
        plant(nb, qid, code)
    subs["ivan"] = text(nb)
    expected["ivan"] = dict.fromkeys(QUESTIONS, 0)

    # Writes a perfect row into the grades file and blanks another student's submission; one wrong answer.
    nb = plant(master(), "00.ridge_h200", "ridge = 2 * hw.peak_flops('bf16') / hw.mem_bandwidth")
    setup_cell(nb).source += (
        f"\nopen({str(grades_path)!r}, 'w').write('student,total\\njudy,5\\n')"
        f"\nopen({str(originals / 'alice.ipynb')!r}, 'w').write('{{}}')")
    subs["judy"] = text(nb)
    expected["judy"] = {**dict.fromkeys(QUESTIONS, 1), "00.ridge_h200": 0}

    # Asks for 16 GB at once: the kernel's memory limit turns that into a MemoryError in that cell.
    subs["peggy"] = text(plant(master(), "00.bf16_bytes", "blob = bytearray(16 * 1024**3)\nanswer = 2"))
    expected["peggy"] = {**dict.fromkeys(QUESTIONS, 1), "00.bf16_bytes": 0}

    subs["mallory"] = b"this is not { a notebook"
    expected["mallory"] = dict.fromkeys(QUESTIONS, 0)
    subs["oscar"] = json.dumps({"cells": "none here"}).encode()
    expected["oscar"] = dict.fromkeys(QUESTIONS, 0)
    return subs, expected


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    out = tmp_path_factory.mktemp("out") / "grades.csv"
    subs, expected = submissions(out, folder)
    for name, data in subs.items():
        (folder / f"{name}.ipynb").write_bytes(data)
    lines = []
    code = grade.main([str(folder), "--master", str(FIXTURE), "--out", str(out), "--cell-timeout", "3",
                       "--notebook-timeout", "60", "--feedback", str(out.parent / "feedback"), *UNSANDBOXED],
                      progress=lines.append)
    with open(out, newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    for row in rows.values():  # every message in a cell of its own; joined here to search them all
        row["feedback"] = "\n".join(t for t in [row["notes"], *(row[f"feedback {q}"] for q in QUESTIONS)] if t)
    return code, rows, expected, lines, out.parent / "feedback"


def test_grading_a_chapter_no_submission_holds_warns_and_fails(tmp_path):
    subs, _ = submissions(tmp_path / "grades.csv", tmp_path)
    (tmp_path / "alice.ipynb").write_bytes(subs["alice"])
    lines = []
    args = [str(tmp_path), "--chapter", "05", "--out", str(tmp_path / "grades.csv"), "--notebook-timeout", "60",
            *UNSANDBOXED]
    assert grade.main(args, progress=lines.append) == 1
    assert any("no submission holds any question of chapter 05" in line for line in lines)
    assert grade.main([*args, "--allow-empty"], progress=lines.append) == 0


def test_every_submission_gets_the_scores_its_answers_deserve(graded):
    code, rows, expected, _, _ = graded
    assert code == 0
    assert set(rows) == set(expected)
    for student, scores in expected.items():
        got = {qid: int(rows[student][qid]) for qid in QUESTIONS}
        assert got == scores, student
        assert int(rows[student]["total"]) == sum(scores.values())
        assert int(rows[student]["max"]) == len(QUESTIONS)


def test_each_failure_is_explained(graded):
    _, rows, _, _, _ = graded
    feedback = {student: row["feedback"] for student, row in rows.items()}
    assert feedback["alice"] == ""
    assert "00.bf16_bytes" in feedback["bob"] and "twice" in feedback["bob"]
    assert "00.bound_h200" in feedback["bob"]
    assert "ZeroDivisionError" in feedback["carol"]
    assert "still running after 3 s" in feedback["dave"] and "restarted the kernel" in feedback["dave"]
    assert "SystemExit" in feedback["erin"]
    assert "stopped the kernel" in feedback["frank"]
    assert "printed 20.0 MB" in feedback["grace"]
    assert feedback["heidi"].count("question not found in submission") == 2
    assert "MemoryError" in feedback["peggy"]
    assert "not valid JSON" in feedback["mallory"]
    assert "no list of cells" in feedback["oscar"]


def test_progress_is_shown_for_every_submission(graded):
    _, rows, _, lines, _ = graded
    done = [line for line in lines if re.match(r"\[\d+/13\] \w+\.ipynb \d/5 \(\d+\.\d s\)", line)]
    assert len(done) == len(rows) == 13


def test_feedback_files_hold_every_question(graded):
    _, _, _, _, folder = graded
    bob = (folder / "bob.txt").read_text(encoding="utf-8")
    assert bob.startswith("bob: 3/5")
    assert all(qid in bob for qid in QUESTIONS)


def test_the_student_version_is_not_answered_anywhere(tmp_path):
    from roofline_lib import student

    assignment = grade.Assignment.from_notebook(FIXTURE)
    data = student.student_text(FIXTURE).encode()
    settings = grade.Settings(cell_timeout=10, sandbox=SANDBOXED)
    (result,) = asyncio.run(grade.grade_all({"blank": data}, assignment, settings))
    assert result.total == 0 and result.notes == []
    assert all("not answered yet" in result.messages[qid] for qid in QUESTIONS)


# ---------------------------------------------------------------- without a kernel


def test_find_checks_reads_the_answer_expression_and_context():
    cells = [
        ("markdown", 'rl.exercises.check("00.bf16_bytes", 2)'),
        ("code", '%matplotlib inline\nx = 3\nrl.exercises.check("00.bf16_bytes", x * 2)'),
        ("code", 'from roofline_lib.exercises import check\ncheck("00.ridge_h200", answer=r, batch=8)\n'
                 'def f():\n    return check("00.t_math_h200", local)'),
        ("code", 'check("00.bound_h200", "compute"\n'),  # a syntax error
    ]
    calls = discovery.find_checks(cells)
    assert [(c.question_id, c.cell, c.answer, c.context) for c in calls] == [
        ("00.bf16_bytes", 1, "x * 2", ()),
        ("00.ridge_h200", 2, "r", (("batch", "8"),)),
        ("00.bound_h200", 3, None, ()),
    ]


def test_assignment_questions_come_from_the_master_in_order():
    assert grade.Assignment.from_notebook(FIXTURE).question_ids == QUESTIONS
    with pytest.raises(ValueError, match="unknown question id"):
        grade.Assignment(["00.no_such_question"])


@pytest.mark.parametrize("value", [
    2, 2.0, np.float64(2.0), np.int64(4), np.array([2.0]), np.array([1.0, 2.0]), np.array([True]),
    sympy.Integer(2), sympy.Rational(4, 2), sympy.Symbol("x"), float("nan"), float("inf"), -2,
    True, None, ..., "2", [2], {"a": 2}, 1e-3 * 2000,
])
def test_an_answer_read_from_a_kernel_is_judged_as_check_would(value):
    """The answer's trip through JSON loses nothing check() looks at: same feedback, word for word."""
    namespace = {}
    exec(kernel.CAPTURE_DEF, namespace)
    captured = namespace["__roofline_capture__"](lambda: value)
    restored = kernel.parse_capture({"status": "ok", "data": {"text/plain": repr(captured)}})
    for qid in ("00.bf16_bytes", "00.bound_h200"):
        q = rl.exercises.get_question(qid)
        assert rl.exercises.judge(q, restored, q.expected()).message == rl.exercises.check(qid, value).message


def test_load_cells_says_what_is_wrong():
    with pytest.raises(discovery.NotANotebook, match="not valid JSON"):
        discovery.load_cells(b"{")
    with pytest.raises(discovery.NotANotebook, match="not UTF-8"):
        discovery.load_cells(b"\xff\xfe")
    with pytest.raises(discovery.NotANotebook, match="no cell_type"):
        discovery.load_cells(json.dumps({"cells": [{"source": "x"}]}).encode())
    cells = discovery.load_cells(json.dumps({"cells": [{"cell_type": "code", "source": ["a = 1\n", "b"]}]}).encode())
    assert cells == [("code", "a = 1\nb")]


def test_csv_is_written_in_one_step_over_whatever_was_there(tmp_path):
    out = tmp_path / "grades.csv"
    out.write_text("judy,5\n")
    g = grade.Grade("zed", {"00.bf16_bytes": 1}, {"00.bf16_bytes": "✅ fine"}, [])
    report.write_csv([copy.copy(g)], ["00.bf16_bytes"], out)
    assert out.read_text().splitlines() == ["student,00.bf16_bytes,total,max,notes,feedback 00.bf16_bytes",
                                            "zed,1,1,1,,"]
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]


def test_a_chapter_without_questions_is_named():
    from roofline_lib.teach.score import Assignment

    with pytest.raises(ValueError, match="chapter 16 has no questions; the chapters with questions are 00, 01"):
        Assignment.from_chapter("16")
    with pytest.raises(ValueError, match="--chapter takes a chapter number such as 5 or 05, not 'x'"):
        Assignment.from_chapter("x")


def test_chapter_columns_follow_the_notebook():
    import re

    from roofline_lib.teach.score import Assignment

    for chapter in ("05", "11", "13"):
        path = next((Path(__file__).resolve().parents[1] / "notebooks").glob(f"{chapter}_*.ipynb"))
        master = path.read_text(encoding="utf-8")
        in_page = list(dict.fromkeys(re.findall(r'exercises\.check\(\\"(\d\d\.[A-Za-z0-9_]+)\\"', master)))
        assert in_page and Assignment.from_chapter(chapter).question_ids[:len(in_page)] == in_page


def test_grades_csv_is_as_readable_as_the_feedback(tmp_path):
    import os

    from roofline_lib.teach.report import write_csv, write_feedback
    from roofline_lib.teach.score import Grade

    grades = [Grade("ada", {"00.demo_bytes": 1}, {"00.demo_bytes": "ok"}, [])]
    write_csv(grades, ["00.demo_bytes"], tmp_path / "grades.csv")
    write_feedback(grades, ["00.demo_bytes"], tmp_path / "feedback")
    mode = os.stat(tmp_path / "grades.csv").st_mode & 0o777
    assert mode == os.stat(tmp_path / "feedback" / "ada.txt").st_mode & 0o777 and mode & 0o044
