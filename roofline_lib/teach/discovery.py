"""A notebook's cells, and the ``check(...)`` calls in them.

Runs in the worker process (see worker.py) for submissions, never in the
grader's own: a student's notebook can be slow or hostile to parse. Each cell
is parsed on its own, under a time limit, so a cell that cannot be read costs
only the questions it holds.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import signal
import threading

MAX_FILE_BYTES = 50_000_000
PARSE_CELL_SECONDS = 10.0  # one cell: IPython's magic transformer is quadratic in the worst case


@dataclasses.dataclass(frozen=True)
class CheckCall:
    """One ``check("NN.id", answer, **context)`` call found in a code cell."""

    question_id: str
    cell: int  # index in the notebook's cells
    answer: str | None  # source of the answer expression; None if the cell could not be parsed
    context: tuple = ()  # (keyword, expression source) pairs


class NotANotebook(ValueError):
    """A submission that is not a readable notebook (not JSON, not nbformat 4, cells of the wrong shape)."""

    pass


class Unparsed(Exception):
    """A cell the grader could not read (too deep, too slow, or skipped after it stopped a worker)."""


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
    except RecursionError:
        raise NotANotebook("not a notebook: the JSON is nested too deeply") from None
    if isinstance(doc, dict) and doc.get("nbformat") == 3:
        import nbformat  # only here: it loads jsonschema, seconds of start-up for every worker

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


class _Segments:
    """ast.get_source_segment without re-splitting the whole cell per call (thousands of checks)."""

    def __init__(self, code):
        # lines as the parser counts them: ended by \r\n, \n or \r only (not str.splitlines' \f, \v...)
        self.lines = re.findall(r"[^\r\n]*(?:\r\n|\n|\r|$)", code)
        self.encoded = {}

    def _line(self, n):
        if n not in self.encoded:
            self.encoded[n] = self.lines[n].encode()
        return self.encoded[n]

    def __call__(self, node):
        first, last = node.lineno - 1, node.end_lineno - 1
        start, end = node.col_offset, node.end_col_offset
        if first == last:
            return self._line(first)[start:end].decode()
        parts = [self._line(first)[start:]] + [self._line(i) for i in range(first + 1, last)]
        parts.append(self._line(last)[:end])
        return b"".join(parts).decode()


class _Timer:
    """Raise Unparsed in this thread after ``seconds`` (the worker's main thread only)."""

    def __init__(self, seconds):
        self.seconds = seconds if seconds and threading.current_thread() is threading.main_thread() else None

    def _fire(self, *_):
        raise Unparsed(f"took more than {self.seconds:g} s to read")

    def __enter__(self):
        if self.seconds:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def _checks_in(index, source):
    code = _python_source(source)
    tree = ast.parse(code)
    segment = _Segments(code)
    calls = []
    for call in _calls_at_top_level(tree):
        if not (_is_check(call.func) and call.args and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str)):
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        answer = call.args[1] if len(call.args) > 1 else keywords.pop("answer", None)
        context = tuple((k, segment(v)) for k, v in keywords.items())
        calls.append((call.lineno, call.col_offset,
                      CheckCall(call.args[0].value, index, segment(answer) if answer else "None", context)))
    return [c for *_, c in sorted(calls, key=lambda t: t[:2])]


def find_checks(cells, skip=(), cell_seconds=None, unparsed=None, on_cell=None):
    """Every self-check call in ``cells`` (a list of (cell_type, source)), in notebook order.

    Cells in ``skip``, and cells that take more than ``cell_seconds`` or nest too
    deeply to parse, keep their questions (found by a plain text search) with no
    answer; why is put in ``unparsed`` (cell index -> reason). ``on_cell(i)`` is
    called before each parse, so a process watching can tell which cell hung.
    """
    found = []
    for index, (cell_type, source) in enumerate(cells):
        if cell_type != "code" or "check" not in source:  # no call to check: nothing to parse
            continue
        try:
            if index in skip:
                raise Unparsed(skip[index] if isinstance(skip, dict) else "skipped")
            if on_cell:
                on_cell(index)
            with _Timer(cell_seconds):
                found.extend(_checks_in(index, source))
            continue
        except (SyntaxError, ValueError):
            pass  # the kernel will raise on it too, and say why
        except (Unparsed, RecursionError, MemoryError) as e:
            reason = str(e) if isinstance(e, Unparsed) else f"is too deeply nested to read ({type(e).__name__})"
            if unparsed is not None:
                unparsed[index] = f"cell {index + 1} {reason}"
        # Note which questions it held, so they are reported, not forgotten.
        found.extend(CheckCall(qid, index, None) for qid in re.findall(r"check\(\s*[\"'](\d\d\.\w+)[\"']", source))
    return found


__all__ = ["CheckCall", "find_checks", "load_cells", "MAX_FILE_BYTES", "NotANotebook", "PARSE_CELL_SECONDS", "Unparsed"]
