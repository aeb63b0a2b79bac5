"""A folder of TOML files, one item each, looked up by name or alias (used for chips and models)."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import pathlib
import re
import time
import tomllib

from .checks import figure_problem


def build_checked(cls, **values):
    """An instance of the dataclass ``cls`` from values a loader has already checked field by field: its
    ``__post_init__`` (which checks what a learner passes to the constructor) does not run again."""
    obj = object.__new__(cls)
    for f in dataclasses.fields(cls):
        if f.name in values:
            value = values[f.name]
        elif f.default is not dataclasses.MISSING:
            value = f.default
        else:
            value = f.default_factory()
        object.__setattr__(obj, f.name, value)
    return obj


def data_dir():
    """The folder of data files: ``roofline_lib/data`` inside an installed wheel (setuptools maps the
    repository's ``data/`` there at build time, see pyproject.toml), else the repository's ``data/``
    beside the package (a checkout, or an editable install)."""
    package = pathlib.Path(__file__).resolve().parent.parent
    packaged = package / "data"
    return packaged if (packaged / "accelerators").is_dir() else package.parent / "data"


DATA_DIR = data_dir()


def read_toml(path):
    """The table in a TOML file; a file that is not valid TOML raises ValueError naming the file."""
    path = pathlib.Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path.name}: not valid TOML ({exc})") from None


def read_records(path):
    """(path, the file's ``source``, its ``[[record]]`` tables) of a file of published records; ValueError naming
    the file where the source or the records are missing. The inference and training loaders share it."""
    path = pathlib.Path(path)
    raw = read_toml(path)
    source = str(raw.get("source", "")).strip()
    if not source:
        raise ValueError(f"{path.name}: field 'source' is missing: name the repository and file, the paper or the URL")
    records = raw.get("record")
    if not isinstance(records, list) or not records:
        raise ValueError(f"{path.name}: no [[record]] tables")
    return path, source, records


class Entry:
    """One table read from a data file, and the errors about it: each names the file, the entry and the field.

    The loaders of chips, models and published records share it, so a mistake in any data file reads
    the same way: "h200.toml (chip 'H200'): field 'mem_bandwidth_TBps' must be finite and > 0, got 0".
    """

    def __init__(self, raw, where):
        self.raw, self.where = raw, where

    def fail(self, field, problem):
        """Raise the ValueError for ``field``: the file, the entry, the field, then ``problem``."""
        raise ValueError(f"{self.where}: field {field!r} {problem}")

    def require(self, fields):
        """Raise for the first of ``fields`` the entry lacks."""
        for field in fields:
            if field not in self.raw:
                self.fail(field, "is missing")

    def figure(self, field, value, **kwargs):
        """``value`` if ``validation.figure_problem`` finds nothing wrong with it, else the error for ``field``."""
        problem = figure_problem(value, **kwargs)
        if problem:
            self.fail(field, problem)
        return value


@functools.lru_cache(maxsize=4096)
def name_key(name):
    """'H200-SXM', 'h200 sxm', 'Llama-2.7B' -> one spelling: case, spaces, '-', '_' and '.' ignored."""
    return re.sub(r"[\s_\-.]+", "", name.lower())


class Catalog:
    """Items loaded by ``load(path)`` from ``directory/*.toml``, reloaded when a file changes.

    The folder is looked at again (every file's modification time) at most once every
    ``recheck_seconds``, so a loop that looks a chip up thousands of times does not stat every file
    each time, while a file edited by hand is seen by the next cell a reader runs.
    """

    recheck_seconds = 0.5

    def __init__(self, directory, load, kind):
        self.directory = pathlib.Path(directory)
        self.load = load
        self.kind = kind  # "accelerator", "model": for messages
        self._stamp, self._items, self._checked = None, {}, -math.inf

    def items(self):
        """Map of name key -> item, every name and alias included."""
        now = time.monotonic()
        if now - self._checked < self.recheck_seconds:
            return self._items
        stamp = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in self.directory.glob("*.toml")))
        if stamp != self._stamp:
            items = {}
            for path in sorted(self.directory.glob("*.toml")):
                item = self.load(path)
                for label in (item.name, *item.aliases):
                    key = name_key(label)
                    if key in items and items[key].name != item.name:
                        raise ValueError(f"{path.name}: name or alias {label!r} is already used by "
                                         f"{items[key].name!r}")
                    items[key] = item
            self._stamp, self._items = stamp, items
        self._checked = time.monotonic()
        return self._items

    def names(self):
        """Every item's name, once each (aliases left out), in the order of the files."""
        return list(dict.fromkeys(item.name for item in self.items().values()))

    def get(self, name):
        """The item named ``name`` or one of its aliases (case, spaces, '-', '_' and '.' ignored); a ValueError naming
        close matches and every known name otherwise."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r}")
        items = self.items()
        key = name_key(name)
        if key in items:
            return items[key]
        close = difflib.get_close_matches(key, list(items), n=5, cutoff=0.5)
        names = list(dict.fromkeys(items[c].name for c in close))
        hint = f"; did you mean {', '.join(repr(n) for n in names)}?" if names else ""
        raise ValueError(f"unknown {self.kind} {name!r}{hint} Known: {', '.join(self.names())}")


class CachedFile:
    """What ``parse(path)`` makes of one data file, parsed (and checked) once and again only when the file
    changes; like a ``Catalog``, the file's modification time is looked at most once every
    ``recheck_seconds``, so a hand edit is seen by the next cell a reader runs."""

    recheck_seconds = Catalog.recheck_seconds

    def __init__(self, path, parse):
        self.path = pathlib.Path(path)
        self.parse = parse
        self._stamp, self._value, self._checked = None, None, -math.inf

    def value(self):
        """The parsed file: the one kept, unless the file changed since it was parsed."""
        now = time.monotonic()
        if now - self._checked < self.recheck_seconds:
            return self._value
        stamp = self.path.stat().st_mtime_ns
        if stamp != self._stamp:
            self._value = self.parse(self.path)  # a file that fails its checks raises here, and stays unkept
            self._stamp = stamp
        self._checked = time.monotonic()
        return self._value

    def reload(self):
        """Parse the file again at the next ``value()``, changed or not."""
        self._stamp, self._checked = None, -math.inf


__all__ = ["CachedFile", "Catalog", "DATA_DIR", "data_dir", "Entry", "name_key", "read_records", "read_toml"]
