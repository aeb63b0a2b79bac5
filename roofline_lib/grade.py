"""Grade a folder of submitted exercise notebooks.

    python -m roofline_lib.grade SUBMISSIONS_DIR --master notebooks/student/02_topic.ipynb --out grades.csv

Each ``*.ipynb`` in SUBMISSIONS_DIR is one student (the file name without
``.ipynb``). Every submission runs in a fresh kernel, in a scratch folder that
holds only a copy of it, cell by cell, with a time limit per cell and per
notebook. After each cell that calls ``rl.exercises.check(...)``, the grader
asks the kernel for the *value* of the answer expression (a number, a string
or the name of its type) and judges it here, in the grader's own process,
against expected values it computed before any submission ran. Nothing the
kernel says about correctness is used, so patching the checker changes nothing.

A cell that raises, runs past its time limit or kills the kernel scores zero
for the questions it holds, with a note; after a timeout or a dead kernel the
grader starts a new kernel, replays the cells that had run, skips the broken
one and goes on. A file that is not a notebook scores zero with a note. The
batch always finishes.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import csv
import dataclasses
import json
import logging
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from . import exercises

CELL_TIMEOUT = 30.0  # s: one cell
NOTEBOOK_TIMEOUT = 120.0  # s: all cells of one submission, replays included
STARTUP_TIMEOUT = 60.0  # s: a kernel to start
OUTPUT_NOTE_BYTES = 1_000_000  # output of one cell above this is worth a note (it is never stored)
MAX_FILE_BYTES = 50_000_000
MAX_RESTARTS = 3
MEMORY_MB = 4096  # address-space limit of each kernel; 0 = none


# ---------------------------------------------------------------- finding the checks


@dataclasses.dataclass(frozen=True)
class CheckCall:
    """One ``check("NN.id", answer, **context)`` call found in a code cell."""

    question_id: str
    cell: int  # index in the notebook's cells
    answer: str | None  # source of the answer expression; None if the cell could not be parsed
    context: tuple = ()  # (keyword, expression source) pairs


def _python_source(source):
    """The cell as plain Python (IPython magics turned into calls), as the kernel would run it."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _is_check(func):
    return (isinstance(func, ast.Name) and func.id == "check") or (
        isinstance(func, ast.Attribute) and func.attr == "check")


def _calls_at_top_level(tree):
    """Calls not inside a function, lambda or comprehension: their names are the notebook's own."""
    scoped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
              ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, scoped))


def find_checks(cells):
    """Every self-check call in ``cells`` (a list of (cell_type, source)), in notebook order."""
    found = []
    for index, (cell_type, source) in enumerate(cells):
        if cell_type != "code":
            continue
        try:
            code = _python_source(source)
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            # The kernel will raise on it too; note which questions it held.
            for qid in re.findall(r"check\(\s*[\"'](\d\d\.\w+)[\"']", source):
                found.append(CheckCall(qid, index, None))
            continue
        calls = []
        for call in _calls_at_top_level(tree):
            if not (_is_check(call.func) and call.args and isinstance(call.args[0], ast.Constant)
                    and isinstance(call.args[0].value, str)):
                continue
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            answer = call.args[1] if len(call.args) > 1 else keywords.pop("answer", None)
            context = tuple((k, ast.get_source_segment(code, v)) for k, v in keywords.items())
            calls.append((call.lineno, call.col_offset, CheckCall(
                call.args[0].value, index, ast.get_source_segment(code, answer) if answer else "None", context)))
        found.extend(c for *_, c in sorted(calls, key=lambda t: t[:2]))
    return found


# ---------------------------------------------------------------- reading a submission


class NotANotebook(ValueError):
    pass


