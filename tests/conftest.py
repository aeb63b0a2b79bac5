import compileall
import os
from pathlib import Path

import matplotlib
import pytest

# Tests draw figures off-screen; notebooks choose their own backend.
matplotlib.use("Agg")

# The suite runs in parallel (pytest-xdist; pyproject.toml's addopts: -n auto --dist loadfile). Each file
# goes whole to one worker: nbval runs one notebook's cells in order in one kernel, and a module's fixtures
# are built once. Files are handed out in collection order (--no-loadscope-reorder), so the slowest go
# first: started last, one of them would keep a worker busy long after the others ran out of work.
# These files run kernels, a browser or sandboxes; they and the notebooks carry the mark `slow`, so that
# `python -m pytest -m "not slow"` checks the library and the committed files in about a minute.
SLOWEST_FIRST = [
    "tests/test_browser.py", "tests/test_grade_sandbox.py", "tests/test_student.py", "tests/test_grade_hostile.py",
    "tests/test_grade.py", "tests/test_old_widgets.py", "tests/test_platforms.py", "tests/test_lab.py",
    "tests/test_packaging.py", "tests/test_notebook_metadata.py", "tests/test_device_record.py",
    "tests/test_device.py", "tests/test_import_contract.py",
]


def _where(item, config):
    try:
        return item.path.relative_to(config.rootpath).as_posix()
    except ValueError:  # outside the repository
        return ""


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    for item in items:
        where = _where(item, config)
        if where in rank or where.endswith(".ipynb"):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: rank.get(_where(item, config), len(rank)))  # stable: a file's order stays


def pytest_configure(config):
    """Once, in the process that starts the others: the library compiled to bytecode. About 150 processes of the
    suite import it (kernels, grader workers, servers); where PYTHONDONTWRITEBYTECODE is set, as on CI machines,
    none of them would keep what it compiled, and each would compile the library again."""
    if not hasattr(config, "workerinput"):  # not an xdist worker
        # Four workers share the machine's cores, each starting kernels: a BLAS or OpenMP pool per process only
        # spins on cores another process is using (the grader's kernel_env does the same for its kernels).
        # Inherited by the workers and every kernel they start; a variable already set is kept.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        compileall.compile_dir(Path(__file__).resolve().parents[1] / "roofline_lib", quiet=1)
        _rewrite_test_files_once(config)


def _rewrite_test_files_once(config):
    """The test files with pytest's assertion rewriting, cached where each worker looks for them. A worker reads a
    cached rewrite even where it may not write one (PYTHONDONTWRITEBYTECODE); without this each of the four
    rewrites every test file again, about 3.5 s of CPU each. Uses pytest's own (internal) rewriter and cache
    format, so a pytest that changes them is only slower: the workers then rewrite as before."""
    if config.getoption("assertmode") != "rewrite":
        return
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        here = Path(__file__).resolve().parent
        for path in [here / "conftest.py", *sorted(here.glob("test_*.py"))]:
            pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(path, pyc) is None and rewrite.try_makedirs(pyc.parent):
                source_hash, code = rewrite._rewrite_test(path, config)
                rewrite._write_pyc(state, code, source_hash, pyc)
    except (ImportError, AttributeError, KeyError, TypeError, ValueError, OSError):
        return
