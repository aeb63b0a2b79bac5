"""Each submission's worker in a bubblewrap sandbox of its own (Linux), its limits, and its processes.

The grader starts ``bwrap ... python -m roofline_lib.teach.worker`` (command) for each submission. Inside: new user,
PID, network, IPC, UTS and mount namespaces; no network but a private loopback; read-only views of Python, the
installed course library (its package folder and data only: never the checkout's notebooks, tests or anything of
the teacher's home) and /usr; a private tmpfs /tmp of bounded size that holds the scratch folder, HOME and every
Jupyter or IPython folder, and is thrown away with the sandbox; a cleared environment. The submission itself comes
in on the worker's stdin, so no submission file is in view. The worker sets the per-process limits inside the
sandbox (apply_limits), where RLIMIT_NPROC counts the sandbox's own user namespace only, and the grader watches the
sandbox's process tree as a whole (Tracker) for what no per-process limit bounds: memory (memory files included),
CPU and files over all its processes. The worker is the sandbox's init (PID 1): when it ends, or the grader kills
it (kill_tree), the kernel ends every process in its PID namespace with it.

Where bwrap cannot be had, ``problem()`` says why, and the grader refuses to run without ``--unsandboxed`` (see
UNPROTECTED for what that exposes).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .proctree import all_stats, descendants, kill_tree, tree_stats

ROOT = "/tmp"  # the sandbox's tmpfs: everything it may write
SCRATCH = "/tmp/work"  # the kernel's working folder, with the copy of the submission
HOME = "/tmp/home"
MEMORY_MB = 6144  # all processes of one sandbox together (resident), when the kernel's own limit is 4096
PROCESSES = 256  # tasks (processes and threads) in one sandbox; a worker and its kernel use about 40
OPEN_FILES = 512  # per process
FILE_MB = 64  # the largest file a submission may write
SCRATCH_MB = 256  # the sandbox's /tmp (scratch, HOME) and /dev/shm together: it is memory
CPU_CORES = 1.25  # the most CPU one sandbox may use, averaged over CPU_WINDOW seconds
CPU_WINDOW = 4.0
SAMPLE_SECONDS = 0.1  # how often the grader looks at each sandbox's processes (a look costs ~1.5 ms of CPU)
# A process that starts and ends between two looks is never seen by the CPU watch; churning such children
# means starting many, which the namespace's pids count: at most SPAWNS in SPAWN_WINDOW seconds (an honest
# notebook starts none: its worker and kernel are pids 1 and 2), so at most SPAWNS / SPAWN_WINDOW x
# SAMPLE_SECONDS = 0.5 cores go unseen.
SPAWNS = 25
SPAWN_WINDOW = 5.0
INODES = 50_000  # files in the sandbox's /tmp: each costs the host kernel memory that no size limit counts

UNPROTECTED = (
    "the submission's code runs as this account, with this account's rights:",
    "  - it can read every file this account can (other submissions, the master notebooks, your home) and "
    "your environment variables",
    "  - it can write outside its scratch folder (the submissions and output folders, the course checkout, "
    "~/.ipython and ~/.local/share/jupyter, which later runs use)",
    "  - it can see and signal the grader and the other kernels, and use the network",
    "  - a child it starts can outlive its kernel; memory, processes and CPU are limited per process only",
)


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one sandbox may use. Per process (set inside, apply_limits): open files, file size, CPU seconds,
    tasks; for the sandbox as a whole (watched from outside, over): memory, tasks, CPU cores."""

    memory_mb: int = MEMORY_MB  # 0: not watched
    processes: int = PROCESSES
    open_files: int = OPEN_FILES
    file_mb: int = FILE_MB
    scratch_mb: int = SCRATCH_MB
    cpu_seconds: int = 300  # CPU time of any one process (the grader sets it from the notebook's time limit)
    cpu_cores: float = CPU_CORES

    def over(self, usage, history):
        """Why a sandbox with this ``usage`` (and its earlier Usages, ``history``) must stop, or ""."""
        if usage.tasks > self.processes:
            return f"ran {usage.tasks} processes and threads at once, more than the {self.processes} allowed"
        if self.memory_mb and usage.rss + usage.hidden > self.memory_mb * 2**20:
            held = f", {usage.hidden / 2**30:.1f} GB of it in memory files (memfd)" if usage.hidden > 2**30 else ""
            return (f"its processes used {(usage.rss + usage.hidden) / 2**30:.1f} GB of memory together{held}, "
                    f"more than the {self.memory_mb / 1024:.1f} GB allowed")
        if usage.inodes > INODES:
            return f"made {usage.inodes:,} files in its scratch folder, more than the {INODES:,} allowed"
        old = [u for u in history if usage.time - u.time >= CPU_WINDOW]
        if old and self.cpu_cores:
            rate = (usage.cpu - old[-1].cpu) / (usage.time - old[-1].time)
            if rate > self.cpu_cores:
                return (f"kept {rate:.1f} CPU cores busy for {usage.time - old[-1].time:.0f} s, more than the "
                        f"{self.cpu_cores:g} allowed ({usage.processes} processes)")
        # the latest look at least SPAWN_WINDOW old; in a sandbox younger than that, its first look (more than
        # SPAWNS in a shorter time is more than SPAWNS in SPAWN_WINDOW: no need to wait for the window to fill)
        since = ([u for u in history if usage.time - u.time >= SPAWN_WINDOW] or history[:1])[-1:]
        if since and usage.spawned - since[0].spawned > SPAWNS:
            return (f"started {usage.spawned - since[0].spawned} processes and threads in "
                    f"{usage.time - since[0].time:.1f} s, more than the {SPAWNS} allowed in {SPAWN_WINDOW:g} s "
                    "(children too short-lived for the CPU watch to see)")
        return ""


