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
