"""Student versions of the chapter notebooks: solutions out, outputs stripped.

    python -m roofline_lib.student            # notebooks/NN_*.ipynb -> notebooks/student/NN_*_student.ipynb
    python -m roofline_lib.student --check    # exit 1 if a student version is stale or shows a solution

A chapter notebook is the exercise *master*: each exercise cell holds its
solution between two marker lines, followed by the self-check::

    # BEGIN SOLUTION
    answer = rl.get_accelerator("H200").ridge_point("bf16")
    # END SOLUTION
    rl.exercises.check("00.ridge_h200", answer)

In the student version the block becomes ``answer = ...  # your answer here``
(one such line per variable the block assigns), so running the cell makes the
check say "not answered yet" instead of raising. Everything else is kept, with
outputs and execution counts cleared.

The student file has no markers and no model answers, so instructions in the
master's markdown that speak of them ("replace the lines between `# BEGIN
SOLUTION` and `# END SOLUTION`", "the solution lines", "the model answer")
are rewritten into what the student sees (``STUDENT_WORDING``). A sentence
that still names them after that is refused, so a new wording cannot slip
into the student versions unnoticed: add its rewrite to ``STUDENT_WORDING``.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat

BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION[ \t]*$")
END = re.compile(r"^[ \t]*# END SOLUTION[ \t]*$")
PLACEHOLDER = "{indent}{name} = ...  # your answer here"
MASTER_GLOB = "[0-9][0-9]_*.ipynb"
NOTE_ID = "student-version-note"
STUDENT_SUFFIX = "_student"  # 05_llm_inference_student.ipynb: a tab that cannot be taken for its master's
NOTE = ("**Exercise edition.** The solutions are taken out and the outputs cleared: run the chapter from the "
        "top (*Run → Run All Cells*) and the figures and tables come back. In each exercise cell, replace "
        "`...` with your answer and run the cell: the check under it says whether the answer is right, and "
        "if not, what the slip probably was. The lecture edition, `notebooks/{master}`, shows the solutions: "
        "open it once you have tried.")


def student_name(master_name):
    """The student version's file name: ``05_llm_inference.ipynb`` -> ``05_llm_inference_student.ipynb``."""
    return f"{Path(master_name).stem}{STUDENT_SUFFIX}.ipynb"


def master_name(student_file_name):
    """The master's file name a student version's name comes from (the inverse of ``student_name``)."""
    return f"{Path(student_file_name).stem.removesuffix(STUDENT_SUFFIX)}.ipynb"


# Instructions in the masters' markdown that name what only the master has, and what the student version
# says instead. Matched with any whitespace (line breaks included) between words; first match wins per place.
_LINES = "each line that ends in `# your answer here`"
STUDENT_WORDING = [
    # "Replace the lines between `# BEGIN SOLUTION` and `# END SOLUTION` by your own work (start from `answer = ...`)"
    (r"Replace the lines between `# BEGIN SOLUTION` and `# END SOLUTION` by your own work "
     r"\(start from `answer = \.\.\.`\)",
     f"Replace the `...` in {_LINES} by your own work"),
    (r"the lines between `# BEGIN SOLUTION` and `# END SOLUTION` are a model answer\. "
     r"To try a question yourself first, work in the chapter's exercise edition \(`notebooks/student/`\), "
     r"where they are taken out\.",
     "the solutions are taken out: where one was, the cell has a line such as `answer = ...  # your answer "
     "here`. Replace the `...` by your own work and run the cell."),
    (r"Each cell's model answer sits between `# BEGIN SOLUTION` and `# END SOLUTION`; work it out yourself first\.",
     "In each exercise cell, replace the `...` on the line that ends in `# your answer here` by your answer and "
     "run the cell."),
    (r"Replace the solution lines with your own work", f"Replace the `...` in {_LINES} with your own work"),
    # the same instruction worded slightly differently
    (r"(?:the )?lines between `# BEGIN SOLUTION` and `# END SOLUTION`", f"the `...` in {_LINES}"),
]
# what the student version must not mention once rewritten
MASTER_ONLY = re.compile(r"BEGIN SOLUTION|END SOLUTION|solution (?:line|marker|block)s?\b|model answer", re.I)


def _flexible(pattern):
    """``pattern`` with each literal space matching any run of whitespace (a markdown line break)."""
    return re.compile(re.sub(r"(?<!\\) ", r"\\s+", pattern))


_WORDING = [(_flexible(pattern), text) for pattern, text in STUDENT_WORDING]


