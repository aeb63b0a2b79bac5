"""Student versions: solutions out, outputs stripped, in sync with the masters.

The last two tests run over EVERY chapter master in notebooks/ (as chapters
land they are covered): the committed student versions must match what
`python -m roofline_lib.student` makes of the masters and show no solution
line; each master must pass all of its checks and each student version must
run without an error and leave every check "not answered".
"""

import asyncio
import re
import shutil
from pathlib import Path

import cell_deps
import nbformat
import pytest

from roofline_lib import exercises
from roofline_lib.teach import grade, sandbox, student

SANDBOXED = not sandbox.problem()  # without bwrap (not Linux...), graded as this account: see test_grade_sandbox

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "exercise_master.ipynb"
CHAPTERS = student.masters(ROOT / "notebooks")


def test_a_block_becomes_one_placeholder_per_name_it_assigns():
    source = ("x = 1\n"
              "if True:\n"
              "    # BEGIN SOLUTION\n"
              "    a, b = 1, 2\n"
              "    for i in range(3):\n"
              "        total = [j for j in range(i)]\n"
              "    # END SOLUTION\n"
              'check("00.bf16_bytes", a)')
    assert student.strip_solutions(source) == ("x = 1\n"
                                               "if True:\n"
                                               "    a = ...  # your answer here\n"
                                               "    b = ...  # your answer here\n"
                                               "    i = ...  # your answer here\n"
                                               "    total = ...  # your answer here\n"
                                               'check("00.bf16_bytes", a)')


@pytest.mark.parametrize("source, problem", [
    ("# BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n# END SOLUTION\n", "without a BEGIN"),
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION", "inside another block"),
    ("# BEGIN SOLUTION\nprint(1)\n# END SOLUTION", "assigns no variable"),
    ("# BEGIN SOLUTION\nx = = 1\n# END SOLUTION", "not valid Python"),
    ("#BEGIN SOLUTION:\nx = 1\n# END SOLUTION", "looks like a solution marker"),
])
def test_bad_markup_is_refused_with_the_reason(source, problem):
    with pytest.raises(student.SolutionMarkupError, match=problem):
        student.strip_solutions(source)


def test_the_fixture_student_version_has_no_solution_and_no_output():
    master = nbformat.read(FIXTURE, as_version=4)
    text = student.student_text(FIXTURE)
    assert text == student.student_text(FIXTURE)  # the same bytes every time
    nb = nbformat.reads(text, as_version=4)
    assert student.solution_leaks(master, nb) == []
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert "BEGIN SOLUTION" not in text and "hw.peak_flops(\"bf16\") / hw.mem_bandwidth" not in text
    assert "intensity = ...  # your answer here" in text
    assert "✅" not in text  # the master's stored "correct" outputs are gone too


def test_a_leaked_solution_line_is_caught():
    master = nbformat.read(FIXTURE, as_version=4)
    nb = nbformat.reads(student.student_text(FIXTURE), as_version=4)
    leaked = 'bound = "compute" if w.intensity > hw.ridge_point("bf16") else "memory"'
    nb.cells[-1].source = leaked + "\n" + nb.cells[-1].source
    assert student.solution_leaks(master, nb) == [leaked]


