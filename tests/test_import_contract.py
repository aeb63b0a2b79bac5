"""The library's import contract, beside import-linter's (``.importlinter``, run by ``lint-imports`` in CI):
rooms import only the rooms below them (that is import-linter's part); here, no import cycle at all among
roofline_lib's modules, every lazy name of ``roofline_lib/__init__.py`` reachable from a fresh interpreter,
``import roofline_lib`` light, and a house of at most 14 rooms.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "roofline_lib"
# not rooms: the package itself, two forwarders and the start command
ENTRY_POINTS = {"__init__.py", "grade.py", "lab.py", "student.py"}
MAX_ROOMS = 14


def fresh_python(code, timeout=120):
    """Run ``code`` in a new interpreter that imports this checkout's roofline_lib; return its stdout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


# ---------------------------------------------------------------- no import cycle


def import_graph():
    """{module: modules it imports}, every import statement in roofline_lib, function-level ones included."""
    graph = grimp.build_graph("roofline_lib", cache_dir=None)  # no cache: nothing written, nothing stale
    return {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}


def cycles(edges):
    """The strongly connected components of more than one module (or a module importing itself), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for start in sorted(edges):  # Tarjan's algorithm, iterative: no recursion limit to meet
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in edges.get(node, ()):
                        found.append(sorted(component))
    return found


def test_cycle_finder_finds_cycles():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": set()}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_has_no_cycle():
    """Every import statement counts, wherever it sits: a function-level import closes a cycle as surely as a
    top-level one, it only waits for the call.

    A package and its own modules: ``roofline_lib/llm/__init__.py`` importing ``llm.fusion`` (re-exporting it)
    is an edge llm -> llm.fusion, and it counts like any other. What is not added is the edge Python adds by
    itself, every module to the packages above it (importing ``roofline_lib.llm.fusion`` first runs
    ``roofline_lib/__init__.py`` and ``llm/__init__.py``): with it, every re-export would be a cycle and the
    check would say nothing. So a module may be re-exported by its package, and a module may import a package
    above it (``exercises/ch02.py`` does ``import roofline_lib as rl``), but not both along one loop: a package
    that imports a module which imports that package back is a cycle here, and Python meets it as a
    half-initialised module.
    """
    edges = import_graph()
    files = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
             for p in LIB.rglob("*.py")}
    assert files <= set(edges), f"modules missing from the graph (not this checkout?): {sorted(files - set(edges))}"
    found = cycles(edges)
    detail = "\n".join(" <-> ".join(c) + "\n    " + "\n    ".join(
        f"{a} -> {b}" for a in c for b in sorted(edges[a] & set(c))) for c in found)
    assert found == [], f"import cycles in roofline_lib (each listed with the imports that close it):\n{detail}"


# ---------------------------------------------------------------- lazy names, from a fresh interpreter

# Each name is looked up in a process of its own, forked from an interpreter that has just run
# `import roofline_lib` and nothing else, so no name works only because an earlier one loaded its room.
# (Without fork, on Windows, all are looked up in one fresh interpreter, in order.)
_LOOKUP = r"""
import importlib, json, os, sys, types
import roofline_lib as rl

def check(name):
    obj = getattr(rl, name)
    if name in rl._ROOMS:
        want = "roofline_lib." + name
        assert isinstance(obj, types.ModuleType) and obj.__name__ == want, (obj, want)
    elif name in rl._SHORTCUTS:
        want = "roofline_lib." + rl._SHORTCUTS[name]
        assert isinstance(obj, types.ModuleType) and obj.__name__ == want, (obj, want)
    else:
        assert obj is getattr(importlib.import_module("roofline_lib." + rl._LAZY_NAMES[name]), name)
    assert name in dir(rl)
    for public in getattr(obj, "__all__", []) if isinstance(obj, types.ModuleType) else []:
        getattr(obj, public)  # what a room or shortcut exports is there

names = sorted(rl._ROOMS | set(rl._SHORTCUTS) | set(rl._LAZY_NAMES))
failed = {}
for name in names:
    if hasattr(os, "fork"):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                check(name)
                why = ""
            except BaseException as e:
                why = f"{type(e).__name__}: {e}" or "failed"
            os.write(write, why.encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as f:
            why = f.read().decode()
        _, status = os.waitpid(pid, 0)
        if status and not why:
            why = f"the process ended with status {status}"
    else:
        try:
            check(name)
            why = ""
        except Exception as e:
            why = f"{type(e).__name__}: {e}"
    if why:
        failed[name] = why
print(json.dumps({"names": names, "failed": failed}))
"""


def test_every_lazy_name_is_reachable_from_a_fresh_interpreter():
    out = json.loads(fresh_python(_LOOKUP).strip().splitlines()[-1])
    assert out["failed"] == {}, "\n".join(f"rl.{n}: {why}" for n, why in out["failed"].items())
    assert len(out["names"]) >= 20 and {"teach", "diagnosis", "fusion", "prefill"} <= set(out["names"])


@pytest.mark.parametrize("code", [
    # the diagnosis rule, as chapter 07 calls it: twice the FLOPs, twice the time, bytes free -> compute
    "assert rl.diagnosis.__name__ == 'roofline_lib.roofline.diagnosis'\n"
    "assert rl.diagnosis.classify_response(1.0, 2.0, 1.0, 2, 2)[0] == 'compute'",
    "assert rl.fusion.__name__ == 'roofline_lib.llm.fusion'\n"
    "assert callable(rl.fusion.attention_chain) and callable(rl.fusion.gated_mlp_chain)",
    # the teacher's tools: rl.teach is the room; its commands import from it
    "assert rl.teach.__name__ == 'roofline_lib.teach'\n"
    "import roofline_lib.teach.grade, roofline_lib.teach.student\n"
    "assert callable(rl.teach.grade.main) and callable(rl.teach.student.main)",
], ids=["diagnosis", "fusion", "teach"])
def test_a_shortcut_works_in_a_fresh_interpreter(code):
    fresh_python("import roofline_lib as rl\n" + code)


def test_import_roofline_lib_loads_no_heavy_library():
    code = ("import sys\nimport roofline_lib\n"
            "print(','.join(m for m in ('sympy', 'matplotlib', 'ipywidgets') if m in sys.modules))")
    assert fresh_python(code).strip() == "", "import roofline_lib loaded these"


# ---------------------------------------------------------------- the number of rooms


def test_at_most_14_rooms():
    """A room is a subpackage or a module directly in roofline_lib/; the package's __init__.py and the
    two forwarders (grade.py, student.py) are not rooms."""
    rooms = sorted(p.name for p in LIB.iterdir()
                   if (p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py")))
                   or (p.suffix == ".py" and p.name not in ENTRY_POINTS))
    assert len(rooms) <= MAX_ROOMS, f"{len(rooms)} rooms in roofline_lib/ (at most {MAX_ROOMS}): {rooms}"
