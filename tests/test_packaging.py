"""The library as a real package: a wheel built from the repository's files, installed into a fresh
virtual environment, works from any directory (the data files travel inside it).

Building uses pip (setuptools comes through pip's own cache or index, as for any install); where
neither can be reached the test is skipped and says so.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHECK = r"""
import pathlib, sys
import roofline_lib as rl
from roofline_lib.core import catalog

here = pathlib.Path(rl.__file__).resolve()
assert "site-packages" in here.parts, f"imported the checkout, not the wheel: {here}"
assert catalog.DATA_DIR == here.parent / "data", catalog.DATA_DIR
chips = rl.list_accelerators()
models = rl.specs.list_models()
for name in chips:
    rl.get_accelerator(name)
for name in models:
    rl.estimate(rl.decode_step(name, 1, 128), "H200")
assert rl.get_accelerator("H200").name == "H200 SXM"
assert rl.get_model("llama-2-7b").n_params > 6e9
records = rl.measurements.published_measurements()
print(len(chips), len(models), len(records))
"""


def run(*cmd, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def skip_or_fail(step, result):
    text = (result.stdout + result.stderr)[-2000:]
    offline = any(word in text for word in ("No matching distribution", "Could not find a version",
                                            "NewConnectionError", "Network is unreachable", "Temporary failure"))
    if offline:
        pytest.skip(f"{step}: pip cannot reach setuptools or numpy here (no index, no cache): {text[-300:]}")
    pytest.fail(f"{step} failed:\n{text}")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    # Build from a copy of what the repository tracks for the package, so no build/ or egg-info is left
    # in the checkout and nothing untracked slips in.
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("roofline_lib", "data"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    dist = tmp_path_factory.mktemp("dist")
    result = run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, src, cwd=src)
    if result.returncode:
        skip_or_fail("building the wheel", result)
    (path,) = dist.glob("roofline_lib-*.whl")
    return path


def test_wheel_holds_every_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "roofline_lib").rglob("*.py")}
    assert modules - names == set(), "modules missing from the wheel (add their package to pyproject.toml)"
    data = {"roofline_lib/" + p.relative_to(ROOT).as_posix() for p in (ROOT / "data").rglob("*")
            if p.is_file() and p.suffix in (".toml", ".md")}
    assert data and data - names == set()


def test_wheel_installed_in_a_fresh_venv_loads_every_chip_and_model(wheel, tmp_path):
    venv = tmp_path / "venv"
    result = run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    # the outer pip installs into the new environment (--python), so the venv needs no pip of its own
    result = run(sys.executable, "-m", "pip", "--python", python, "install", "-q", wheel, cwd=tmp_path)
    if result.returncode:
        skip_or_fail("installing the wheel", result)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run(python, "-c", CHECK, cwd=elsewhere, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    chips, models, records = map(int, result.stdout.split())
    assert chips >= 20 and models >= 7 and records > 0