def load_cells(data):
    """(cell_type, source) of each cell of a notebook file's bytes; NotANotebook says why not."""
    if len(data) > MAX_FILE_BYTES:
        raise NotANotebook(f"the file is {len(data) / 1e6:.0f} MB, more than {MAX_FILE_BYTES / 1e6:.0f} MB")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise NotANotebook(f"not a notebook: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise NotANotebook(f"not a notebook: not valid JSON ({e.msg}, line {e.lineno} column {e.colno})") from None
    if isinstance(doc, dict) and doc.get("nbformat") == 3:
        try:
            doc = nbformat.convert(nbformat.from_dict(doc), 4)
        except Exception as e:  # noqa: BLE001 - any failure means the same thing here
            raise NotANotebook(f"not a notebook: an nbformat 3 file that cannot be converted ({e})") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise NotANotebook("not a notebook: the JSON has no list of cells")
    result = []
    for cell in cells:
        source = cell.get("source", "") if isinstance(cell, dict) else None
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise NotANotebook("not a notebook: a cell has no cell_type or no text source")
        result.append((cell["cell_type"], source))
    return result


# ---------------------------------------------------------------- reading answers out of the kernel

# Defined in the kernel before each read. It turns the answer into JSON the
# grader can judge: numbers (as check() would read them), strings, booleans,
# "missing" for `...`/None, else only the type's name and a short repr.
_CAPTURE_DEF = '''
def __roofline_capture__(thunk):
    import json, numbers
    try:
        value = thunk()
    except BaseException as e:
        return json.dumps({"kind": "error", "error": (type(e).__name__ + ": " + str(e))[:300]})
    if value is None or value is Ellipsis:
        return json.dumps({"kind": "missing"})
    if isinstance(value, bool):
        return json.dumps({"kind": "bool", "value": value})
    if isinstance(value, str):
        return json.dumps({"kind": "str", "value": value[:2000]})
    number = None
    try:
        if isinstance(value, numbers.Real):
            number = float(value)
        elif type(value).__name__ == "ndarray" and value.size == 1 and value.dtype.kind in "iuf":
            number = float(value.item())
        elif getattr(value, "is_number", False) is True:
            number = float(value)
    except Exception:
        number = None
    try:
        text = repr(value)[:200]
    except Exception:
        text = "?"
    if number is not None:
        return json.dumps({"kind": "number", "value": number, "type": type(value).__name__[:100], "repr": text})
    return json.dumps({"kind": "other", "type": type(value).__name__[:100], "repr": text})
'''


class _Unreadable(Exception):
    pass


def _parse_capture(reply):
    """The answer value from one user_expressions entry; _Unreadable says why there is none."""
    if reply.get("status") != "ok":
        raise _Unreadable(f"{reply.get('ename', 'error')}: {reply.get('evalue', '')}"[:200])
    try:
        text = ast.literal_eval(reply["data"]["text/plain"])
        captured = json.loads(text)
        kind = captured["kind"]
    except (KeyError, TypeError, ValueError, SyntaxError):
        raise _Unreadable("the kernel's reply was not in the expected form") from None
    if kind == "error":
        raise _Unreadable(str(captured.get("error", "error"))[:200])
    if kind == "missing":
        return ...
    if kind == "bool" and isinstance(captured.get("value"), bool):
        return captured["value"]
    if kind == "str" and isinstance(captured.get("value"), str):
        return captured["value"]
    if kind == "number" and isinstance(captured.get("value"), (int, float)) and not isinstance(
            captured["value"], bool):
        return _stand_in(captured, float, float(captured["value"]))
    if kind == "other":
        return _stand_in(captured, object)
    raise _Unreadable("the kernel's reply was not in the expected form")


def _stand_in(captured, base, *value):
    """The answer rebuilt for check(): a ``base`` whose type's name and repr are the original's."""
    text = str(captured.get("repr", "?"))
    return type(str(captured.get("type") or base.__name__), (base,), {"__repr__": lambda self: text})(*value)


# ---------------------------------------------------------------- running one submission


@dataclasses.dataclass
class Run:
    """What happened when a submission ran: per-cell problems and the answers read."""

    cell_problems: dict = dataclasses.field(default_factory=dict)  # cell index -> why it gave nothing
    answers: dict = dataclasses.field(default_factory=dict)  # CheckCall -> value or _Unreadable
    notes: list = dataclasses.field(default_factory=list)
    not_run: dict = dataclasses.field(default_factory=dict)  # cell index -> why it never ran


_QUIET = logging.getLogger("roofline_lib.grade.kernel")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class _Client(NotebookClient):
    """A notebook client that counts output bytes per cell and stores none of them."""

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(content.get("text", "")) + sum(len(str(v)) for v in (content.get("data") or {}).values())
        self.output_bytes[cell_index] = self.output_bytes.get(cell_index, 0) + size
        return None


@dataclasses.dataclass(frozen=True)
class Settings:
    cell_timeout: float = CELL_TIMEOUT
    notebook_timeout: float = NOTEBOOK_TIMEOUT
    memory_mb: int = MEMORY_MB


def _kernel_env():
    env = dict(os.environ)
    # The kernel imports the same roofline_lib as the grader.
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")  # parallel kernels should not fight over cores
    return env


def _limit_memory(megabytes):
    if not megabytes:
        return None

    def apply():
        import resource

        limit = int(megabytes) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


class _Kernel:
    """One kernel for one submission, restartable."""

    def __init__(self, cells, scratch, settings):
        self.scratch, self.settings = scratch, settings
        self.client = None
        # nbclient keeps each executed cell at its index; outputs are never kept (see _Client).
        self.nb = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_code_cell(src) if kind == "code" else nbformat.v4.new_raw_cell(src)
            for kind, src in cells])

    async def start(self):
        nb = self.nb
        client = _Client(nb, kernel_name="python3", allow_errors=False, interrupt_on_timeout=False,
                         shutdown_kernel="immediate", record_timing=False, startup_timeout=STARTUP_TIMEOUT,
                         iopub_timeout=2, resources={"metadata": {"path": str(self.scratch)}})
        client.output_bytes = {}
        client.log = _QUIET  # timeouts and dead kernels are reported as notes, not log lines
        client.km = client.create_kernel_manager()
        self.client = client
        await client.async_start_new_kernel(cwd=str(self.scratch), env=_kernel_env(), stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL,
                                            preexec_fn=_limit_memory(self.settings.memory_mb))
        await client.async_start_new_kernel_client()

    async def stop(self):
        client, self.client = self.client, None
        if client is None or client.km is None:
            return
        try:
            await client._async_cleanup_kernel()
        except Exception:  # noqa: BLE001 - a kernel that is already gone is fine
            pass
        finally:
            if client.km is not None and client.km.has_kernel:
                try:
                    await client.km.shutdown_kernel(now=True)
                except Exception:  # noqa: BLE001
                    pass

    async def run_cell(self, index, timeout):
        """Run one cell; return None, or (kind, text) with kind 'error' | 'timeout' | 'dead'."""
        client = self.client
        client.timeout = max(1, math.ceil(timeout))  # nbclient takes whole seconds
        cell = self.nb.cells[index]
        try:
            await client.async_execute_cell(cell, index)
        except CellExecutionError as e:
            return "error", f"raised {e.ename}: {e.evalue}"[:300]
        except CellTimeoutError:
            return "timeout", f"was still running after {timeout:.0f} s"
        except DeadKernelError:
            return "dead", "stopped the kernel (os._exit or a crash)"
        return None

    async def read(self, expressions, timeout):
        """Evaluate ``expressions`` (name -> source) in the kernel: name -> value or _Unreadable."""
        kc = self.client.kc
        wrapped = {name: f"__roofline_capture__(lambda: ({src}\n))" for name, src in expressions.items()}
        msg_id = kc.execute(_CAPTURE_DEF, silent=True, store_history=False, user_expressions=wrapped,
                            stop_on_error=False)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout", f"reading the answer took more than {timeout:.0f} s"
            try:
                msg = await kc.get_shell_msg(timeout=min(remaining, 1.0))
            except Exception:  # noqa: BLE001 - queue.Empty: nothing yet
                if not await self.client.km.is_alive():
                    return "dead", "stopped the kernel while its answer was read"
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                break
        results = msg["content"].get("user_expressions") or {}
        values = {}
        for name in expressions:
            try:
                values[name] = _parse_capture(results.get(name, {"status": "error", "ename": "no reply"}))
            except _Unreadable as e:
                values[name] = e
        return values


