"""README.md's Python examples run as written, so the front page cannot drift from the library."""

import pathlib
import re

import matplotlib
import pytest

matplotlib.use("Agg")

README = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.strip().splitlines()[0][:40])
def test_readme_example_runs(block):
    # the library tour leaves measured_seconds to the reader: one millisecond stands in for it
    namespace = {"measured_seconds": 1e-3}
    exec(compile("import roofline_lib as rl\n" + block, "README.md", "exec"), namespace)


def test_the_serving_techniques_the_readme_names_exist():
    import roofline_lib as rl

    lines = README.split("# serving techniques, each with the number it changes:", 1)[1].splitlines()
    comment = lines[0] + " " + " ".join(line.lstrip("# ") for line in lines[1:3] if line.startswith("#"))
    named = re.sub(r"\([^)]*\)", "", comment).replace("rl.serving.", "")  # the asides in brackets dropped
    names = [n.strip() for n in named.split(",")]
    assert len(names) >= 6, names
    assert all(hasattr(rl.serving, n) for n in names), [n for n in names if not hasattr(rl.serving, n)]
