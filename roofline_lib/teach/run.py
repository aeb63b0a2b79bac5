"""The grader's side of one submission's run: start a worker, follow its reports, restart it.

The worker (worker.py) is a separate process, in a session of its own, with a
memory limit and a wall-clock limit, so nothing a submission does to it can
stall or crash the grader, or delay a neighbour's kernel. If the worker stops
reporting (killed by its own kernel, out of memory, past its time), the cell it
was busy with is marked and a new worker runs the notebook again without it.
When a worker ends, its process group and its kernels' are killed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import sys
import time

from .kernel import STARTUP_TIMEOUT, kernel_env, kill_group
from .worker import MAX_RESTARTS

PARSE_TIMEOUT = 60.0  # s: a worker to read a notebook and find its checks
PARSE_CELL_TIMEOUT = 10.0  # s: one cell of it
WORKER_MEMORY_MB = 2048  # soft address-space limit of a worker (its kernel has its own)
MAX_WORKERS = 4  # worker starts per submission: the first and one per cell that stopped one
EVENT_BYTES = 64_000_000  # the longest report line accepted from a worker


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


def _worker_limits(megabytes):
    def apply():
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        # Soft only: the worker's kernel sets its own limit, which may be higher.
        resource.setrlimit(resource.RLIMIT_AS, (int(megabytes) * 1024 * 1024, hard))

    return apply if megabytes else None


def _record(attempt, event):
    """Fold one report into the attempt; False when the report is not one a worker sends."""
    run, kind = attempt.run, event.get("event")
    if kind == "parsing":
        attempt.parsing = int(event["cell"])
    elif kind == "prepared":
        attempt.prepared, attempt.parsing = True, None
        run.checks = [(str(q), int(c), [str(k) for k in keys]) for q, c, keys in event["checks"]]
        run.cell_problems.update({int(c): str(t) for c, t in event["unparsed"].items()})
    elif kind == "busy":
        attempt.busy = int(event["cell"])
    elif kind == "idle":
        attempt.busy = None
    elif kind == "problem":
        run.cell_problems[int(event["cell"])] = str(event["text"])
    elif kind == "answers":
        run.replies.update({str(k): v for k, v in event["replies"].items() if isinstance(v, dict)})
    elif kind == "note":
        run.notes.append(str(event["text"]))
    elif kind == "not_run":
        run.not_run.update({int(c): str(event["reason"]) for c in event["cells"]})
    elif kind == "not_a_notebook":
        run.failure, attempt.finished = str(event["reason"]), True
    elif kind == "done":
        attempt.finished, attempt.busy = True, None
    elif kind != "kernel":
        return False
    return True


def _why_stopped(returncode):
    if returncode is not None and returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}" if returncode else "stopped reporting"


async def _attempt(data, job, settings):
    """One worker's run of the notebook: an _Attempt, finished or not."""
    attempt = _Attempt(Run())
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "roofline_lib.teach.worker", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
        env=kernel_env(), preexec_fn=_worker_limits(settings.worker_memory_mb), limit=EVENT_BYTES)
    kernels = []
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
            except asyncio.TimeoutError:
                what = "running the notebook" if attempt.prepared else "reading the notebook"
                attempt.stopped = f"{what} took more than {limit:.0f} s"
                break
            except ValueError:  # a report line over EVENT_BYTES
                attempt.stopped = "sent an over-long report"
                break
            if not line:
                break
            try:
                event = json.loads(line)
                if event.get("event") == "kernel" and event.get("pid"):
                    kernels.append(int(event["pid"]))
                if not _record(attempt, event):
                    raise ValueError(event.get("event"))
            except (ValueError, TypeError, KeyError, AttributeError):
                attempt.stopped = "sent a report that is not in the expected form"
                break
    finally:
        kill_group(proc.pid)  # the worker and anything it left behind...
        for pid in kernels:
            kill_group(pid)  # ...and each kernel's process group, children included
        await proc.wait()
    if not attempt.finished and not attempt.stopped:
        attempt.stopped = _why_stopped(proc.returncode)
    return attempt


async def run_submission(data, settings, scratch):
    """Run one notebook's bytes in workers until one finishes; return the Run of the last."""
    skip, skip_parse, notes = {}, {}, []
    deadline = time.monotonic() + settings.notebook_timeout
    attempt = None
    for _ in range(MAX_WORKERS):
        job = {"scratch": str(scratch), "cell_timeout": settings.cell_timeout,
               "notebook_timeout": settings.notebook_timeout, "seconds": max(0.1, deadline - time.monotonic()),
               "memory_mb": settings.memory_mb, "parse_cell_seconds": settings.parse_cell_timeout,
               "skip": sorted(skip), "skip_parse": {str(c): why for c, why in skip_parse.items()}}
        attempt = await _attempt(data, job, settings)
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


__all__ = ["EVENT_BYTES", "MAX_WORKERS", "PARSE_CELL_TIMEOUT", "PARSE_TIMEOUT", "Run", "WORKER_MEMORY_MB"]