class SolutionMarkupError(ValueError):
    """A master's solution markers are unbalanced or a block assigns nothing."""


def assigned_names(code):
    """Names a block of code assigns at its own level, in order of first assignment.

    Loops and conditionals are looked into; functions, classes, lambdas and
    comprehensions are not (their names are not the notebook's variables).
    """
    names = []

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(code))
    return list(dict.fromkeys(names))


def _blocks(source, where):
    """(first line, last line) index pairs of each solution block, markers included."""
    lines = source.split("\n")
    blocks, start = [], None
    for i, line in enumerate(lines):
        if BEGIN.match(line):
            if start is not None:
                raise SolutionMarkupError(f"{where}: '# BEGIN SOLUTION' on line {i + 1} inside another block")
            start = i
        elif END.match(line):
            if start is None:
                raise SolutionMarkupError(f"{where}: '# END SOLUTION' on line {i + 1} without a BEGIN")
            blocks.append((start, i))
            start = None
        elif "SOLUTION" in line and line.lstrip().startswith("#") and re.search(r"(BEGIN|END)\s+SOLUTION", line):
            raise SolutionMarkupError(f"{where}: line {i + 1} looks like a solution marker but is not "
                                      "exactly '# BEGIN SOLUTION' or '# END SOLUTION'")
    if start is not None:
        raise SolutionMarkupError(f"{where}: '# BEGIN SOLUTION' on line {start + 1} is never closed")
    return lines, blocks


def solution_blocks(source, where="cell"):
    """The text of each solution block in ``source`` (markers excluded)."""
    lines, blocks = _blocks(source, where)
    return ["\n".join(lines[a + 1:b]) for a, b in blocks]


def strip_solutions(source, where="cell"):
    """``source`` with each solution block replaced by ``name = ...`` placeholders."""
    lines, blocks = _blocks(source, where)
    for a, b in reversed(blocks):
        indent = BEGIN.match(lines[a]).group("indent")
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[a + 1:b])
        try:
            names = assigned_names(body)
        except SyntaxError as e:
            raise SolutionMarkupError(f"{where}: the solution block on line {a + 1} is not valid Python: {e}") from e
        if not names:
            raise SolutionMarkupError(f"{where}: the solution block on line {a + 1} assigns no variable, so the "
                                      "student version would have nothing to fill in")
        lines[a:b + 1] = [PLACEHOLDER.format(indent=indent, name=name) for name in names]
    return "\n".join(lines)


def student_markdown(source, where="cell"):
    """Markdown ``source`` with instructions that name the solution markers rewritten for the student version."""
    for pattern, text in _WORDING:
        source = pattern.sub(lambda _m, text=text: text, source)
    left = MASTER_ONLY.search(source)
    if left:
        line = source[:left.start()].count("\n") + 1
        raise SolutionMarkupError(f"{where}: line {line} tells the learner about {left.group(0)!r}, which the "
                                  "student version does not have; reword it or add its rewrite to "
                                  "roofline_lib.teach.student.STUDENT_WORDING")
    return source


def student_version(master, name="notebook", note=NOTE, markdown=None):
    """A new notebook: ``master`` (read from the file ``name``) without solutions, outputs or execution counts.

    ``note`` opens it (``{master}`` is the master's file name) and ``markdown`` rewrites each markdown cell
    (``student_markdown`` unless given): the Chinese editions pass their own."""
    markdown = markdown or student_markdown
    nb = nbformat.from_dict(master)
    nb.metadata.pop("widgets", None)
    cells = [nbformat.v4.new_markdown_cell(note.format(master=Path(name).name), id=NOTE_ID)]
    for index, cell in enumerate(nb.cells):
        cell.setdefault("id", f"cell-{index}")
        cell.metadata.pop("execution", None)
        cell.metadata.pop("widgets", None)
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source, f"{name}, cell {index + 1}")
            cell.outputs = []
            cell.execution_count = None
        elif cell.cell_type == "markdown":
            cell.source = markdown(cell.source, f"{name}, cell {index + 1}")
        cells.append(cell)
    nb.cells = cells
    return nb


def _read(path):
    return nbformat.reads(Path(path).read_text(encoding="utf-8"), as_version=4)


def student_text(master_path):
    """The exact file contents of ``master_path``'s student version."""
    nb = student_version(_read(master_path), Path(master_path).name)
    return nbformat.writes(nb) + "\n"