# ---------------------------------------------------------------- can it be had?


def _binds():
    """The host folders the sandbox sees, read-only: Python, the installed library, /usr."""
    import roofline_lib

    # Named as Python names them (not resolved): the sandbox must find them at the same paths.
    package = Path(os.path.abspath(roofline_lib.__file__)).parent
    paths = [Path("/usr"), Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix),
             Path(sys.base_exec_prefix), Path(os.path.realpath(sys.executable)).parent, package]
    if (package.parent / "data").is_dir() and not package.parent.name == "site-packages":
        paths.append(package.parent / "data")  # an editable install: the data beside it, nothing else
    chosen = []
    for path in sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: len(p.parts)):
        if path.is_dir() and not any(path.is_relative_to(c) for c in chosen):
            chosen.append(path)
    return chosen


def _library_path():
    """PYTHONPATH for the sandbox: the checkout the grader imported roofline_lib from, when that is not the
    installed package (a copy of the course run in place would otherwise import the editable install's)."""
    import roofline_lib

    package = Path(os.path.abspath(roofline_lib.__file__)).parent
    return {} if package.parent.name == "site-packages" else {"PYTHONPATH": str(package.parent)}


def environment():
    """The sandbox's whole environment: nothing of the teacher's."""
    venv_bin = str(Path(sys.executable).absolute().parent)
    return {**_library_path(), "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin", "HOME": HOME, "LANG": "C.UTF-8",
            "TMPDIR": ROOT, "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{HOME}/.matplotlib",
            "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1", "IPYTHONDIR": f"{HOME}/.ipython",
            "JUPYTER_CONFIG_DIR": f"{HOME}/.jupyter", "JUPYTER_DATA_DIR": f"{HOME}/.local/share/jupyter",
            "JUPYTER_RUNTIME_DIR": f"{HOME}/.local/share/jupyter/runtime", "JUPYTER_PLATFORM_DIRS": "1",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def command(argv, limits=Limits()):
    """The bwrap command line that runs ``argv`` in a fresh sandbox."""
    # --as-pid-1: the worker itself is the namespace's init. Otherwise bwrap's own init holds the worker's
    # report pipe (its stdout) and stays dumpable, so the kernel could open /proc/1/fd/1 and forge reports;
    # as init, the worker (made non-dumpable by apply_limits) also ignores kill(-1) from inside.
    cmd = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user", "--disable-userns",
           "--as-pid-1", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
           "--size", str(limits.scratch_mb * 2**20), "--tmpfs", ROOT]
    binds = _binds()
    for path in binds:
        cmd += ["--ro-bind", str(path), str(path)]
    # a venv made by a python3 that is itself a link outside these (a link in a folder of links): the links
    # themselves, not their folders
    path = Path(os.path.abspath(sys.executable))
    while path.is_symlink():
        target = os.readlink(path)
        if not any(path.is_relative_to(b) for b in binds):
            cmd += ["--symlink", target, str(path)]
        path = Path(os.path.abspath(path.parent / target))
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/") / name
        if top.is_symlink():
            cmd += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir() and not top.resolve().is_relative_to("/usr"):
            cmd += ["--ro-bind", str(top), str(top)]
    for name in ("/etc/ld.so.cache", "/etc/localtime"):  # the dynamic linker's list of /usr/lib folders
        if os.path.exists(name):
            cmd += ["--ro-bind", name, name]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(16 * 2**20), "--tmpfs", "/dev/shm",
            "--dir", SCRATCH, "--dir", HOME, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SCRATCH]
    for key, value in environment().items():
        cmd += ["--setenv", key, value]
    return [*cmd, "--", *argv]


