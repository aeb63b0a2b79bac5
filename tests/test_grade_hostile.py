"""The grader under a hostile class: one batch of hostile submissions beside honest ones.

Each hostile notebook below is built here for one way a submission could cost
a classmate marks, stop the grades file, or inject into it or into the
teacher's terminal. The honest notebooks graded in the same batch (two at a
time, so they overlap the hostile ones) must keep their exact scores, the batch
must finish, and grades.csv must parse with no cell that starts like a formula.
Limits are passed small, so each problem shows with the smallest input.
"""

import asyncio
import csv
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from roofline_lib.teach import discovery, grade, kernel, sandbox, score, text

SANDBOXED = not sandbox.problem()  # without bwrap (not Linux...), graded as this account: see test_grade_sandbox
UNSANDBOXED = [] if SANDBOXED else ["--unsandboxed"]

FIXTURE = Path(__file__).parent / "fixtures" / "exercise_master.ipynb"
QUESTIONS = ["00.bf16_bytes", "00.ridge_h200", "00.intensity_4096", "00.t_math_h200", "00.bound_h200"]
ALL = dict.fromkeys(QUESTIONS, 1)
NONE = dict.fromkeys(QUESTIONS, 0)
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def master():
    return nbformat.read(FIXTURE, as_version=4)


def plant(nb, qid, code):
    """Replace the solution block of ``qid``'s cell with ``code``."""
    (cell,) = [c for c in nb.cells if f'check("{qid}"' in c.source]
    cell.source = re.sub(r"# BEGIN SOLUTION\n.*# END SOLUTION\n", lambda _: code + "\n", cell.source,
                         flags=re.S)
    return nb


def extra_cell(nb, source):
    nb.cells.insert(2, nbformat.v4.new_code_cell(source))
    return nb


def data(nb):
    return nbformat.writes(nb).encode()


def batch(folder):
    """{file name (bytes): contents} and {student as graded: expected scores}."""
    files, expected = {}, {}
    honest = data(master())
    for name in ("alice", "zoe"):  # honest, first and last in the order graded
        files[f"{name}.ipynb".encode()] = honest
        expected[name] = ALL

    # 1. Slow to parse: a cell with many magic lines (IPython's transformer is quadratic in them),
    #    and a 3,000-term expression, each in an exercise cell: only its question is lost. (In a
    #    cell with no check the grader does not parse it at all: see the test after the batch.)
    # (about 4.5 s to read here, three times the limit below; an ordinary cell reads in milliseconds, well under
    # it even when the machine is busy: at 0.3 s an ordinary cell was once cut off on a loaded 2-core machine).
    # Line magics that start no process: the kernel still runs the cell, and 150 shell lines ("!true") ran into the
    # sandbox's limit on processes started (25 in 5 s), which stopped the entry and lost its later questions too.
    magics = "\n".join(["%pwd"] * 225 + [f"x{i} = {i}" for i in range(1125)])
    files[b"slowparse.ipynb"] = data(plant(master(), "00.bf16_bytes", magics + "\nanswer = 2"))
    expected["slowparse"] = {**ALL, "00.bf16_bytes": 0}
    deep = "deep = " + "+".join(["1"] * 3000)
    files[b"deep.ipynb"] = data(plant(master(), "00.ridge_h200",
                                      deep + '\nridge = hw.peak_flops("bf16") / hw.mem_bandwidth'))
    expected["deep"] = {**ALL, "00.ridge_h200": 0}
    files[b"manychecks.ipynb"] = data(extra_cell(master(), "\n".join(
        f'rl.exercises.check("00.bf16_bytes", {i})' for i in range(3000))))
    expected["manychecks"] = ALL  # the exercise cell's own call, later in the notebook, counts

    # Entries that test only their file name hold no notebook: each is a row of zeros with its reason, and starts
    # no kernel (the honest notebooks above and below run beside the hostile ones).
    named = b"not a notebook, only a name to write"

    # 2. Text that cannot be written as UTF-8: a lone surrogate in an answer's repr, a GBK file name.
    liar = 'class Odd:\n    def __repr__(self):\n        return "\\ud800\\x1b[2J"\nanswer = Odd()'
    files[b"surrogate.ipynb"] = data(plant(master(), "00.bf16_bytes", liar))
    expected["surrogate"] = {**ALL, "00.bf16_bytes": 0}
    files["张三.ipynb".encode("gbk")] = named
    expected["\ufffd\ufffd\ufffd\ufffd"] = NONE

    # 3. File names that a spreadsheet would run as formulas.
    for i, start in enumerate(['=HYPERLINK("evil.example","y")', "+1", "-2", "@SUM(1)", "\t=3"]):
        files[f"{start}{i}.ipynb".encode()] = named
        expected[text.clean(f"{start}{i}")] = NONE

    # 4. Terminal control codes in a file name and in an exception message.
    files[b"erase\x1b[2K\r[9of9] x.ipynb 5of5\x07.ipynb"] = named
    expected[text.clean("erase\x1b[2K\r[9of9] x.ipynb 5of5\x07")] = NONE
    forged = 'raise ValueError("\\x1b[1A\\x1b[2K\\r[9/9] x.ipynb 5/5")'
    files[b"escapes.ipynb"] = data(plant(master(), "00.t_math_h200", forged))
    expected["escapes"] = {**ALL, "00.t_math_h200": 0}

    # 5. A kernel that kills its parent (and one that kills the process its environment names).
    kill = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nintensity = 1365.33"
    # In the sandbox the worker is the namespace's init, which ignores signals from inside: nothing happens.
    # Without it the worker dies, and the cell is skipped with a note.
    files[b"killer.ipynb"] = data(plant(master(), "00.intensity_4096", kill))
    expected["killer"] = ALL if SANDBOXED else {**ALL, "00.intensity_4096": 0}
    files[b"killer2.ipynb"] = data(plant(master(), "00.t_math_h200",
                                         "import os, signal\nos.kill(int(os.environ['JPY_PARENT_PID']), 9)"))
    expected["killer2"] = {**ALL, "00.t_math_h200": 0}  # its cell sets no answer: 0 either way
    # A cell whose output outgrows the worker's memory: the worker dies, not the grader.
    nb = extra_cell(master(), 'print("x" * 150_000_000)')
    files[b"flood.ipynb"] = data(nb)
    expected["flood"] = ALL

    # 7. Entries that are not notebook files: each gets a row of zeros and a reason.
    (folder / "dir.ipynb").mkdir()
    expected["dir"] = NONE
    os.mkfifo(folder / "pipe.ipynb")
    expected["pipe"] = NONE
    (folder / "gone.ipynb").symlink_to(folder / "no-such-file")
    expected["gone"] = NONE
    with open(folder / "huge.ipynb", "wb") as f:
        f.truncate(60_000_000)  # sparse: takes no time or disk
    expected["huge"] = NONE
    return files, expected


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    out_dir = tmp_path_factory.mktemp("out")
    out = out_dir / "grades.csv"
    out.write_text("student,total\nold,5\n")  # a previous run's file must not survive looking current
    files, expected = batch(folder)
    for name, contents in files.items():
        with open(os.path.join(os.fsencode(folder), name), "wb") as f:
            f.write(contents)
    # A scratch folder left by a grader that was killed: its process is gone.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = Path(tempfile.gettempdir()) / f"{grade.SCRATCH_PREFIX}{int(dead.stdout)}-test"
    stale.mkdir(exist_ok=True)
    (stale / "copy.ipynb").write_text("{}")
    lines = []
    code = grade.main([str(folder), "--master", str(FIXTURE), "--out", str(out), "--cell-timeout", "6",
                       "--notebook-timeout", "60", "--parse-cell-timeout", "1.5", "--worker-memory-mb", "1500",
                       *UNSANDBOXED],
                      progress=lines.append)
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    return code, table, expected, lines, out_dir, stale