def test_sync_writes_then_checks_then_notices_drift(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(FIXTURE, notebooks / "99_fixture.ipynb")
    assert student.main(["--notebooks", str(notebooks)]) == 0
    written = (notebooks / "student" / "99_fixture_student.ipynb").read_text()
    assert written == student.student_text(notebooks / "99_fixture.ipynb")
    assert student.main(["--notebooks", str(notebooks), "--check"]) == 0
    assert "1 student version in sync" in capsys.readouterr().out

    master = nbformat.read(notebooks / "99_fixture.ipynb", as_version=4)
    master.cells[0].source += "\n\nOne more sentence."
    nbformat.write(master, notebooks / "99_fixture.ipynb")
    (notebooks / "student" / "98_gone_student.ipynb").write_text("{}")
    assert student.main(["--notebooks", str(notebooks), "--check"]) == 1
    err = capsys.readouterr().err
    assert "99_fixture_student.ipynb: out of date" in err
    assert "98_gone_student.ipynb: no master" in err and "98_gone.ipynb for it" in err

    # a student version that was only run and saved is named as such, not as stale
    run = nbformat.reads(written, as_version=4)
    run.cells[[c.cell_type for c in run.cells].index("code")].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="42\n")]
    nbformat.write(run, notebooks / "student" / "99_fixture_student.ipynb")
    nbformat.write(nbformat.read(FIXTURE, as_version=4), notebooks / "99_fixture.ipynb")  # master as it was
    assert student.main(["--notebooks", str(notebooks), "--check"]) == 1
    assert "99_fixture_student.ipynb: was run and saved (its outputs are stored" in capsys.readouterr().err

    assert student.main(["--notebooks", str(notebooks)]) == 0  # regenerates and removes the orphan
    assert sorted(p.name for p in (notebooks / "student").iterdir()) == ["99_fixture_student.ipynb"]


# ---------------------------------------------------------------- every chapter in notebooks/


def test_committed_student_versions_match_every_chapter_master():
    """EVERY CHAPTER: notebooks/student/ is what `python -m roofline_lib.student` makes, with no solution."""
    assert student.sync(ROOT / "notebooks", check=True) == []


def _solution_cells(master):
    """(index, cell) of each code cell of ``master`` that holds a solution block."""
    nb = nbformat.read(master, as_version=4)
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code" and "# BEGIN SOLUTION" in c.source]


@pytest.mark.parametrize("master", CHAPTERS, ids=[m.stem for m in CHAPTERS])
def test_every_question_of_a_master_is_pinned_correct_by_its_stored_output(master):
    """EVERY CHAPTER: each question the grader would ask of the master shows a stored "✅ QID: correct" under its
    solution, in a cell strict nbval compares (no nbval-ignore-output): nbval re-running the master then proves it
    scores full marks, so the suite does not grade the masters again. (Six machine-measured answers of 07 and 08
    print a different number on each machine; tests/nbval_sanitize.cfg blanks only those numbers.)"""
    asked = grade.Assignment.from_notebook(master).question_ids
    shown = set()
    for i, cell in _solution_cells(master):
        assert "nbval-ignore-output" not in cell.metadata.get("tags", []), f"{master.name} cell {i}: not compared"
        text = "\n".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)
        shown |= set(re.findall(r"^✅ (\S+): correct", text, flags=re.M))
    assert asked and [q for q in asked if q not in shown] == []


# PyTorch is an optional extra: the exercise editions run as a reader who has not installed it (a first cell hides
# it), so that the chapters' "PyTorch not installed" paths run too (07, 08, 15); strict nbval runs the masters with
# it where it is installed, as CI does.
WITHOUT_TORCH = 'import sys\n\nsys.modules["torch"] = None  # as if PyTorch were not installed'


def without_torch(text):
    """A student version's text with a first code cell (after its note) that hides PyTorch."""
    nb = nbformat.reads(text, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(WITHOUT_TORCH))
    return nbformat.writes(nb)


TORCH = re.compile(r"\btorch\b|torch_status")  # PyTorch itself, not torchao or torchtitan