@functools.lru_cache(maxsize=1)
def problem():
    """Why no sandbox can be had here ("" when it can): tried once, with the command the grader uses."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux (bubblewrap); this is {sys.platform}"
    if not shutil.which("bwrap"):
        return ("bubblewrap (bwrap) is not installed: apt-get install bubblewrap, dnf install bubblewrap, "
                "or run the grader in a container (docs/teaching.md)")
    probe = "import roofline_lib.teach.worker, ipykernel, os; os.listdir('/proc/1'); print('sandbox ok')"
    try:
        done = subprocess.run(command([sys.executable, "-c", probe]), capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap could not be run ({type(e).__name__}: {e})"
    if done.returncode != 0 or "sandbox ok" not in done.stdout:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1][:300]
        return (f"bwrap fails here ({why}); user namespaces may be disabled (sysctl "
                "kernel.unprivileged_userns_clone or user.max_user_namespaces), or this is a container "
                "that forbids them")
    return ""


# ---------------------------------------------------------------- inside: the worker's own limits


def apply_limits(limits):
    """Set the per-process limits of this process and everything it starts (called by the worker,
    inside the sandbox: there RLIMIT_NPROC counts the tasks of this sandbox's user namespace only)."""
    import resource

    wanted = {"RLIMIT_NOFILE": limits["open_files"], "RLIMIT_FSIZE": limits["file_mb"] * 2**20,
              "RLIMIT_CPU": limits["cpu_seconds"], "RLIMIT_NPROC": limits["processes"],
              "RLIMIT_CORE": 0}
    for name, value in wanted.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        _, hard = resource.getrlimit(which)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass
    try:  # no process of the same account (its own kernel) may open this one's files or memory
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


# ---------------------------------------------------------------- outside: its processes as a whole


@dataclasses.dataclass(frozen=True)
class Usage:
    """One look at what a sandbox's processes use: CPU seconds, resident and hidden memory, processes, threads and
    files."""

    time: float  # monotonic
    processes: int
    tasks: int  # processes and their threads
    cpu: float  # CPU seconds of all of them, of those they have reaped, and of those gone unreaped
    rss: int  # bytes resident, summed (shared pages count once per process)
    pids: tuple
    hidden: int = 0  # bytes in memory files (memfd) its processes hold open or mapped: in nobody's RSS
    inodes: int = 0  # files in its /tmp
    spawned: int = 0  # processes and threads started in it so far (its PID namespace's highest pid)


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _memory_files(p, seen):
    """Bytes of the memory files (memfd) process ``p`` holds open or mapped that ``seen`` (inodes) lacks."""
    total = 0
    try:
        fds = os.listdir(f"/proc/{p}/fd")
    except OSError:
        fds = []
    for fd in fds:
        try:
            if os.readlink(f"/proc/{p}/fd/{fd}").startswith("/memfd:"):
                st = os.stat(f"/proc/{p}/fd/{fd}")
                if st.st_ino not in seen:
                    seen[st.st_ino] = st.st_blocks * 512
                    total += seen[st.st_ino]
        except OSError:
            continue
    try:  # mapped, its descriptor closed: the mapping's length (an upper bound)
        with open(f"/proc/{p}/maps", "rb") as f:
            maps = f.read()
        for line in maps.splitlines() if b"/memfd:" in maps else ():  # most processes map none: one search
            if b"/memfd:" in line:
                span, _, _, _, inode = line.split(None, 5)[:5]
                if int(inode) not in seen:
                    start, end = (int(x, 16) for x in span.split(b"-"))
                    seen[int(inode)] = end - start
                    total += end - start
    except (OSError, ValueError):
        pass
    return total


def _inodes(tree):
    """Files in the sandbox's /tmp, seen through any of its processes that may be looked into and has the
    sandbox's root. bwrap itself, the tree's root, sees the host's /tmp; so does its child between unsharing the
    mount namespace and pivoting into the new root, a window a loaded machine widens: counted there, an honest
    notebook would be charged every file of the host's disk."""
    try:
        ours, host_root = os.readlink("/proc/self/ns/mnt"), os.stat("/")
    except OSError:
        return 0
    for p in tree:
        try:
            if os.readlink(f"/proc/{p}/ns/mnt") == ours or os.path.samestat(os.stat(f"/proc/{p}/root"), host_root):
                continue
            st = os.statvfs(f"/proc/{p}/root{ROOT}")
            return st.f_files - st.f_ffree
        except OSError:
            continue
    return 0


def _highest_inner_pid(tree):
    """The highest pid inside the sandbox's PID namespace among ``tree``: pids there are handed out in order,
    so it counts the processes and threads started in it (short-lived ones included)."""
    highest = 0
    for p in tree:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("NSpid:"):
                        ids = line.split()[1:]
                        if len(ids) > 1:  # in a namespace below ours
                            highest = max(highest, int(ids[-1]))
                        break
        except (OSError, ValueError):
            continue
    return highest


class Tracker:
    """Follows one sandbox's tree between samples, so that CPU time is not lost when a process vanishes
    unreaped (a notebook that ignores SIGCHLD has its children reaped by the kernel, and their CPU time
    reaches no parent's cutime). Still unseen: a process that starts and ends between two samples."""

    def __init__(self):
        self.last = {}  # pid -> its own CPU ticks (utime + stime) at the last sample
        self.reaped = {}  # pid -> its cutime + cstime at the last sample
        self.gone = 0  # ticks of vanished processes that no surviving process reaped
        self.spawned = 0

    def __call__(self, pid):
        stats = tree_stats(pid)
        if stats is None:
            stats = all_stats()
            tree = [p for p in descendants(pid, stats) if p in stats]
        else:
            tree = list(stats)
        cpu = tasks = rss = 0
        own, reaped = {}, {}
        for p in tree:
            f = stats[p]
            own[p], reaped[p] = int(f[11]) + int(f[12]), int(f[13]) + int(f[14])
            tasks += int(f[17])
            rss += int(f[21]) * _PAGE
        vanished = sum(ticks + self.reaped[p] for p, ticks in self.last.items() if p not in own)
        newly_reaped = sum(max(0, r - self.reaped.get(p, 0)) for p, r in reaped.items())
        self.gone += max(0, vanished - newly_reaped)
        self.last, self.reaped = own, reaped
        cpu = sum(own.values()) + sum(reaped.values()) + self.gone
        seen = {}
        hidden = sum(_memory_files(p, seen) for p in tree)
        self.spawned = max(self.spawned, _highest_inner_pid(tree))
        return Usage(time.monotonic(), len(tree), tasks, cpu / _TICK, rss, tuple(tree), hidden, _inodes(tree),
                     self.spawned)


def usage(pid):
    """What the process tree under ``pid`` uses now (one look; a Tracker follows it over time)."""
    return Tracker()(pid)


__all__ = ["apply_limits", "command", "descendants", "environment", "HOME", "kill_tree", "Limits", "problem",
           "SCRATCH", "Tracker", "UNPROTECTED", "Usage", "usage"]
