"""The lecture notebooks as readers without a kernel see them (GitHub, nbviewer, exported HTML):
no widget reprs, and every image in the prose has alt text (issue 12)."""

import json
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LECTURES = sorted(NOTEBOOKS.glob("*.ipynb"))
WIDGET_REPR = "VBox(children="
FALLBACK = "live explorer: run the notebook"

MARKDOWN_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)]*)\)")
HTML_IMAGE = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
ALT = re.compile(r"""\balt\s*=\s*(["'])(?P<alt>.*?)\1""", re.IGNORECASE | re.DOTALL)


def images_without_alt(markdown):
    """The images in a markdown text whose alt text is missing or blank."""
    bad = [m.group(0) for m in MARKDOWN_IMAGE.finditer(markdown) if not m.group("alt").strip()]
    for tag in HTML_IMAGE.findall(markdown):
        alt = ALT.search(tag)
        if alt is None or not alt.group("alt").strip():
            bad.append(tag)
    return bad


def test_there_are_lecture_notebooks():
    assert len(LECTURES) >= 12, [p.name for p in LECTURES]


def test_the_alt_text_check_can_fail():
    assert images_without_alt("see ![](figs/roof.png) and ![ ](x.png)") == ["![](figs/roof.png)", "![ ](x.png)"]
    assert images_without_alt('<img src="a.png"> <IMG SRC=b.png alt=""> <img alt="roofline" src="c.png">') == [
        '<img src="a.png">', '<IMG SRC=b.png alt="">']
    assert images_without_alt("![the H200 roofline](figs/roof.png)") == []


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_every_image_in_the_prose_has_alt_text(path):
    cells = json.loads(path.read_text())["cells"]
    bad = {i: images_without_alt("".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "markdown"}
    assert {i: b for i, b in bad.items() if b} == {}, path.name


def _html(notebook):
    """The exported page's outputs (what a widget repr would show up in); the code inputs, whose highlighting is
    nine tenths of an export's time, are left out."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(exclude_input=True).from_notebook_node(notebook)
    return body


def test_the_html_check_sees_a_widget_repr():
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("explorer.widget()", outputs=[nbformat.v4.new_output(
        "execute_result", data={"text/plain": "VBox(children=(HBox(children=(FloatLogSlider(value=50.0),)),))"},
        execution_count=1)]))
    assert WIDGET_REPR in _html(nb)


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_exported_html_shows_no_widget_repr(path):
    notebook = nbformat.read(path, as_version=4)
    body = _html(notebook)
    assert WIDGET_REPR not in body, path.name
    has_explorer = any("explorer" in c.get("metadata", {}).get("tags", []) for c in notebook.cells)
    if has_explorer:  # the reader sees the sentence in place of the widget
        assert FALLBACK in body, path.name


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_only_explorer_cells_store_a_live_canvas(path):
    """A figure that is not an explorer is stored as a plain image: GitHub and nbviewer show it as the
    reader will see it, with no widget model behind it."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    live = [i for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"
            and "explorer" not in cell["metadata"].get("tags", [])
            and any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell.get("outputs", []))]
    assert live == [], f"{path.name}: cells {live} store a live canvas; switch back with %matplotlib inline"
