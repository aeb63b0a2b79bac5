"""Loaded for every pytest run from this repository, whatever paths it is given (tests/conftest.py holds the rest)."""

from pathlib import Path

SANITIZE = Path(__file__).resolve().parent / "tests" / "nbval_sanitize.cfg"


def pytest_configure(config):
    # nbval blanks the few machine-measured figures in the chapters' compared outputs (the file says which);
    # here, not in addopts, so that the path holds from any working directory and for a notebook run alone
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(SANITIZE)


def pytest_xdist_auto_num_workers(config):
    # `-n auto` (pyproject's addopts): two workers a core, at most 4 (--maxprocesses). Much of the suite waits
    # rather than computes (kernels starting, sandboxed attacks sleeping out their limits, a browser waiting
    # for frames), so a worker a core leaves the cores idle half the run.
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 2 * cores


def _kernels_on_unix_sockets():
    """Kernels this suite starts (nbval's, nbclient's) talk over Unix sockets, not TCP, where there are any.
    With TCP a kernel's ports are picked free a moment before it binds them, and with several workers starting
    kernels at once another kernel can take one first ('ZMQError: Address already in use', then 'Kernel died
    before replying to kernel_info': seen in full runs here). Each kernel gets socket files of its own in a
    folder of this process's, removed at exit."""
    import atexit
    import itertools
    import os
    import shutil
    import tempfile

    if os.name != "posix":
        return
    from jupyter_client.connect import ConnectionFileMixin

    ConnectionFileMixin.class_traits()["transport"].default_value = "ipc"
    folder, count = None, itertools.count()
    write = ConnectionFileMixin.write_connection_file

    def write_connection_file(self, **kwargs):
        nonlocal folder
        if self.transport == "ipc" and not os.path.isabs(self.ip):  # the default: "kernel-ipc" in the cwd
            if folder is None:
                folder = tempfile.mkdtemp(prefix="roofline-kernels-")
                atexit.register(shutil.rmtree, folder, ignore_errors=True)
            self.ip = os.path.join(folder, f"k{next(count)}")
        return write(self, **kwargs)

    ConnectionFileMixin.write_connection_file = write_connection_file


_kernels_on_unix_sockets()


# The Chinese editions (notebooks/zh/) are the masters' code with the masters' outputs, so strict nbval on the
# masters covers them; chapter 00 also runs for real, so that its self-check lines, re-said in Chinese when the
# edition is built, are what rl.set_language("zh") prints (tests/test_i18n.py checks the rest without a kernel).
ZH_RUN_FOR_REAL = {"notebooks/zh/00_start_here.ipynb"}


def pytest_ignore_collect(collection_path, config):
    try:
        where = collection_path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return None
    if where.startswith("notebooks/zh/") and where.endswith(".ipynb") and where not in ZH_RUN_FOR_REAL:
        return True
    return None