def what_the_blanks_reach(master):
    """The master's student version with only the code cells that can behave differently from the master's left
    to run: each cell that differs from the master's (its blanks) or takes a PyTorch path (hidden here), every
    later cell that reads a name one of those defined, and the cells all of these need (cell_deps). Every other
    code cell is emptied, not removed, so that cells keep their numbers: it is the master's own code on the
    master's own inputs, which strict nbval runs and compares."""
    nb = nbformat.reads(student.student_text(master), as_version=4)
    original = nbformat.read(master, as_version=4).cells
    assert len(nb.cells) == len(original) + 1, "a student version is its master's cells after one note cell"
    code = {i: c.source for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    differs = {i for i, source in code.items() if source != original[i - 1].source or TORCH.search(source)}
    run = cell_deps.needed(code, cell_deps.reached(code, differs))
    for i in set(code) - run:
        nb.cells[i].source = ""
    return nbformat.writes(nb)


def test_the_cells_a_blank_reaches_and_the_cells_they_need():
    """cell_deps on a hand-made notebook: what runs of an exercise edition (what_the_blanks_reach)."""
    cells = {0: "import numpy as np", 1: "%matplotlib inline\nbig = np.ones(3)", 2: "answer = ...  # your answer here",
             3: "total = answer + 1", 4: "total += big.sum()", 5: "answer = 3\nother = answer", 6: "print(other)",
             7: "def f():\n    return total\nlater = [f() for _ in range(2)]"}
    assert cell_deps.names(cells[4]) == ({"total"}, {"big", "total"})  # an update reads what it updates
    assert cell_deps.reached(cells, {2}) == {2, 3, 4, 7}  # 5 sets `answer` afresh: 5 and 6 are the master's
    assert cell_deps.needed(cells, {2, 3, 4, 7}) == {0, 1, 2, 3, 4, 7}
    assert cell_deps.needed(cells, {6}) == {5, 6}


@pytest.fixture(scope="module")
def student_grades():
    """Every chapter's student version, graded like a submission (two kernels at a time in all), the cells its
    blanks reach and those they need (what_the_blanks_reach)."""
    at_once = asyncio.Semaphore(2)
    settings = grade.Settings(cell_timeout=60, sandbox=SANDBOXED)

    async def one(master):
        assignment = grade.Assignment.from_notebook(master)
        async with at_once:
            (g,) = await grade.grade_all({master.stem: without_torch(what_the_blanks_reach(master)).encode()},
                                         assignment, settings, workers=1)
        return master.stem, (g, assignment)

    async def every():
        return dict(await asyncio.gather(*(one(m) for m in CHAPTERS)))

    return asyncio.run(every()) if CHAPTERS else {}


def _intended_error_notes(master_path):
    nb = nbformat.read(master_path, as_version=4)
    return {i for i, c in enumerate(nb.cells) if "raises-exception" in c.metadata.get("tags", [])}


@pytest.mark.parametrize("master", CHAPTERS, ids=[m.stem for m in CHAPTERS])
def test_every_student_version_runs_cleanly_with_nothing_answered(master, student_grades):
    """EVERY CHAPTER: the student version runs in the grader, every cell its blanks reach with the cells those need,
    with no error and every question "not answered"."""
    blank, assignment = student_grades[master.stem]
    # +1 for numbering, +1 for the note cell, +1 for the cell that hides PyTorch
    intended = {f"cell {i + 3} " for i in _intended_error_notes(master)}
    assert [n for n in blank.notes if not any(n.startswith(p) for p in intended)] == []
    assert blank.total == 0
    for qid in assignment.question_ids:
        assert "not answered yet" in blank.messages[qid], blank.messages[qid]


# ---------------------------------------------------------------- instructions that name the markers


@pytest.mark.parametrize("master_text, student_text", [
    ("Replace the lines between `# BEGIN SOLUTION` and `# END SOLUTION` by your own work (start from\n"
     "`answer = ...`) and run the cell.",
     "Replace the `...` in each line that ends in `# your answer here` by your own work and run the cell."),
    ("Replace the solution lines with your own work, then run the cell.",
     "Replace the `...` in each line that ends in `# your answer here` with your own work, then run the cell."),
    ("Work on the lines between `# BEGIN SOLUTION`\nand `# END SOLUTION`.",
     "Work on the `...` in each line that ends in `# your answer here`."),
])
def test_instructions_naming_the_markers_are_rewritten_for_the_student(master_text, student_text):
    assert student.student_markdown(master_text) == student_text


def test_an_instruction_the_generator_cannot_rewrite_is_refused():
    with pytest.raises(student.SolutionMarkupError, match="cell 3: line 2 tells the learner about 'END SOLUTION'"):
        student.student_markdown("Exercises.\nDelete everything above # END SOLUTION.", "cell 3")


@pytest.mark.parametrize("master", CHAPTERS, ids=[m.stem for m in CHAPTERS])
def test_no_student_version_mentions_what_only_the_master_has(master):
    """EVERY CHAPTER: the committed student file never tells the learner about markers or model answers."""
    text = (ROOT / "notebooks" / "student" / student.student_name(master.name)).read_text(encoding="utf-8")
    for phrase in ("BEGIN SOLUTION", "END SOLUTION", "solution marker", "solution line", "model answer"):
        assert phrase.lower() not in text.lower(), f"{master.name} mentions {phrase!r}"


# ---------------------------------------------------------------- README: the learner's path

README = (ROOT / "README.md").read_text(encoding="utf-8")
def test_readme_says_how_to_practise_without_the_solutions():
    section = README.split("## Two editions of every chapter", 1)[1].split("\n## ", 1)[0]
    for needed in ("notebooks/student/NN_topic_student.ipynb", "notebooks/NN_topic.ipynb", "rl.exercises.check(",
                   "rl.exercises.hint(", "# your answer here"):
        assert needed in section, needed
    for qid in re.findall(r"""exercises\.(?:check|hint)\("([^"]+)\"""", section):
        exercises.get_question(qid)  # the example asks a question that exists


def test_readme_layout_names_every_module_of_the_library():
    layout = README.split("## Layout", 1)[1]
    lib = ROOT / "roofline_lib"
    names = {p.stem for p in lib.glob("*.py") if p.stem != "__init__"}
    rooms = [p for p in lib.iterdir() if (p / "__init__.py").is_file()]
    assert len(rooms) >= 12
    names |= {f"{p.name}/" for p in rooms}
    for room in rooms:
        names |= {p.stem for p in room.glob("*.py") if p.stem != "__init__" and not p.stem.startswith("ch")}
    missing = sorted(n for n in names if not re.search(rf"(?<![\w/]){re.escape(n)}(?![\w])", layout))
    assert missing == [], f"README's layout does not mention {missing}"


# ---------------------------------------------------------------- docs/teaching.md: the teacher's path

TEACHING = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")


def _teaching_commands():
    """Each command line in docs/teaching.md's plain code blocks (the container recipe aside)."""
    blocks, block, fence = [], None, None
    for line in TEACHING.splitlines():
        stripped = line.strip()
        if block is None and stripped.startswith("```"):
            block, fence = [], stripped[3:]
        elif block is not None and stripped == "```":
            if fence == "":  # a plain block holds commands; ```python ones hold code
                blocks.append(block)
            block = None
        elif block is not None:
            block.append(stripped)
    commands = []
    for lines in blocks:
        lines = [line.split("  #")[0].strip() for line in lines]
        lines = [line for line in lines if line and not line.startswith("#")]
        if lines and lines[0].startswith("docker "):
            continue  # runs inside an image the teacher builds
        commands += [line for line in lines if not line.startswith("[")]  # "[12/30] ..." is sample output
    return commands


def test_teaching_guide_commands_need_no_activated_environment():
    commands = _teaching_commands()
    assert len(commands) >= 7, commands
    for command in commands:
        assert command.startswith((".venv/bin/python -m ", ".venv/bin/jupyter ")), command
        for path in re.findall(r"\bnotebooks/\S+\.ipynb", command):
            assert (ROOT / path).is_file(), f"{command}: no {path}"


def _grading_commands():
    """The guide's grade lines, each parsed by the grader's own command line."""
    import shlex

    lines = [c for c in _teaching_commands() if " -m roofline_lib.grade " in c]
    return [(line, grade.build_parser().parse_args(shlex.split(line)[3:])) for line in lines]


def test_teaching_guide_grading_commands_parse_and_name_what_exists():
    """Every grade line of the guide is a valid command: its --master exists and asks chapter 02's questions,
    its --chapter is a chapter with questions. (How --allow-empty and an empty result behave is
    tests/test_grade.py::test_grading_a_chapter_no_submission_holds_warns_and_fails; one line runs for real below.)"""
    commands = _grading_commands()
    assert len(commands) >= 3, commands
    chapter_02 = grade.Assignment.from_chapter("02").question_ids
    for line, args in commands:
        assert args.submissions == "submissions/" and args.out == "grades.csv", line
        if args.master:
            assert grade.Assignment.from_notebook(ROOT / args.master).question_ids == chapter_02, line
        else:
            assert grade.Assignment.from_chapter(args.chapter).question_ids, line
    assert any(args.allow_empty for _, args in commands) and any(args.unsandboxed for _, args in commands)


def test_teaching_guide_grading_command_works_as_written(tmp_path):
    """The guide's `--chapter 02` line, run as written (the submissions folder and CSV moved to a scratch folder):
    the chapter's master, its exercises and what they need, scores full marks. (Its student version, graded 0 on
    every question, is graded above with every other chapter's:
    test_every_student_version_runs_cleanly_with_nothing_answered.)"""
    import shlex
    import subprocess
    import sys

    subs = tmp_path / "submissions"
    subs.mkdir()
    # the master's exercise cells and the cells they need (cell_deps), the rest emptied: the command grades it
    # as it grades any notebook, and strict nbval runs the whole chapter
    master = nbformat.read(ROOT / "notebooks" / "02_roofline_model.ipynb", as_version=4)
    code = {i: c.source for i, c in enumerate(master.cells) if c.cell_type == "code"}
    run = cell_deps.needed(code, {i for i, source in code.items() if "exercises.check(" in source})
    for i in set(code) - run:
        master.cells[i].source = ""
    nbformat.write(master, subs / "alice.ipynb")
    (command,) = [line for line, args in _grading_commands()
                  if args.chapter == "02" and not args.unsandboxed and not args.allow_empty]
    args = [str(subs) if a == "submissions/" else str(tmp_path / a) if a == "grades.csv" else a
            for a in shlex.split(command)] + ([] if SANDBOXED else ["--unsandboxed"])
    done = subprocess.run([sys.executable, *args[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = (tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 2 and rows[1].startswith("alice,1,1,1,1,1,1,6,6,"), rows


# ---------------------------------------------------------------- a Chinese exercise edition, graded for real

ZH_00 = ROOT / "notebooks" / "zh" / "student" / "00_start_here_student.ipynb"


@pytest.mark.skipif(not ZH_00.exists(), reason="no Chinese exercise edition of chapter 00")
def test_the_grader_grades_a_chinese_exercise_edition_in_chinese():
    """A Chinese exercise edition is graded against its English master like the English edition: one question
    answered with the master's own solution scores, the others are "not answered", said in Chinese (the other
    Chinese editions ask the same questions in the same cells: tests/test_i18n.py)."""
    from roofline_lib.core.language import set_language

    master_path = ROOT / "notebooks" / "00_start_here.ipynb"
    assignment = grade.Assignment.from_notebook(master_path)
    solved = "00.ridge_h200"
    (answer,) = [c.source for c in nbformat.read(master_path, as_version=4).cells
                 if c.cell_type == "code" and f'check("{solved}"' in c.source]
    submission = nbformat.read(ZH_00, as_version=4)
    (cell,) = [c for c in submission.cells if c.cell_type == "code" and f'check("{solved}"' in c.source]
    cell.source = answer
    settings = grade.Settings(cell_timeout=60, sandbox=SANDBOXED)
    set_language("zh")
    try:
        (g,) = asyncio.run(grade.grade_all({"zh": nbformat.writes(submission).encode()}, assignment, settings,
                                           workers=1))
    finally:
        set_language("en")
    others = [q for q in assignment.question_ids if q != solved]
    assert g.scores[solved] > 0 and all(g.scores[q] == 0 for q in others), g.scores
    assert all("尚未作答" in g.messages[q] for q in others), g.messages
    assert g.notes == [], g.notes
