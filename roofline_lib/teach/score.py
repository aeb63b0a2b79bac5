"""The questions being graded, their expected values, and one submission's marks.

Everything here runs in the grader's own process, on plain data: the expected
values are computed by the library before any submission runs, and an answer
is judged from the value the kernel replied, never from what the notebook says.
"""

from __future__ import annotations

import dataclasses
import math

from .. import exercises
from ..exercises.messages import say
from .kernel import Unreadable, parse_capture


@dataclasses.dataclass
class Grade:
    """One submission's marks: a score and a line of feedback per question, notes on how the run went, its seconds, and
    the questions it holds a check for."""

    student: str
    scores: dict  # question id -> 0 or 1
    messages: dict  # question id -> one line of feedback
    notes: list
    seconds: float = 0.0
    found: tuple = ()  # the questions the submission holds a check() for (none known if it did not run)

    @property
    def total(self):
        """Questions answered right."""
        return sum(self.scores.values())


def _plain(value):
    """A context value as a builtin (a stand-in float loses the type and repr the student gave it)."""
    if isinstance(value, (bool, str)):
        return type(value)(value)
    if isinstance(value, float):
        return float(value)
    raise TypeError(f"a measurement passed to check must be a number, not {type(value).__name__}")


class Assignment:
    """The questions being graded, with expected values computed before any submission runs."""

    def __init__(self, question_ids):
        self.question_ids = list(dict.fromkeys(question_ids))
        if not self.question_ids:
            raise ValueError("the assignment has no questions: its notebook calls rl.exercises.check nowhere")
        self.questions = {qid: exercises.get_question(qid) for qid in self.question_ids}
        self._expected = {}
        for qid, q in self.questions.items():
            try:
                self._expected[(qid, ())] = q.expected()
            except TypeError:
                pass  # this question needs context (keyword arguments of check); computed when seen

    @classmethod
    def from_notebook(cls, path):
        """The questions a teacher's notebook grades (its check() calls), with their expected values."""
        from pathlib import Path

        from .discovery import find_checks, load_cells

        # The teacher's own notebook: parsed here, without the limits a submission gets.
        cells = load_cells(Path(path).read_bytes())
        return cls(call.question_id for call in find_checks(cells))

    @classmethod
    def from_chapter(cls, chapter):
        """The chapter's questions, in the order its master notebook checks them (the CSV's columns follow the
        page a student worked through); the library's order where the notebooks are not beside the package."""
        try:
            number = int(chapter)
        except ValueError:
            raise ValueError(f"--chapter takes a chapter number such as 5 or 05, not {chapter!r}") from None
        ids = [q.id for q in exercises.questions(f"{number:02d}.")]
        ids = _in_notebook_order(number, ids)
        if not ids:
            have = sorted({q.id.split(".")[0] for q in exercises.questions()})
            raise ValueError(f"chapter {number:02d} has no questions; the chapters with questions are "
                             f"{', '.join(have)}")
        return cls(ids)

    def expected(self, qid, context):
        """Expected value for ``qid`` given a measured context, cached by value (never by a repr)."""
        context = {k: _plain(v) for k, v in context.items()}
        # The type tells 1 from 1.0 from True; a float's own repr is exact and not the student's.
        key = (qid, tuple(sorted((k, type(v).__name__, repr(v)) for k, v in context.items())))
        if any(isinstance(v, float) and math.isnan(v) for v in context.values()):
            return self.questions[qid].expected(**context)  # NaN is never equal to itself: no cache
        if key not in self._expected:
            self._expected[key] = self.questions[qid].expected(**context)
        return self._expected[key]

    def score(self, student, run):
        """The Grade of one Run (see run.py)."""
        if run.failure:
            return Grade(student, dict.fromkeys(self.question_ids, 0), {}, [run.failure, *run.notes])
        scores, messages = {}, {}
        present = tuple(q for q in self.question_ids if any(c[0] == q for c in run.checks))
        for qid in self.question_ids:
            scores[qid] = 0
            found = [n for n, (q, _, _) in enumerate(run.checks) if q == qid]
            if not found:
                messages[qid] = say("not_found", qid=qid)
                continue
            n = found[-1]  # the last attempt counts
            _, cell, keys = run.checks[n]
            if cell in run.not_run:
                messages[qid] = f"{qid}: {run.not_run[cell]}"
            elif cell in run.cell_problems:
                messages[qid] = f"{qid}: {run.cell_problems[cell]}"
            elif f"a{n}" not in run.replies:
                messages[qid] = say("not_read", qid=qid)
            else:
                try:
                    value = parse_capture(run.replies[f"a{n}"])
                    context = {k: parse_capture(run.replies.get(f"c{n}_{k}", {})) for k in keys}
                except Unreadable as e:
                    messages[qid] = f"{qid}: the answer could not be read ({e})"
                    continue
                try:
                    # As check() does: an unanswered question needs no expected value.
                    expected = None if value is ... else self.expected(qid, context)
                    feedback = exercises.judge(self.questions[qid], value, expected)
                except (TypeError, ValueError, ArithmeticError) as e:
                    messages[qid] = f"{qid}: the check's context is not usable ({e})"[:300]
                    continue
                scores[qid] = int(feedback.correct)
                messages[qid] = feedback.message
        return Grade(student, scores, messages, list(run.notes), found=present)


__all__ = ["Assignment", "Grade"]


def _in_notebook_order(number, ids):
    """``ids`` ordered as notebooks/NN_*.ipynb checks them, those it does not check last (library order)."""
    from pathlib import Path

    from .discovery import find_checks, load_cells

    masters = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob(f"{number:02d}_*.ipynb"))
    if not masters:
        return ids
    order = list(dict.fromkeys(c.question_id for c in find_checks(load_cells(masters[0].read_bytes()))))
    rank = {qid: i for i, qid in enumerate(order)}
    return sorted(ids, key=lambda q: (rank.get(q, len(order)), ids.index(q)))
