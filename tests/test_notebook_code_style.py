"""Code cells fit a laptop screen: no code line of a lecture or exercise edition is over 100 characters (at
1366 px with JupyterLab's file browser open, a longer line scrolls sideways), and the lecture editions are
formatted by ruff at that width (`ruff format --isolated --line-length 100 notebooks/NN_topic.ipynb`)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 100
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "notebooks" / "student").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_code_line_is_over_100_characters(path):
    long = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] == "code":
            long += [f"cell {index + 1}: {len(line)} characters: {line[:60]}..."
                     for line in "".join(cell["source"]).split("\n") if len(line) > LIMIT]
    assert not long, f"{path.name}:\n" + "\n".join(long)


def _ruff():
    found = Path(sys.executable).with_name("ruff")
    return str(found) if found.exists() else shutil.which("ruff")


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed (pip install -r requirements.txt has it)")
def test_the_lecture_editions_are_ruff_formatted_at_100():
    masters = [str(p) for p in NOTEBOOKS if p.parent.name == "notebooks"]
    done = subprocess.run([_ruff(), "format", "--isolated", "--line-length", str(LIMIT), "--check", *masters],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