async def run_submission(cells, checks, settings, scratch):
    """Execute ``cells`` in a kernel (restarting after timeouts and deaths); return a Run."""
    run = Run()
    code = [i for i, (kind, src) in enumerate(cells) if kind == "code" and src.strip()]
    by_cell = {}
    for call in checks:
        by_cell.setdefault(call.cell, []).append(call)
    kernel = _Kernel(cells, scratch, settings)
    deadline = time.monotonic() + settings.notebook_timeout
    done = []  # cells that ran to the end (with or without an exception): replayed after a restart
    position, restarts = 0, 0
    try:
        while position < len(code):
            if kernel.client is None:
                try:
                    await asyncio.wait_for(kernel.start(), STARTUP_TIMEOUT)
                except Exception as e:  # noqa: BLE001 - whatever stops a kernel, grading goes on
                    await kernel.stop()
                    reason = f"no kernel could be started ({type(e).__name__}: {e})"[:300]
                    run.not_run.update({i: reason for i in code[position:]})
                    run.notes.append(reason)
                    return run
                for index in done:  # bring the new kernel to where the old one was
                    remaining = deadline - time.monotonic()
                    problem = await kernel.run_cell(index, remaining) if remaining > 0 else None
                    if remaining <= 0 or (problem and problem[0] != "error"):
                        run.notes.append(f"replaying cell {index + 1} after a restart failed; later cells may "
                                         "miss its results")
                        break
            broken = False
            while position < len(code) and not broken:
                index = code[position]
                position += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    reason = f"not run: the notebook's time limit ({settings.notebook_timeout:.0f} s) was reached"
                    run.not_run.update({i: reason for i in code[position - 1:]})
                    run.notes.append(f"time limit of {settings.notebook_timeout:.0f} s reached before cell "
                                     f"{index + 1}")
                    return run
                problem = await kernel.run_cell(index, min(settings.cell_timeout, remaining))
                if kernel.client.output_bytes.get(index, 0) > OUTPUT_NOTE_BYTES:
                    run.notes.append(f"cell {index + 1} printed {kernel.client.output_bytes[index] / 1e6:.1f} MB "
                                     "of output (not kept)")
                if problem:
                    kind, text = problem
                    run.cell_problems[index] = f"cell {index + 1} {text}"
                    if kind == "error":
                        done.append(index)
                        if index not in by_cell:  # an exercise cell's error is told with its question
                            run.notes.append(run.cell_problems[index])
                        continue
                    run.notes.append(f"cell {index + 1} {text}; restarted the kernel and skipped it")
                    broken = True
                    break
                done.append(index)
                calls = by_cell.get(index, [])
                expressions = {}
                for n, call in enumerate(calls):
                    expressions[f"a{n}"] = call.answer
                    expressions.update({f"c{n}_{k}": src for k, src in call.context})
                if not expressions:
                    continue
                values = await kernel.read(expressions, min(settings.cell_timeout, max(deadline - time.monotonic(),
                                                                                       0.1)))
                if isinstance(values, tuple):
                    run.cell_problems[index] = f"cell {index + 1}: {values[1]}"
                    run.notes.append(f"cell {index + 1}: {values[1]}; restarted the kernel")
                    broken = True
                    break
                for n, call in enumerate(calls):
                    context = {k: values[f"c{n}_{k}"] for k, _ in call.context}
                    bad = [v for v in context.values() if isinstance(v, _Unreadable)]
                    run.answers[call] = bad[0] if bad else (values[f"a{n}"], context)
            if broken:
                await kernel.stop()
                restarts += 1
                if restarts > MAX_RESTARTS and position < len(code):
                    reason = f"not run: stopped after {MAX_RESTARTS} kernel restarts"
                    run.not_run.update({i: reason for i in code[position:]})
                    run.notes.append(reason[len("not run: "):])
                    return run
        return run
    finally:
        await kernel.stop()