def solution_leaks(master, student):
    """Lines of the master's solutions that show up in the student version.

    A line counts only if the master does not also have it outside its
    solution blocks (a solution may repeat a line the chapter already taught).
    Marker lines left in the student version count too.
    """
    taught, solution_lines = set(), set()
    for index, cell in enumerate(master.cells):
        lines, blocks = _blocks(cell.source, f"cell {index + 1}")
        inside = {i for a, b in blocks for i in range(a, b + 1)}
        for i, line in enumerate(lines):
            (solution_lines if i in inside and cell.cell_type == "code" else taught).add(line.strip())
    solution_lines = {s for s in solution_lines - taught if s and not s.startswith("#")}
    leaks = []
    for cell in student.cells:
        for line in cell.source.split("\n"):
            stripped = line.strip()
            # prose may name the markers; only a code cell can leak one
            marker = cell.cell_type == "code" and ("BEGIN SOLUTION" in line or "END SOLUTION" in line)
            if stripped in solution_lines or marker:
                leaks.append(stripped)
    return leaks


def _only_outputs_differ(current, expected):
    """Whether ``current`` is ``expected`` with outputs, execution counts or a kernel's language_info added."""
    try:
        nb = nbformat.reads(current, as_version=4)
    except Exception:  # not a notebook at all: out of date, not merely run
        return False
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    want = nbformat.reads(expected, as_version=4)
    nb.metadata.language_info = want.metadata.get("language_info", nb.metadata.get("language_info"))
    return nbformat.writes(nb) == nbformat.writes(want)


def masters(notebooks_dir):
    """The chapters' lecture editions (NN_*.ipynb) in ``notebooks_dir``, in order."""
    return sorted(Path(notebooks_dir).glob(MASTER_GLOB))


def sync(notebooks_dir="notebooks", out_dir=None, check=False):
    """Write (or with ``check``, only compare) every student version; return the problems found."""
    notebooks_dir = Path(notebooks_dir)
    out_dir = Path(out_dir) if out_dir else notebooks_dir / "student"
    problems = []
    expected = {}
    for master in masters(notebooks_dir):
        try:
            expected[student_name(master.name)] = (master, student_text(master))
        except (SolutionMarkupError, nbformat.ValidationError, ValueError) as e:
            problems.append(f"{master}: {e}")
    existing = {p.name: p for p in out_dir.glob(MASTER_GLOB)} if out_dir.is_dir() else {}
    for name, (master, text) in expected.items():
        target = out_dir / name
        current = existing[name].read_text(encoding="utf-8") if name in existing else None
        if current != text:
            if check:
                state = ("missing" if current is None else "was run and saved (its outputs are stored, nothing "
                         "else differs)" if _only_outputs_differ(current, text) else "out of date")
                problems.append(f"{target}: {state}; run `python -m roofline_lib.student`")
            else:
                out_dir.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                print(f"wrote {target}")
        if check and current is not None:
            leaks = solution_leaks(_read(master), nbformat.reads(current, as_version=4))
            if leaks:
                problems.append(f"{target}: shows solution text: {leaks[0]!r}")
    for name in sorted(set(existing) - set(expected)):
        if check:
            problems.append(f"{existing[name]}: no master {notebooks_dir / master_name(name)} for it")
        else:
            existing[name].unlink()
            print(f"removed {existing[name]} (its master is gone)")
    return problems


def main(argv=None):
    """``python -m roofline_lib.student``: write (or with --check, verify) the exercise edition of every chapter."""
    parser = argparse.ArgumentParser(prog="python -m roofline_lib.student", description=__doc__.split("\n")[0])
    parser.add_argument("--notebooks", default="notebooks", help="folder of the NN_*.ipynb masters")
    parser.add_argument("--out", default=None, help="where the student versions go (default: NOTEBOOKS/student)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any version is stale")
    args = parser.parse_args(argv)
    problems = sync(args.notebooks, args.out, check=args.check)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        count = len(masters(args.notebooks))
        print(f"{count} student version{'s' if count != 1 else ''} {'in sync' if args.check else 'up to date'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "assigned_names", "BEGIN", "END", "main", "MASTER_GLOB", "MASTER_ONLY", "master_name", "masters", "NOTE", "NOTE_ID",
    "PLACEHOLDER", "solution_blocks", "solution_leaks", "SolutionMarkupError", "strip_solutions",
    "student_markdown", "student_name", "STUDENT_SUFFIX", "student_text", "student_version", "STUDENT_WORDING",
    "sync",
]
