"""The submissions folder: every entry accounted for, each notebook read safely, named safely.

A student's name is the file name without ``.ipynb``, decoded with replacement
(a zip made on a Chinese Windows has GBK names) and cleaned of control codes.
Sizes and kinds are checked from ``lstat`` before anything is read, and a
symbolic link, a FIFO or a device is never opened (nor followed), so no entry
can hang or flood the grader, or make it read a file outside the folder.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import stat

from .discovery import MAX_FILE_BYTES
from .text import file_name

_KINDS = {stat.S_ISLNK: "a symbolic link (copy the file itself into the folder)", stat.S_ISDIR: "a folder",
          stat.S_ISFIFO: "a named pipe (FIFO)", stat.S_ISSOCK: "a socket",
          stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device"}


@dataclasses.dataclass
class Submission:
    """One entry of the submissions folder: the student's name (from the file name), the notebook's bytes, or None and
    why it could not be read."""

    student: str
    data: bytes | None  # None when it could not be read
    problem: str = ""  # why not


def _kind(mode):
    return next((name for test, name in _KINDS.items() if test(mode)), "not a regular file")


def _read(path):
    """(bytes, "") or (None, why not) for one ``*.ipynb`` entry."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return None, f"not graded: {_kind(st.st_mode)}, not a notebook file"
        if st.st_size > MAX_FILE_BYTES:
            return None, f"not graded: the file is {st.st_size / 1e6:.0f} MB, more than {MAX_FILE_BYTES / 1e6:.0f} MB"
        # O_NONBLOCK: if the entry was swapped for a FIFO since stat, open does not wait for a writer;
        # O_NOFOLLOW: nor, if it was swapped for a link, is the link followed.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None, "not graded: not a regular file"
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return None, f"not graded: the file is larger than {MAX_FILE_BYTES / 1e6:.0f} MB"
        return data, ""
    except OSError as e:
        return None, f"not graded: could not be read ({os.strerror(e.errno) if e.errno else e})"


def submissions(folder):
    """(submissions, ignored): a Submission per ``*.ipynb`` entry, read now; other names, listed."""
    found, ignored, names = [], [], set()
    try:
        entries = sorted(os.listdir(os.fsencode(folder)))
    except OSError as e:
        raise ValueError(f"cannot list {folder}: {os.strerror(e.errno or errno.EIO)}") from None
    for raw in entries:
        if not raw.endswith(b".ipynb") or raw == b".ipynb":
            ignored.append(file_name(raw))
            continue
        student = base = file_name(raw[:-len(b".ipynb")])
        n = 2
        while student in names:  # two raw names that clean to the same text stay two students
            student, n = f"{base} ({n})", n + 1
        names.add(student)
        data, problem = _read(os.path.join(os.fsencode(folder), raw))
        found.append(Submission(student, data, problem))
    return found, ignored


__all__ = ["Submission", "submissions"]
