"""The grader's side of one submission's run: start a worker, follow its reports, restart it.

The worker (worker.py) is a separate process, in a sandbox of its own on Linux
(sandbox.py: namespaces, read-only views, limits), with a memory limit and a
wall-clock limit, so nothing a submission does to it can stall or crash the
grader, or delay a neighbour's kernel. While it runs, the grader watches the
sandbox's processes as a whole (memory, tasks, CPU cores) and stops one that
takes more than its share. If the worker stops reporting (killed by its own
kernel, out of memory, past its time, stopped for its share), the cell it was
busy with is marked and a new worker runs the notebook again without it.

Its reports are untrusted: only the answers of the checks that count (the
last per graded question) are kept, within a byte budget. When a worker ends,
the grader kills its own child (bwrap, or the worker unsandboxed) and every
process below it; it never signals a pid a report names.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys
import time

from . import sandbox
from .kernel import STARTUP_TIMEOUT, kernel_env, trim_reply
from .worker import MAX_CONTEXT, MAX_RESTARTS

PARSE_TIMEOUT = 60.0  # s: a worker to read a notebook and find its checks
PARSE_CELL_TIMEOUT = 10.0  # s: one cell of it
WORKER_MEMORY_MB = 2048  # soft address-space limit of a worker (its kernel has its own)
MAX_WORKERS = 4  # worker starts per submission: the first and one per cell that stopped one
EVENT_BYTES = 4_000_000  # the longest report line accepted from a worker
REPORT_BYTES = 16_000_000  # all reports of one worker together
MAX_NOTES = 30  # notes kept from one worker
TEXT_CHARS = 300  # a note's or a problem's length


@dataclasses.dataclass
class Run:
    """What happened to one submission: plain data, built from a worker's reports."""

    checks: list = dataclasses.field(default_factory=list)  # (question id, cell, context keywords)
    cell_problems: dict = dataclasses.field(default_factory=dict)  # cell -> why it gave nothing
    replies: dict = dataclasses.field(default_factory=dict)  # expression name ("a3", "c3_batch") -> kernel reply
    notes: list = dataclasses.field(default_factory=list)
    not_run: dict = dataclasses.field(default_factory=dict)  # cell -> why it never ran
    failure: str | None = None  # why the whole submission scores 0 (not a notebook...)


@dataclasses.dataclass
class _Attempt:
    run: Run
    prepared: bool = False
    finished: bool = False
    parsing: int | None = None  # the cell being parsed
    busy: int | None = None  # the cell being run or read
    stopped: str = ""  # why the worker stopped reporting
    questions: tuple = ()  # the graded question ids
    names: frozenset = frozenset()  # the reply names that count, once prepared
    cells: frozenset = frozenset()  # the cells of the checks that count


def _worker_limits(megabytes):
    def apply():
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        # Soft only: the worker's kernel sets its own limit, which may be higher.
        resource.setrlimit(resource.RLIMIT_AS, (int(megabytes) * 1024 * 1024, hard))

    return apply if megabytes else None


def _text(value):
    return str(value)[:TEXT_CHARS]


def _prepared(attempt, event):
    """The checks that count, as the worker chose them: at most one per graded question, a bounded context."""
    checks = [(str(q), int(c), [str(k) for k in keys]) for q, c, keys in event["checks"]]
    ids = [q for q, _, _ in checks]
    if len(set(ids)) != len(ids) or not set(ids) <= set(attempt.questions) or any(
            len(keys) > MAX_CONTEXT or any(len(k) > 100 for k in keys) for _, _, keys in checks):
        raise ValueError("checks that do not count")
    run = attempt.run
    run.checks = checks
    attempt.names = frozenset(f"a{n}" for n in range(len(checks))) | frozenset(
        f"c{n}_{k}" for n, (_, _, keys) in enumerate(checks) for k in keys)
    attempt.cells = frozenset(c for _, c, _ in checks)
    run.cell_problems.update({int(c): _text(t) for c, t in event["unparsed"].items() if int(c) in attempt.cells})


