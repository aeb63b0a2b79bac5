"""The processes below a pid, read from Linux's /proc: what the grader watches and stops (sandbox.Tracker,
sandbox.kill_tree). Linux only, as the sandbox is: where there is no /proc (macOS, Windows) the grader runs
unsandboxed and does not watch (run.py checks for /proc), the lookups return nothing and kill_tree signals the
pid and its group alone."""

from __future__ import annotations

import os
import signal


def all_stats():
    """{pid: stat fields after the command name} of every process in /proc."""
    found = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    found[int(name)] = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
    return found


def tree_stats(pid):
    """{pid: stat fields} of ``pid`` and every process below it, found through each thread's list of children
    (/proc/PID/task/TID/children): a few files a look where a scan of /proc reads every process's. None where
    the kernel keeps no such lists (built without CONFIG_PROC_CHILDREN)."""
    if not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        return None if os.path.exists(f"/proc/{pid}") else {}
    found, todo = {}, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                found[p] = f.read().rsplit(b")", 1)[1].split()
            tasks = os.listdir(f"/proc/{p}/task")
        except (OSError, IndexError):
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children", "rb") as f:
                    todo.extend(int(c) for c in f.read().split() if int(c) not in found)
            except (OSError, ValueError):
                continue
    return found


def descendants(pid, stats=None):
    """``pid`` and every process below it (Linux /proc; just ``pid`` elsewhere)."""
    stats = all_stats() if stats is None else stats
    children = {}
    for child, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(child)
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, ()))
    return tree


def kill_tree(pid):
    """SIGKILL ``pid`` (the grader's own child), its process group and every process under it.

    Only processes found below the grader's own child are signalled: never a pid a worker names."""
    tree = descendants(pid) if os.path.isdir("/proc") else [pid]  # pid first
    try:
        os.killpg(pid, signal.SIGKILL)  # the grader starts each worker as the leader of its own group
    except OSError:
        pass  # not a group leader: its group's other members are in the tree anyway
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


__all__ = ["all_stats", "descendants", "kill_tree", "tree_stats"]
