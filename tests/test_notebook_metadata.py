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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_cell_stores_what_a_run_rewrites(path):
    """No run timings ('execution', which JupyterLab drops when a cell runs: recordTiming is off by default) and no
    widget state (saved only if 'Save Widget State Automatically' is on, off by default): either would churn."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert set(nb["metadata"]) == {"kernelspec", "language_info"}
    stored = sorted({key for cell in nb["cells"] for key in cell["metadata"]} - {"tags", "jupyter"})
    assert not stored, f"{path.name}: cell metadata {stored}"


def _without_outputs(nb):
    nb = json.loads(json.dumps(nb))
    nb["metadata"]["language_info"].pop("version", None)  # the learner's Python, whichever it is
    for cell in nb["cells"]:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    return nb


@pytest.mark.parametrize("name", ["00_start_here.ipynb"])
def test_running_a_master_in_a_fresh_kernel_and_saving_it_changes_only_outputs(name, tmp_path):
    """What autosave writes after Run All, minus outputs and execution counts, is the stored file: a learner's
    `git pull` meets no clash outside outputs. (JupyterLab's defaults: no timings, no widget state.) One chapter
    run: what a run could add outside the outputs (timings, widget state, notebook metadata) is the same for
    every chapter, and test_no_cell_stores_what_a_run_rewrites checks every stored file for it."""
    import nbclient
    import nbformat

    path = next(p for p in NOTEBOOKS if p.name == name)
    stored = path.read_text(encoding="utf-8")
    nb = nbformat.reads(stored, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                                     store_widget_state=False, resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    saved = nbformat.writes(nb) + "\n"  # what the server's save writes
    assert _without_outputs(json.loads(saved)) == _without_outputs(json.loads(stored))
