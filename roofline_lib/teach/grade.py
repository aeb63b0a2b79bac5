"""Grade a folder of submitted exercise notebooks.

    python -m roofline_lib.grade SUBMISSIONS_DIR --master notebooks/student/02_topic.ipynb --out grades.csv

Each ``*.ipynb`` in SUBMISSIONS_DIR is one student (the file name without
``.ipynb``). Every submission runs in a worker process of its own (worker.py),
in a sandbox of its own on Linux (sandbox.py), which parses it, starts a fresh
kernel in a scratch folder holding only a copy of it, and runs it cell by cell
with a time limit per cell and per notebook. Where no sandbox can be had, the
grader says what is unprotected and stops, unless --unsandboxed is given.
After each cell that calls ``rl.exercises.check(...)`` the kernel is asked for
the *value* of the answer expression, and that value is judged here, in the
grader's own process, against expected values computed before any submission
ran (score.py). Nothing the kernel says about correctness is used.

A cell that raises, runs past its limit, kills the kernel or kills the worker
scores zero for the questions it holds, with a note; the rest run. Every entry
in the folder gets a row or a mention. The batch always finishes, and the
grades file is written in one step (report.py).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from ..core.language import set_language
from . import collect, run
from . import sandbox as sandboxing
from .report import progress_line, write_csv, write_feedback
from .score import Assignment, Grade
from .text import clean

__all__ = ["Assignment", "Grade", "Settings", "grade_all", "grade_one", "main", "write_csv", "write_feedback"]

CELL_TIMEOUT = 30.0  # s: one cell
NOTEBOOK_TIMEOUT = 120.0  # s: all cells of one submission, replays included
MEMORY_MB = 4096  # address-space limit of each kernel; 0 = none
SCRATCH_PREFIX = "roofline-grade-"


@dataclasses.dataclass(frozen=True)
class Settings:
    """The grader's limits: per-cell and per-notebook time, memory, the parse step's limits, the sandbox and the CPU a
    submission may use. Each checked when made."""

    cell_timeout: float = CELL_TIMEOUT
    notebook_timeout: float = NOTEBOOK_TIMEOUT
    memory_mb: int = MEMORY_MB
    parse_timeout: float = run.PARSE_TIMEOUT
    parse_cell_timeout: float = run.PARSE_CELL_TIMEOUT
    worker_memory_mb: int = run.WORKER_MEMORY_MB
    sandbox: bool = True  # each worker in a sandbox of its own (sandbox.py); False: as this account, exposed
    cpu_cores: float = sandboxing.CPU_CORES  # the CPU one submission may keep busy, averaged over a few seconds

    def __post_init__(self):
        for name in ("cell_timeout", "notebook_timeout", "parse_timeout", "parse_cell_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {getattr(self, name)!r}")
        for name in ("memory_mb", "worker_memory_mb"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be a number of megabytes (0 for no limit), not {getattr(self, name)!r}")
        if not self.cpu_cores >= 0:
            raise ValueError(f"cpu_cores must be a number of cores (0 for no limit), not {self.cpu_cores!r}")


def _count(n, noun):
    """'1 submission', '30 submissions'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _zero(assignment, student, note, seconds=0.0):
    return Grade(student, dict.fromkeys(assignment.question_ids, 0), {}, [note], seconds)


def _sweep_scratch():
    """Remove scratch folders left by a grader that was killed (their pid is gone): they hold copies."""
    for path in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        try:
            pid = int(path.name[len(SCRATCH_PREFIX):].split("-")[0])
            if path.stat().st_uid != os.getuid() or pid == os.getpid():
                continue
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (ValueError, OSError):
            continue


