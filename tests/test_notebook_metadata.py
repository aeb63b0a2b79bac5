"""Notebooks open clean: their stored kernelspec is the one JupyterLab writes back, so an untouched notebook is not
marked changed on open."""

import json
import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("**/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_kernelspec_is_ipykernels(path):
    spec = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
    assert spec == {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