# ---------------------------------------------------------------- scoring, in this process


@dataclasses.dataclass
class Grade:
    student: str
    scores: dict  # question id -> 0 or 1
    messages: dict  # question id -> one line of feedback
    notes: list
    seconds: float = 0.0

    @property
    def total(self):
        return sum(self.scores.values())


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
        cells = load_cells(Path(path).read_bytes())
        return cls(call.question_id for call in find_checks(cells))

    @classmethod
    def from_chapter(cls, chapter):
        return cls(q.id for q in exercises.questions(f"{int(chapter):02d}."))

    def expected(self, qid, context):
        key = (qid, tuple(sorted((k, repr(v)) for k, v in context.items())))
        if key not in self._expected:
            self._expected[key] = self.questions[qid].expected(**context)
        return self._expected[key]

    def score(self, student, run, checks):
        scores, messages = {}, {}
        for qid in self.question_ids:
            calls = [c for c in checks if c.question_id == qid]
            scores[qid] = 0
            if not calls:
                messages[qid] = f"{qid}: question not found in submission"
                continue
            call = calls[-1]  # the last attempt counts
            if call.cell in run.not_run:
                messages[qid] = f"{qid}: {run.not_run[call.cell]}"
            elif call.cell in run.cell_problems:
                messages[qid] = f"{qid}: {run.cell_problems[call.cell]}"
            elif call not in run.answers:
                messages[qid] = f"{qid}: the answer was not read"
            elif isinstance(run.answers[call], _Unreadable):
                messages[qid] = f"{qid}: the answer could not be read ({run.answers[call]})"
            else:
                value, context = run.answers[call]
                try:
                    feedback = exercises.judge(self.questions[qid], value, self.expected(qid, context))
                except (TypeError, ValueError) as e:
                    messages[qid] = f"{qid}: the check's context is not usable ({e})"[:300]
                    continue
                scores[qid] = int(feedback.correct)
                messages[qid] = feedback.message
        return Grade(student, scores, messages, list(run.notes))