async def grade_one(name, data, assignment, settings=Settings()):
    """Grade one submission's bytes. Never raises: a failure becomes zeros and a note."""
    start = time.monotonic()
    # A sandbox has a scratch folder of its own, thrown away with it; without one, the grader makes one.
    scratch = None if settings.sandbox else Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    try:
        if settings.sandbox and sandboxing.problem():
            raise RuntimeError(f"no sandbox: {sandboxing.problem()}")
        run_ = await run.run_submission(data, settings, scratch, assignment.question_ids)
        grade = assignment.score(name, run_)
    except Exception as e:  # noqa: BLE001 - one broken submission must not stop the batch
        grade = _zero(assignment, name, f"grading failed ({type(e).__name__}: {e})"[:300])
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    grade.seconds = time.monotonic() - start
    return grade


async def grade_all(submissions, assignment, settings=Settings(), workers=2, progress=None, problems=None):
    """Grade ``submissions`` ({student: bytes}) with ``workers`` at a time; return Grades.

    ``problems`` ({student: why}) are entries that could not be read: they get a row of zeros too.
    """
    problems = dict(problems or {})
    semaphore = asyncio.Semaphore(max(1, workers))
    total = len(submissions) + len(problems)
    finished = 0

    def report(grade):
        nonlocal finished
        finished += 1
        if progress:
            progress(finished, total, grade, len(assignment.question_ids))
        return grade

    async def one(name):
        async with semaphore:
            return report(await grade_one(name, submissions[name], assignment, settings))

    early = [report(_zero(assignment, name, why)) for name, why in sorted(problems.items())]
    return early + list(await asyncio.gather(*(one(name) for name in sorted(submissions))))


def _output_path(parser, out):
    out = Path(out)
    if out.is_dir():
        parser.error(f"--out {out} is a folder; give a file name such as {out / 'grades.csv'}")
    if not out.parent.is_dir():
        parser.error(f"--out {out}: the folder {out.parent} does not exist")
    return out


def _put_aside(out, progress):
    """A previous grades file must not look current if this run dies: it becomes OUT.previous."""
    if out.exists():
        aside = out.with_name(out.name + ".previous")
        os.replace(out, aside)
        progress(f"moved the previous {out.name} to {aside.name}")


def _print(line):
    print(line, file=sys.stderr, flush=True)


def _stop_on_sigterm(*_):
    raise KeyboardInterrupt  # so the cleanup in `finally` blocks runs (scratch folders, workers)


def build_parser():
    """The command line of ``python -m roofline_lib.grade`` (the teacher's guide's lines parse with it)."""
    parser = argparse.ArgumentParser(prog="python -m roofline_lib.grade",
                                     description="Grade a folder of submitted exercise notebooks.")
    parser.add_argument("submissions", help="folder of submitted notebooks, one STUDENT.ipynb per student")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--master", help="the notebook handed out (master or student version): its check() "
                                        "calls say which questions are graded")
    which.add_argument("--chapter", help="grade every question of this chapter number instead")
    parser.add_argument("--allow-empty", action="store_true",
                        help="exit 0 even if no submission holds any graded question (by default that is "
                             "taken for a wrong --chapter or --master and exits 1)")
    parser.add_argument("--out", default="grades.csv", help="CSV to write (default: grades.csv)")
    parser.add_argument("--feedback", metavar="DIR", help="also write DIR/STUDENT.txt with all feedback")
    parser.add_argument("--workers", type=int, default=2, help="submissions at a time (default: 2)")
    parser.add_argument("--cell-timeout", type=float, default=CELL_TIMEOUT, help="seconds per cell (default: 30)")
    parser.add_argument("--notebook-timeout", type=float, default=NOTEBOOK_TIMEOUT,
                        help="seconds per submission, all cells (default: 120)")
    parser.add_argument("--memory-mb", type=int, default=MEMORY_MB,
                        help="address-space limit per kernel in MB, 0 for none (default: 4096)")
    parser.add_argument("--parse-timeout", type=float, default=run.PARSE_TIMEOUT,
                        help="seconds to read one submission and find its checks (default: 60)")
    parser.add_argument("--parse-cell-timeout", type=float, default=run.PARSE_CELL_TIMEOUT,
                        help="seconds to read one cell; a slower cell loses its questions (default: 10)")
    parser.add_argument("--worker-memory-mb", type=int, default=run.WORKER_MEMORY_MB,
                        help="address-space limit of the process that runs each submission, 0 for none "
                             "(default: 2048)")
    parser.add_argument("--lang", default="en", help="the language of the feedback: en (default) or zh (中文)")
    parser.add_argument("--unsandboxed", action="store_true",
                        help="grade even where no sandbox can be had (not Linux, no bwrap, no user namespaces): "
                             "the submissions' code then runs with this account's rights")
    return parser


