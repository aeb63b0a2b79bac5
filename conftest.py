"""Loaded for every pytest run from this repository, whatever paths it is given (tests/conftest.py holds the rest)."""

from pathlib import Path

SANITIZE = Path(__file__).resolve().parent / "tests" / "nbval_sanitize.cfg"


def pytest_configure(config):
    # nbval blanks the few machine-measured figures in the chapters' compared outputs (the file says which);
    # here, not in addopts, so that the path holds from any working directory and for a notebook run alone
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(SANITIZE)