def rows_of(table):
    """{student: {column: cell}}, with "feedback": the notes and every question's feedback, one per line."""
    header, *body = table
    rows = {row[0]: dict(zip(header, row, strict=True)) for row in body}
    for row in rows.values():
        row["feedback"] = "\n".join(v for k, v in row.items() if (k == "notes" or k.startswith("feedback ")) and v)
    return rows


def student_key(name):
    """The student column as written: a formula-like name carries a leading quote."""
    return "'" + name if name.lstrip().startswith(FORMULA) else name


def test_the_batch_finishes_and_every_entry_has_its_deserved_scores(graded):
    code, table, expected, _, _, _ = graded
    assert code == 0
    rows = rows_of(table)
    assert set(rows) == {student_key(s) for s in expected}
    for student, scores in expected.items():
        row = rows[student_key(student)]
        assert {q: int(row[q]) for q in QUESTIONS} == scores, (student, row["feedback"])


def test_no_cell_starts_like_a_formula_or_holds_a_control_code(graded):
    _, table, _, _, _, _ = graded
    notes = table[0].index("notes")
    for row in table:
        for i, cell in enumerate(row):
            assert not cell.lstrip().startswith(FORMULA), cell
            # the notes cell holds one note per line by design (report.notes_cell): a newline, and only that
            text = cell.replace("\n", " ") if i == notes else cell
            assert not re.search("[\x00-\x1f\x7f-\x9f\ud800-\udfff]", text), cell


def test_progress_lines_carry_no_control_codes_and_no_forged_lines(graded):
    _, _, expected, lines, _, _ = graded
    assert all(not re.search("[\x00-\x1f\x7f-\x9f]", line) for line in lines)
    done = [line for line in lines if re.match(r"\[\d+/\d+\] ", line)]
    assert len(done) == len(expected)
    assert not any(line.startswith("[9/9]") for line in lines)