def main(argv=None, progress=_print):
    """``python -m roofline_lib.grade``: grade a folder of submissions against a master or a chapter; writes grades.csv
    and the feedback files."""
    parser = build_parser()
    args = parser.parse_args(argv)

    folder = Path(args.submissions)
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder; give the folder that holds the STUDENT.ipynb files")
    if args.workers < 1:
        parser.error(f"--workers must be 1 or more, not {args.workers}")
    why = "--unsandboxed was given" if args.unsandboxed else sandboxing.problem()
    if why:
        progress(f"{'warning' if args.unsandboxed else 'error'}: no sandbox ({why}); without one, "
                 + sandboxing.UNPROTECTED[0])
        for line in sandboxing.UNPROTECTED[1:]:
            progress(line)
        if not args.unsandboxed:
            progress("error: refusing to grade without a sandbox; pass --unsandboxed to grade anyway "
                     "(only for submissions you trust), or run the grader in a container (docs/teaching.md)")
            return 2
    try:
        set_language(args.lang)  # the feedback is judged in this process, so it speaks this language
        settings = Settings(args.cell_timeout, args.notebook_timeout, args.memory_mb, args.parse_timeout,
                            args.parse_cell_timeout, args.worker_memory_mb, sandbox=not why)
        assignment = Assignment.from_notebook(args.master) if args.master else Assignment.from_chapter(args.chapter)
        found, ignored = collect.submissions(folder)
    except ValueError as e:
        parser.error(str(e))
    out = _output_path(parser, args.out)
    if ignored:
        progress(f"ignored (not .ipynb): {', '.join(clean(n) for n in ignored)}")
    if not found:
        parser.error(f"no .ipynb files in {folder}")
    readable = {s.student: s.data for s in found if s.data is not None}
    unreadable = {s.student: s.problem for s in found if s.data is None}
    try:
        previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    except ValueError:  # not the main thread: leave signals to the caller
        previous = None
    try:
        _sweep_scratch()
        _put_aside(out, progress)
        progress(f"grading {_count(len(found), 'submission')} on {_count(len(assignment.question_ids), 'question')}, "
                 f"{args.workers} at a time (cell limit {settings.cell_timeout:g} s, notebook limit "
                 f"{settings.notebook_timeout:g} s)")
        start = time.monotonic()
        grades = asyncio.run(grade_all(readable, assignment, settings, args.workers,
                                       lambda *a: progress(progress_line(*a)), unreadable))
        write_csv(grades, assignment.question_ids, out)
        if args.feedback:
            write_feedback(grades, assignment.question_ids, args.feedback)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    mean = sum(g.total for g in grades) / len(grades)
    progress(f"graded {_count(len(grades), 'submission')} in {time.monotonic() - start:.1f} s; mean "
             f"{mean:.2f}/{len(assignment.question_ids)}; wrote {clean(out)}")
    if not any(g.found for g in grades):
        which = f"chapter {args.chapter}" if args.chapter else f"the notebook {clean(args.master)}"
        ids = ", ".join(assignment.question_ids[:5]) + (" ..." if len(assignment.question_ids) > 5 else "")
        progress(f"warning: no submission holds any question of {which} ({ids}): every score is 0. "
                 f"Is --chapter/--master the assignment these notebooks are for?"
                 + ("" if args.allow_empty else " (exit status 1; pass --allow-empty to accept this)"))
        return 0 if args.allow_empty else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
