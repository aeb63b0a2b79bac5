"""Which of the library's functions and classes each chapter's code calls, found by reading the code cells.

Each cell is parsed (IPython magics and shell lines left out); names bound by ``import roofline_lib as rl`` and
``from roofline_lib import llm`` (and assignments such as ``L = rl.launch``) are followed through attribute
chains (``rl.serving.request``, ``llm.max_batch``) to the objects they reach. Methods called on results
(``hw.ridge_point``) are not seen: only what a module or the package hands out.
"""

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def chapters():
    """{"05": Path("notebooks/05_llm_inference.ipynb"), ...}: every lecture edition."""
    return {p.name[:2]: p for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))}


def _code(cell):
    lines = "".join(cell["source"]).splitlines()
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def _resolve(value, attrs):
    for attr in attrs:
        try:
            value = getattr(value, attr)
        except AttributeError:
            return None
    return value


def _chain(node):
    """(base name, [attr, ...]) of ``a.b.c``, or None."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id, attrs[::-1]) if isinstance(node, ast.Name) else None


def _library_object(value):
    return ((inspect.isfunction(value) or inspect.isclass(value))
            and getattr(value, "__module__", "").startswith("roofline_lib"))


def uses(path):
    """The roofline_lib functions and classes a notebook's code reaches, as a set of objects."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    names, found = {}, set()
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse(_code(cell))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "roofline_lib":
                        names[alias.asname or "roofline_lib"] = importlib.import_module(
                            alias.name if alias.asname else "roofline_lib")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "roofline_lib":
                module = importlib.import_module(node.module)
                for alias in node.names:
                    value = getattr(module, alias.name, None)
                    if value is None:  # a module not yet imported by its package
                        value = importlib.import_module(f"{node.module}.{alias.name}")
                    names[alias.asname or alias.name] = value
                    if _library_object(value):
                        found.add(value)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                chain = _chain(node.value)
                if chain and chain[0] in names and inspect.ismodule(value := _resolve(names[chain[0]], chain[1])):
                    names[node.targets[0].id] = value
        for node in ast.walk(tree):
            chain = _chain(node) if isinstance(node, ast.Attribute) else None
            if chain and chain[0] in names:
                value = names[chain[0]]
                for attr in chain[1]:
                    value = _resolve(value, [attr])
                    if value is None:
                        break
                    if _library_object(value):
                        found.add(value)
                        break
    return found


def users():
    """{object: [chapter numbers that reach it, in order]} over every chapter."""
    out = {}
    for number, path in chapters().items():
        for obj in uses(path):
            out.setdefault(obj, []).append(number)
    return out


STAMP = re.compile(r"Taught in chapter (\d\d) \((notebooks/\d\d_\w+\.ipynb)\)"
                   r"(?:; also used in chapters? ([\d, ]+?))?\.\s*$")


def stamp_for(numbers):
    """The docstring's last line for a name the chapters ``numbers`` use (the first one teaches it)."""
    first, rest = numbers[0], numbers[1:]
    text = f"Taught in chapter {first} (notebooks/{chapters()[first].name})"
    if rest:
        text += f"; also used in chapter{'s' if len(rest) > 1 else ''} {', '.join(rest)}"
    return text + "."


def stamped(obj):
    """(taught in, [also used in]) from the object's docstring stamp, or None."""
    found = STAMP.search(" ".join((obj.__doc__ or "").split()))  # a long stamp may wrap
    if not found:
        return None
    also = [n.strip() for n in found.group(3).split(",")] if found.group(3) else []
    return found.group(1), also, found.group(2)


def rewrite_stamps():
    """Write each used name's stamp into its docstring (replacing an old one), and remove the stamps of names no
    chapter uses: run ``python tests/notebook_uses.py`` after a chapter starts or stops calling a function.
    Returns the files changed."""
    import importlib
    import pkgutil

    import roofline_lib as rl

    wanted = {obj: stamp_for(numbers) for obj, numbers in users().items()}
    for info in pkgutil.walk_packages(rl.__path__, "roofline_lib."):
        for obj in vars(importlib.import_module(info.name)).values():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == info.name \
                    and obj not in wanted and stamped(obj):
                wanted[obj] = None
    changed = set()
    for obj, stamp in wanted.items():
        path = Path(inspect.getsourcefile(obj))
        text = path.read_text(encoding="utf-8")  # read again for each name: an earlier one may have moved lines
        node = next((n for n in ast.parse(text).body if getattr(n, "name", None) == obj.__name__), None)
        doc = node.body[0] if node is not None and node.body else None
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
            continue  # no docstring of its own: test_public_api names it
        lines = text.splitlines(keepends=True)
        first, last = doc.lineno - 1, doc.end_lineno - 1
        source = "".join(lines[first:last + 1])
        quote = source.lstrip()[:3]
        opened, closed = source.index(quote) + 3, source.rindex(quote)
        old = source[opened:closed]
        indent = " " * doc.col_offset
        tail = old[len(old.rstrip()):]  # the closing quotes stay where they were, on the last line or their own
        kept = re.sub(r"\s*Taught in chapter \d\d \(notebooks/.*$", "", old, flags=re.S).rstrip()
        new = (kept if stamp is None else f"{kept}\n\n{indent}{_wrap(stamp, indent)}") + tail
        if new != old:
            lines[first:last + 1] = [source[:opened] + new + source[closed:]]
            path.write_text("".join(lines), encoding="utf-8")
            changed.add(path)
    return sorted(changed)


def _wrap(stamp, indent, width=120):
    """The stamp broken before ``width`` columns, continued at ``indent``."""
    lines, line = [], ""
    for word in stamp.split(" "):
        if line and len(indent) + len(line) + 1 + len(word) > width - 3:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return f"\n{indent}".join([*lines, line])


if __name__ == "__main__":
    for changed in rewrite_stamps():
        print(f"rewrote stamps in {changed}")
