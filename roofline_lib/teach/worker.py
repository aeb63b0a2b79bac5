"""One submission's run, in a process of its own: ``python -m roofline_lib.teach.worker``.

The grader starts one worker per submission (run.py). The worker parses the
notebook, starts its kernel (so the worker, not the grader, is the kernel's
parent), runs the cells, reads the answers back and reports each step as it
happens. Whatever the notebook does to this process (a parse that takes
minutes, 250 MB of output, a signal to its parent) stays here: the grader sees
the reports stop, knows which cell was running, and starts another worker
that skips it.

In a sandbox (sandbox.py) the worker first sets the per-process limits that
its kernel and everything it starts inherit. It writes the notebook's bytes
into its scratch folder (the kernel's working folder: a copy, never the
submission itself) and reads back only the checks that count: the last one
of each graded question, with at most MAX_CONTEXT measured values.

stdin: one JSON line (the job, see run.py), then the notebook's bytes.
stdout: one JSON object per line, {"event": ..., ...}; nothing else.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from . import discovery, sandbox
from .kernel import STARTUP_TIMEOUT, Kernel

MAX_RESTARTS = 3  # kernel restarts within one worker
OUTPUT_NOTE_BYTES = 1_000_000  # output of one cell above this is worth a note (it is never stored)
MAX_CONTEXT = 8  # measured values (keyword arguments of check) read back for one question


def counting(checks, questions):
    """The checks whose answers count: the last one of each question in ``questions``, in notebook order,
    their context cut to MAX_CONTEXT keywords of sensible length."""
    last = {}
    for n, call in enumerate(checks):
        if call.question_id in questions:
            last[call.question_id] = n
    chosen = [checks[n] for n in sorted(last.values())]
    return [dataclasses.replace(c, context=tuple((k, v) for k, v in c.context if len(k) <= 100)[:MAX_CONTEXT])
            for c in chosen]


async def run_cells(cells, checks, job, emit):
    """Run the code cells (restarting the kernel after timeouts and deaths), reporting as it goes."""
    skip = {int(i) for i in job["skip"]}  # cells that stopped an earlier worker
    code = [i for i, (kind, src) in enumerate(cells) if kind == "code" and src.strip() and i not in skip]
    by_cell = {}
    for n, call in enumerate(checks):
        if call.answer is not None:
            by_cell.setdefault(call.cell, []).append((n, call))
    kernel = Kernel(cells, Path(job["scratch"]), job["memory_mb"])
    deadline = time.monotonic() + job["seconds"]
    cell_timeout, notebook_timeout = job["cell_timeout"], job["notebook_timeout"]
    done = []  # cells that ran to the end (with or without an exception): replayed after a restart
    position, restarts = 0, 0
    try:
        while position < len(code):
            if not kernel.running:
                try:
                    try:
                        await asyncio.wait_for(kernel.start(lambda pid: emit("kernel", pid=pid)), STARTUP_TIMEOUT)
                    # One more try, fresh kernel, fresh ports: on a busy machine (a timeout), or when the kernel
                    # died at once (RuntimeError), as it does when another process took a port jupyter_client
                    # picked for it before it could bind it (jupyter_client issue 487).
                    except (TimeoutError, RuntimeError):
                        await kernel.stop()
                        await asyncio.wait_for(kernel.start(lambda pid: emit("kernel", pid=pid)), STARTUP_TIMEOUT)
                except Exception as e:  # noqa: BLE001 - whatever stops a kernel, grading goes on
                    await kernel.stop()
                    reason = f"no kernel could be started ({type(e).__name__}: {e})"[:300]
                    emit("not_run", cells=code[position:], reason=reason)
                    emit("note", text=reason)
                    return
                for index in done:  # bring the new kernel to where the old one was
                    remaining = deadline - time.monotonic()
                    emit("busy", cell=index)
                    outcome = await kernel.run_cell(index, remaining) if remaining > 0 else None
                    if outcome is None or outcome.kind not in ("ok", "error"):
                        emit("note", text=f"replaying cell {index + 1} after a restart failed; later cells may "
                                          "miss its results")
                        break
            broken = False
            while position < len(code) and not broken:
                index = code[position]
                position += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    emit("not_run", cells=code[position - 1:],
                         reason=f"not run: the notebook's time limit ({notebook_timeout:.0f} s) was reached")
                    emit("note", text=f"time limit of {notebook_timeout:.0f} s reached before cell {index + 1}")
                    return
                emit("busy", cell=index)
                outcome = await kernel.run_cell(index, min(cell_timeout, remaining))
                if kernel.output_bytes(index) > OUTPUT_NOTE_BYTES:
                    emit("note", text=f"cell {index + 1} printed {kernel.output_bytes(index) / 1e6:.1f} MB "
                                      "of output (not kept)")
                if outcome.kind != "ok":
                    emit("problem", cell=index, text=f"cell {index + 1} {outcome.text}")
                    if outcome.kind == "error":
                        done.append(index)
                        if index not in by_cell:  # an exercise cell's error is told with its question
                            emit("note", text=f"cell {index + 1} {outcome.text}")
                        continue
                    emit("note", text=f"cell {index + 1} {outcome.text}; restarted the kernel and skipped it")
                    broken = True
                    break
                done.append(index)
                expressions = {}
                for n, call in by_cell.get(index, []):
                    expressions[f"a{n}"] = call.answer
                    expressions.update({f"c{n}_{k}": src for k, src in call.context})
                if expressions:
                    outcome, replies = await kernel.read(
                        expressions, min(cell_timeout, max(deadline - time.monotonic(), 0.1)))
                    if outcome.kind != "ok":
                        emit("problem", cell=index, text=f"cell {index + 1}: {outcome.text}")
                        emit("note", text=f"cell {index + 1}: {outcome.text}; restarted the kernel")
                        broken = True
                        break
                    emit("answers", cell=index, replies=replies)
                emit("idle")
            if broken:
                emit("idle")
                await kernel.stop()
                restarts += 1
                if restarts > MAX_RESTARTS and position < len(code):
                    emit("not_run", cells=code[position:], reason=f"not run: stopped after {MAX_RESTARTS} kernel "
                                                                   "restarts")
                    emit("note", text=f"stopped after {MAX_RESTARTS} kernel restarts")
                    return
    finally:
        await kernel.stop()


def main():
    """The worker process's entry: run one submission (parse, kernel, answers), reporting each event as a JSON line."""
    events = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # a stray print from a library goes to stderr, never into the reports

    def emit(event, **fields):
        events.write(json.dumps({"event": event, **fields}, ensure_ascii=True) + "\n")
        events.flush()

    job = json.loads(sys.stdin.buffer.readline())
    if job.get("limits"):
        sandbox.apply_limits(job["limits"])
    data = sys.stdin.buffer.read()
    scratch = Path(job["scratch"])
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "submission.ipynb").write_bytes(data)  # the kernel's folder holds this copy only
    try:
        cells = discovery.load_cells(data)
    except discovery.NotANotebook as e:
        emit("not_a_notebook", reason=str(e))
        return 0
    del data
    unparsed = {}
    checks = discovery.find_checks(cells, {int(k): v for k, v in job["skip_parse"].items()},
                                   job["parse_cell_seconds"], unparsed, on_cell=lambda i: emit("parsing", cell=i))
    checks = counting(checks, set(job["questions"]))
    unparsed = {c: why for c, why in unparsed.items() if c in {call.cell for call in checks}}
    emit("prepared", checks=[[c.question_id, c.cell, [k for k, _ in c.context]] for c in checks],
         unparsed=unparsed)
    asyncio.run(run_cells(cells, checks, job, emit))
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["counting", "main", "MAX_CONTEXT", "MAX_RESTARTS", "OUTPUT_NOTE_BYTES"]