def test_each_hostile_entry_is_explained(graded):
    _, table, _, _, _, _ = graded
    feedback = {row["student"]: row["feedback"] for row in rows_of(table).values()}
    # the grader gives up reading the cell; the kernel may then also time out on it: either is said
    assert re.search("took more than 1.5 s to read|still running after", feedback["slowparse"])
    assert "00.ridge_h200: cell 6" in feedback["deep"]  # the kernel also chokes on it: its reason is given
    if SANDBOXED:  # the signals never reached the worker
        assert "stopped the grader's worker" not in feedback["killer"] + feedback["killer2"]
    else:
        assert "stopped the grader's worker" in feedback["killer"] and "SIGKILL" in feedback["killer"]
        assert "stopped the grader's worker" in feedback["killer2"]
    assert "\\x1b" in feedback["escapes"]
    assert "a folder" in feedback["dir"] and "named pipe" in feedback["pipe"]
    assert "symbolic link" in feedback["gone"] and "more than 50 MB" in feedback["huge"]
    assert feedback["alice"] == feedback["zoe"] == ""


def test_the_grades_file_replaced_the_old_one_and_nothing_is_left_behind(graded):
    _, table, _, _, out_dir, stale = graded
    assert sorted(p.name for p in out_dir.iterdir()) == ["grades.csv", "grades.csv.previous"]
    assert (out_dir / "grades.csv.previous").read_text() == "student,total\nold,5\n"
    assert not stale.exists()
    assert not list(Path(tempfile.gettempdir()).glob(f"{grade.SCRATCH_PREFIX}{os.getpid()}-*"))


# ---------------------------------------------------------------- without a batch


def test_a_cell_too_deep_to_parse_costs_only_its_own_questions():
    deep = "deep = " + "+".join(["1"] * 3000)
    cells = [("code", deep), ("code", deep + '\ncheck("00.ridge_h200", 1)'), ("code", 'check("00.bf16_bytes", x)')]
    unparsed = {}
    calls = discovery.find_checks(cells, unparsed=unparsed)
    assert [(c.question_id, c.cell, c.answer) for c in calls] == [("00.ridge_h200", 1, None), ("00.bf16_bytes", 2, "x")]
    assert unparsed == {1: "cell 2 is too deeply nested to read (RecursionError)"}


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    out = tmp_path / "grades.csv"
    g = score.Grade("zed", {"00.bf16_bytes": 1}, {}, [])

    def broken(*_):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        grade.write_csv([g], ["00.bf16_bytes"], out)
    assert list(tmp_path.iterdir()) == []


def test_text_is_cleaned_and_formulas_are_neutralised():
    assert text.clean("a\x1b[2Jb\rc\x07\ud800\u202e") == "a\\x1b[2Jb c\\x07\ufffd\\u202e"
    assert text.file_name(b"\xd5\xc5.ipynb") == "\ufffd\ufffd.ipynb"
    assert [text.csv_cell(s) for s in ("=1", "+1", "-1", "@a", "\t=1", "ok", 3)] == [
        "'=1", "'+1", "'-1", "'@a", "' =1", "ok", 3]


def test_expected_values_are_cached_by_value_not_by_the_students_repr():
    """A float whose repr lies must not decide the expected value another student is judged by."""
    qid = "07.smallest_compute_bound_matmul"
    assignment = score.Assignment([qid])

    def measured(value, shown):
        capture = f'{{"kind": "number", "value": {value!r}, "type": "float", "repr": "{shown}"}}'
        return kernel.parse_capture({"status": "ok", "data": {"text/plain": repr(capture)}})

    honest_peak, bandwidth = 1e12, 1e11
    liar = assignment.expected(qid, {"peak_fp64": measured(4e12, repr(honest_peak)),
                                     "bandwidth": measured(bandwidth, repr(bandwidth))})
    honest = assignment.expected(qid, {"peak_fp64": measured(honest_peak, repr(honest_peak)),
                                       "bandwidth": measured(bandwidth, repr(bandwidth))})
    assert honest == 120 and liar == 480  # 12 x the ridge: 10 and 40 FLOP/byte


def test_a_worker_that_never_reports_is_stopped_in_time(tmp_path):
    """The parse limit holds even when one cell's parse cannot be interrupted from inside."""
    # The kernel then meets the same slow cell (IPython transforms it there too). Its question scores 0
    # either way (the grader never read its answer); the batch's 6 s cell limit, not the default 30 s,
    # is enough to stop it there, and the rest of the notebook runs as before.
    # The cell takes about 12 s to read on this 2-core machine when quiet (a busy one only makes it slower),
    # against a 3 s limit for the whole submission, whose other cells read in well under a second even at a
    # load of 10. (At most 500 magic lines: past that IPython gives up at once instead of taking long.)
    settings = grade.Settings(parse_timeout=3, parse_cell_timeout=60, cell_timeout=6, sandbox=SANDBOXED)
    nb = master()
    slow = "\n".join(["!true"] * 450 + [f"x{i} = {i}" for i in range(3000)])
    nb.cells[3].source = slow + "\n" + nb.cells[3].source
    assignment = score.Assignment.from_notebook(FIXTURE)
    (g,) = asyncio.run(grade.grade_all({"slow": data(nb)}, assignment, settings))
    assert g.scores == {**ALL, "00.bf16_bytes": 0}, g.messages
