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


@pytest.fixture(scope="module")
def chapter_grades():
    """Each chapter master and its student version, graded like submissions (two kernels at a time)."""
    subs = {}
    for master in CHAPTERS:
        subs[f"master-{master.stem}"] = master.read_bytes()
        subs[f"student-{master.stem}"] = student.student_text(master).encode()
    if not subs:
        return {}
    by_chapter = {m.stem: grade.Assignment.from_notebook(m) for m in CHAPTERS}
    grades = {}
    for stem, assignment in by_chapter.items():
        pair = {k: v for k, v in subs.items() if k.endswith(stem)}
        settings = grade.Settings(cell_timeout=60, sandbox=SANDBOXED)
        for g in asyncio.run(grade.grade_all(pair, assignment, settings)):
            grades[g.student] = (g, assignment)
    return grades


def _intended_error_notes(master_path):
    nb = nbformat.read(master_path, as_version=4)
    return {i for i, c in enumerate(nb.cells) if "raises-exception" in c.metadata.get("tags", [])}


@pytest.mark.parametrize("master", CHAPTERS, ids=[m.stem for m in CHAPTERS])
def test_every_chapter_master_passes_and_its_student_version_is_unanswered(master, chapter_grades):
    """EVERY CHAPTER: the master scores full marks; the student version runs cleanly with nothing answered."""
    full, assignment = chapter_grades[f"master-{master.stem}"]
    assert full.total == len(assignment.question_ids), full.messages
    blank, _ = chapter_grades[f"student-{master.stem}"]
    intended = {f"cell {i + 2} " for i in _intended_error_notes(master)}  # +1 for numbering, +1 for the note cell
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


def test_teaching_guide_grading_commands_work_as_written(tmp_path):
    """The guide's grade lines, run as written (the submissions folder and CSV moved to a scratch folder):
    a chapter's master scores full marks, its student version 0, and a chapter nobody answered exits 1."""
    import shlex
    import subprocess
    import sys

    subs = tmp_path / "submissions"
    subs.mkdir()
    shutil.copy(ROOT / "notebooks" / "02_roofline_model.ipynb", subs / "alice.ipynb")
    shutil.copy(ROOT / "notebooks" / "student" / "02_roofline_model_student.ipynb", subs / "bob.ipynb")
    grading = [c for c in _teaching_commands() if " -m roofline_lib.grade " in c]
    assert len(grading) >= 3, grading
    for command in grading:
        args = [str(subs) if a == "submissions/" else str(tmp_path / a) if a == "grades.csv" else a
                for a in shlex.split(command)] + ([] if SANDBOXED else ["--unsandboxed"])
        done = subprocess.run([sys.executable, *args[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600)
        chapter = args[args.index("--chapter") + 1] if "--chapter" in args else "02"
        if chapter == "02":
            assert done.returncode == 0, done.stdout + done.stderr
            rows = (tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines()
            assert rows[1].startswith("alice,1,1,1,1,1,1,6,6,") and rows[2].startswith("bob,0,0,0,0,0,0,0,6,"), rows
        else:  # the guide's --allow-empty example; without the flag the same run warns and fails
            assert "--allow-empty" in args and done.returncode == 0, done.stderr
            args.remove("--allow-empty")
            done = subprocess.run([sys.executable, *args[1:]], cwd=ROOT, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 1 and f"warning: no submission holds any question of chapter {chapter}" \
                in done.stdout + done.stderr