def _record(attempt, event):
    """Fold one report into the attempt; False when the report is not one a worker sends."""
    run, kind = attempt.run, event.get("event")
    if kind == "parsing":
        attempt.parsing = int(event["cell"])
    elif kind == "prepared" and not attempt.prepared:
        attempt.prepared, attempt.parsing = True, None
        _prepared(attempt, event)
    elif kind == "busy":
        attempt.busy = int(event["cell"])
    elif kind == "idle":
        attempt.busy = None
    elif kind == "problem":
        if int(event["cell"]) in attempt.cells or len(run.cell_problems) < 100:
            run.cell_problems[int(event["cell"])] = _text(event["text"])
    elif kind == "answers":
        run.replies.update({str(k): trim_reply(v) for k, v in event["replies"].items()
                            if str(k) in attempt.names and isinstance(v, dict)})
    elif kind == "note":
        if len(run.notes) < MAX_NOTES:
            run.notes.append(_text(event["text"]))
    elif kind == "not_run":
        run.not_run.update({int(c): _text(event["reason"]) for c in event["cells"] if int(c) in attempt.cells})
    elif kind == "not_a_notebook":
        run.failure, attempt.finished = _text(event["reason"]), True
    elif kind == "done":
        attempt.finished, attempt.busy = True, None
    elif kind != "kernel":  # a kernel's pid: told, and never used (the grader signals only its own child)
        return False
    return True


def _why_stopped(returncode):
    if returncode is not None and 128 < returncode < 128 + 65:
        returncode = 128 - returncode  # bwrap's status for a worker killed by a signal
    if returncode is not None and returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}" if returncode else "stopped reporting"


def _limits(settings):
    memory = settings.memory_mb + settings.worker_memory_mb if settings.memory_mb else 0
    return sandbox.Limits(memory_mb=memory, cpu_seconds=int(settings.notebook_timeout) + 60,
                          cpu_cores=settings.cpu_cores)


async def _watch(proc, attempt, limits):
    """Stop the worker's processes when, all together, they take more than a sandbox's share."""
    history, look = [], sandbox.Tracker()
    while proc.returncode is None:
        await asyncio.sleep(sandbox.SAMPLE_SECONDS)
        try:
            now = look(proc.pid)
            why = limits.over(now, history)
        except Exception as e:  # noqa: BLE001 - an unwatched sandbox is stopped, not left to run (fail closed)
            now, why = None, f"its processes could not be watched ({type(e).__name__})"
        if why:
            attempt.stopped = f"stopped by the grader: {why}"
            sandbox.kill_tree(proc.pid)
            return
        keep = int(max(sandbox.CPU_WINDOW, sandbox.SPAWN_WINDOW) / sandbox.SAMPLE_SECONDS) + 10
        history = [*history[-keep:], now]