async def grade_one(name, data, assignment, settings):
    """Grade one submission's bytes. Never raises: a failure becomes zeros and a note."""
    start = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="roofline-grade-"))
    try:
        cells = load_cells(data)
        checks = find_checks(cells)
        # The kernel's folder holds a copy of this submission only.
        (scratch / f"{name}.ipynb").write_bytes(data)
        run = await run_submission(cells, checks, settings, scratch)
        grade = assignment.score(name, run, checks)
    except NotANotebook as e:
        grade = Grade(name, dict.fromkeys(assignment.question_ids, 0), {}, [str(e)])
    except Exception as e:  # noqa: BLE001 - one broken submission must not stop the batch
        grade = Grade(name, dict.fromkeys(assignment.question_ids, 0), {},
                      [f"grading failed ({type(e).__name__}: {e})"[:300]])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    grade.seconds = time.monotonic() - start
    return grade


async def grade_all(submissions, assignment, settings=Settings(), workers=2, progress=None):
    """Grade ``submissions`` ({student: bytes}) with ``workers`` kernels at a time; return Grades."""
    semaphore = asyncio.Semaphore(max(1, workers))
    finished = 0
    hard_limit = STARTUP_TIMEOUT * (MAX_RESTARTS + 1) + settings.notebook_timeout + 30

    async def one(name):
        nonlocal finished
        async with semaphore:
            try:
                grade = await asyncio.wait_for(grade_one(name, submissions[name], assignment, settings), hard_limit)
            except asyncio.TimeoutError:
                grade = Grade(name, dict.fromkeys(assignment.question_ids, 0), {},
                              [f"grading took more than {hard_limit:.0f} s and was stopped"], hard_limit)
        finished += 1
        if progress:
            progress(finished, len(submissions), grade, len(assignment.question_ids))
        return grade

    return list(await asyncio.gather(*(one(name) for name in sorted(submissions))))


# ---------------------------------------------------------------- files and the command line


def read_submissions(folder):
    """{student: bytes} of every *.ipynb in ``folder``, all read before any of them runs."""
    paths = sorted(p for p in Path(folder).iterdir() if p.suffix == ".ipynb" and p.is_file())
    return {p.stem: p.read_bytes()[:MAX_FILE_BYTES + 1] for p in paths}


