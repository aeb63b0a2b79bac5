"""Chapters 05-10: the checks that keep the prose honest sit in collapsed cells, out of the reader's way.

Every assert in a lecture notebook is in a code cell whose source is collapsed
(``metadata.jupyter.source_hidden``) and that opens with a one-line comment saying what it checks, so a
reader sees the claim, the computation and its result, and the check still runs under nbval.
"""

import json
import pathlib
import re

import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = ["05_llm_inference", "06_optimizations", "07_measure_your_machine", "08_overhead_bound",
            "09_communication_bound", "10_reality_check"]
ASSERT = re.compile(r"^\s*assert\b", re.M)


@pytest.mark.parametrize("name", CHAPTERS)
def test_asserts_live_in_collapsed_cells_that_say_what_they_check(name):
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
    visible, silent, collapsed = [], [], 0
    for i, cell in enumerate(nb["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not ASSERT.search(source):
            continue
        if not cell["metadata"].get("jupyter", {}).get("source_hidden"):
            visible.append(i)
        elif not source.startswith("# "):
            silent.append(i)
        else:
            collapsed += 1
    assert collapsed >= 1, f"{name}: no collapsed check found (has the notebook lost its checks?)"
    assert visible == [], f"{name}: asserts in visible cells {visible}"
    assert silent == [], f"{name}: collapsed checks without a first-line comment {silent}"