async def _attempt(data, job, settings, scratch):
    """One worker's run of the notebook: an _Attempt, finished or not."""
    attempt = _Attempt(Run(), questions=tuple(job["questions"]))
    limits = _limits(settings)
    argv = [sys.executable, "-m", "roofline_lib.teach.worker"]
    if settings.sandbox:
        argv, env = sandbox.command(argv, limits), {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        job = {**job, "scratch": sandbox.SCRATCH, "limits": dataclasses.asdict(limits)}
    else:
        env = kernel_env(private=scratch)
        job = {**job, "scratch": str(scratch / "work"), "limits": None}
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True, env=env, preexec_fn=_worker_limits(settings.worker_memory_mb), limit=EVENT_BYTES)
    watch = asyncio.ensure_future(_watch(proc, attempt, limits)) if os.path.isdir("/proc") else None
    received = 0
    try:
        try:
            proc.stdin.write(json.dumps(job).encode() + b"\n")
            proc.stdin.write(data)
            await proc.stdin.drain()
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the worker died at once; its exit status says why
        start = time.monotonic()
        # Past these, the worker is stopped: its own limits (cells, notebook, kernel starts) come first.
        run_limit = job["seconds"] + 2 * STARTUP_TIMEOUT * (MAX_RESTARTS + 1) + 30
        while not attempt.finished:
            limit = run_limit if attempt.prepared else settings.parse_timeout
            try:
                line = await asyncio.wait_for(proc.stdout.readline(), max(0.01, start + limit - time.monotonic()))
            except TimeoutError:
                what = "running the notebook" if attempt.prepared else "reading the notebook"
                attempt.stopped = f"{what} took more than {limit:.0f} s"
                break
            except ValueError:  # a report line over EVENT_BYTES
                attempt.stopped = "sent an over-long report"
                break
            if not line:
                break
            received += len(line)
            if received > REPORT_BYTES:
                attempt.stopped = f"sent more than {REPORT_BYTES // 10**6} MB of reports"
                break
            try:
                event = json.loads(line)
                if not _record(attempt, event):
                    raise ValueError(event.get("event"))
            except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
                attempt.stopped = "sent a report that is not in the expected form"
                break
    finally:
        if watch is not None:
            watch.cancel()
        sandbox.kill_tree(proc.pid)  # the grader's own child and every process below it
        await proc.wait()
    if not attempt.finished and not attempt.stopped:
        attempt.stopped = _why_stopped(proc.returncode)
    return attempt


async def run_submission(data, settings, scratch, questions):
    """Run one notebook's bytes in workers until one finishes; return the Run of the last.

    ``questions``: the graded question ids (only their last checks are read back); ``scratch``: a folder of
    the grader's for a worker run without a sandbox (a sandbox has its own)."""
    skip, skip_parse, notes = {}, {}, []
    deadline = time.monotonic() + settings.notebook_timeout
    attempt = None
    for _ in range(MAX_WORKERS):
        job = {"scratch": str(scratch), "cell_timeout": settings.cell_timeout,
               "notebook_timeout": settings.notebook_timeout, "seconds": max(0.1, deadline - time.monotonic()),
               "memory_mb": settings.memory_mb, "parse_cell_seconds": settings.parse_cell_timeout,
               "skip": sorted(skip), "skip_parse": {str(c): why for c, why in skip_parse.items()},
               "questions": list(questions)}
        attempt = await _attempt(data, job, settings, scratch)
        if attempt.finished:
            break
        why = attempt.stopped
        if not attempt.prepared and attempt.parsing is not None:
            skip_parse[attempt.parsing] = f"could not be read by the grader ({why})"
        elif not attempt.prepared:
            attempt.run.failure = f"the notebook could not be read ({why})"
            break
        elif attempt.busy is not None:
            skip[attempt.busy] = f"cell {attempt.busy + 1} stopped the grader's worker ({why}); skipped it"
            notes.append(skip[attempt.busy])
        else:
            notes.append(f"the grader's worker stopped between cells ({why})")
            break
        if deadline - time.monotonic() <= 0:
            break
    run = attempt.run
    if not attempt.finished and run.failure is None:
        if attempt.prepared:
            reason = f"not run: the grader's worker stopped ({attempt.stopped})"
            unread = {c for n, (_, c, _) in enumerate(run.checks) if f"a{n}" not in run.replies}
            run.not_run.update({c: reason for c in unread - set(run.cell_problems) - set(skip)})
        else:
            run.failure = run.failure or f"the notebook could not be read ({attempt.stopped})"
    for cell, why in skip.items():
        run.cell_problems.setdefault(cell, why)
    run.notes[:0] = notes
    return run


__all__ = ["EVENT_BYTES", "MAX_WORKERS", "PARSE_CELL_TIMEOUT", "PARSE_TIMEOUT", "REPORT_BYTES", "Run",
           "WORKER_MEMORY_MB"]