def _plain(message):
    """One feedback message without its symbol or the how-to of an unanswered question."""
    message = re.sub(r"^[✅❌⏳]\s*", "", message)
    return re.sub(r" yet — replace `\.\.\.` with your answer.*$", "", message)


def feedback_line(grade, question_ids):
    parts = list(grade.notes) + [_plain(grade.messages[q]) for q in question_ids
                                 if not grade.scores.get(q) and q in grade.messages]
    text = "; ".join(dict.fromkeys(parts))
    return text if len(text) <= 1000 else text[:997] + "..."


def write_csv(grades, question_ids, out):
    """Write the grades table; replaces the file in one step, whatever was there before."""
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *question_ids, "total", "max", "feedback"])
        for g in sorted(grades, key=lambda g: g.student):
            writer.writerow([g.student, *(g.scores.get(q, 0) for q in question_ids), g.total,
                             len(question_ids), feedback_line(g, question_ids)])
    os.replace(tmp, out)


def write_feedback(grades, question_ids, folder):
    """One text file per student: every question's feedback and every note."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for g in grades:
        lines = [f"{g.student}: {g.total}/{len(question_ids)}", ""]
        lines += [g.messages.get(q, f"{q}: not graded") for q in question_ids]
        lines += [""] + [f"note: {n}" for n in g.notes] if g.notes else []
        (folder / f"{g.student}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def progress_line(done, total, grade, n_questions):
    note = f" — {grade.notes[0]}" if grade.notes else ""
    return f"[{done}/{total}] {grade.student}.ipynb {grade.total}/{n_questions} ({grade.seconds:.1f} s){note}"


def _print(line):
    print(line, file=sys.stderr, flush=True)


def main(argv=None, progress=_print):
    parser = argparse.ArgumentParser(prog="python -m roofline_lib.grade",
                                     description="Grade a folder of submitted exercise notebooks.")
    parser.add_argument("submissions", help="folder of submitted notebooks, one STUDENT.ipynb per student")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--master", help="the notebook handed out (master or student version): its check() "
                                        "calls say which questions are graded")
    which.add_argument("--chapter", help="grade every question of this chapter number instead")
    parser.add_argument("--out", default="grades.csv", help="CSV to write (default: grades.csv)")
    parser.add_argument("--feedback", metavar="DIR", help="also write DIR/STUDENT.txt with all feedback")
    parser.add_argument("--workers", type=int, default=2, help="kernels at a time (default: 2)")
    parser.add_argument("--cell-timeout", type=float, default=CELL_TIMEOUT, help="seconds per cell (default: 30)")
    parser.add_argument("--notebook-timeout", type=float, default=NOTEBOOK_TIMEOUT,
                        help="seconds per submission, all cells (default: 120)")
    parser.add_argument("--memory-mb", type=int, default=MEMORY_MB,
                        help="address-space limit per kernel in MB, 0 for none (default: 4096)")
    args = parser.parse_args(argv)

    folder = Path(args.submissions)
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder")
    assignment = Assignment.from_notebook(args.master) if args.master else Assignment.from_chapter(args.chapter)
    submissions = read_submissions(folder)
    skipped = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix != ".ipynb")
    if skipped:
        progress(f"ignored (not .ipynb): {', '.join(skipped)}")
    if not submissions:
        parser.error(f"no .ipynb files in {folder}")
    settings = Settings(args.cell_timeout, args.notebook_timeout, args.memory_mb)
    progress(f"grading {len(submissions)} submissions on {len(assignment.question_ids)} questions with "
             f"{args.workers} kernels at a time (cell limit {settings.cell_timeout:g} s, notebook limit "
             f"{settings.notebook_timeout:g} s)")
    start = time.monotonic()
    grades = asyncio.run(grade_all(submissions, assignment, settings, args.workers,
                                   lambda *a: progress(progress_line(*a))))
    write_csv(grades, assignment.question_ids, args.out)
    if args.feedback:
        write_feedback(grades, assignment.question_ids, args.feedback)
    mean = sum(g.total for g in grades) / len(grades)
    progress(f"graded {len(grades)} submissions in {time.monotonic() - start:.1f} s; mean "
             f"{mean:.2f}/{len(assignment.question_ids)}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

