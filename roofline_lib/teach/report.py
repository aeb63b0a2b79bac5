"""What the teacher reads: grades.csv, one feedback file per student, progress lines.

Every string passes through text.clean on its way out (a student chooses file
names and exception messages), and every CSV cell through text.csv_cell.
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
from pathlib import Path

from .text import clean, csv_cell


def _plain(message):
    """One feedback message without its symbol or the how-to of an unanswered question."""
    message = re.sub(r"^[✅❌⏳]\s*", "", message)
    message = re.sub(r"——请把 `\.\.\.` 换成你的答案.*$", "", message)  # the Chinese feedback's how-to
    return re.sub(r" yet — replace `\.\.\.` with your answer.*$", "", message)


def notes_cell(grade):
    """Notes about the whole submission (it did not run, a cell timed out ...), one per line: a cell of
    its own, so no separator has to be told apart from the text of a message."""
    return "\n".join(dict.fromkeys(clean(n, limit=300) for n in grade.notes))


def feedback_cell(grade, qid):
    """The feedback on one question, empty where it scored."""
    if grade.scores.get(qid) or qid not in grade.messages:
        return ""
    return clean(_plain(grade.messages[qid]), limit=500)


def rows(grades, question_ids):
    """The grades table as lists of cells, header first, every cell safe for a spreadsheet: a score
    column per question, total, max, notes, then a feedback column per question."""
    table = [["student", *question_ids, "total", "max", "notes", *(f"feedback {q}" for q in question_ids)]]
    for g in sorted(grades, key=lambda g: g.student):
        table.append([g.student, *(g.scores.get(q, 0) for q in question_ids), g.total, len(question_ids),
                      notes_cell(g), *(feedback_cell(g, q) for q in question_ids)])
    return [[csv_cell(cell, lines=True) if i == len(question_ids) + 3 else csv_cell(cell)
             for i, cell in enumerate(row)] for row in table]


def write_csv(grades, question_ids, out):
    """Write the grades table in one step: the file at ``out`` is either all of it or untouched.

    The table goes to a temporary file beside ``out`` that is renamed over it;
    on any failure the temporary file is removed and the error raised.
    """
    out = Path(out)
    table = rows(grades, question_ids)  # built (and checked) before anything is written
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(table)
        os.chmod(tmp, 0o666 & ~_umask())  # as an ordinary new file (and the feedback files) would be, not 0600
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_feedback(grades, question_ids, folder):
    """One text file per student: every question's feedback and every note."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for g in grades:
        lines = [f"{g.student}: {g.total}/{len(question_ids)}", ""]
        lines += [clean(g.messages.get(q, f"{q}: not graded")) for q in question_ids]
        lines += [""] + [f"note: {clean(n)}" for n in g.notes] if g.notes else []
        (folder / f"{g.student}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="replace")


def progress_line(done, total, grade, n_questions):
    """One line of progress for a graded submission: its place, its name, its score and time, its first note."""
    note = f" — {clean(grade.notes[0], limit=300)}" if grade.notes else ""
    return f"[{done}/{total}] {clean(grade.student)}.ipynb {grade.total}/{n_questions} ({grade.seconds:.1f} s){note}"


__all__ = ["feedback_cell", "notes_cell", "progress_line", "rows", "write_csv", "write_feedback"]
