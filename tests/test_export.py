"""The course's static HTML (`python -m roofline_lib.teach.export`): collapsed proof cells hidden, the rest of
the code shown, and the maths typeset by a MathJax copied beside the pages, in a browser with no network."""

import html
import json
import os
import re
from pathlib import Path

import pytest

from roofline_lib.teach import export

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "notebooks" / "01_time_bounds_and_intensity.ipynb"


def _code_cells(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(cell, "".join(cell["source"])) for cell in cells if cell["cell_type"] == "code" and cell["source"]]


def _page_text(page):
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    [written] = export.export([CHAPTER], out)
    return written


def test_collapsed_proof_cells_are_hidden_and_the_other_code_shows(page):
    text = _page_text(page)
    cells = _code_cells(CHAPTER)
    proofs = [src for cell, src in cells if cell["metadata"].get("jupyter", {}).get("source_hidden")]
    shown = [src for cell, src in cells if not cell["metadata"].get("jupyter", {}).get("source_hidden")]
    assert len(proofs) >= 5 and shown
    everywhere_else = {line.strip() for src in shown for line in src.splitlines()}
    hidden_lines = [line for src in proofs for line in src.splitlines()
                    if len(line.strip()) > 30 and line.strip() not in everywhere_else]
    assert hidden_lines and not [line for line in hidden_lines if line.strip() in text]
    visible = [src.splitlines()[0].strip() for src in shown if len(src.splitlines()[0].strip()) > 20]
    assert visible and all(line in text for line in visible)  # the control: code that is not folded shows


def test_the_maths_loads_from_the_copy_beside_the_page(page):
    body = page.read_text(encoding="utf-8")
    sources = re.findall(r'<script[^>]*src="([^"]*MathJax[^"]*)"', body, re.I)
    assert sources == [f"mathjax/MathJax.js?config={export.MATHJAX_CONFIG}"]
    assert (page.parent / "mathjax" / "MathJax.js").is_file()
    assert "cdnjs.cloudflare.com/ajax/libs/mathjax" not in body


def test_a_notebook_that_is_not_one_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="not a notebook file"):
        export.export([tmp_path / "missing.ipynb"], tmp_path / "out")


def _chromium():
    path = os.environ.get("ROOFLINE_CHROMIUM", "/usr/bin/chromium")
    return path if Path(path).exists() else None


@pytest.mark.skipif(_chromium() is None, reason="no Chromium (set ROOFLINE_CHROMIUM to run the offline rendering)")
def test_the_page_typesets_its_maths_with_no_network(page):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=_chromium(), args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context(offline=True)
            asked = []
            context.route(re.compile(r"^https?://"), lambda route: (asked.append(route.request.url), route.abort()))
            tab = context.new_page()
            tab.goto(page.as_uri())
            tab.wait_for_function("() => document.querySelectorAll('.MathJax_CHTML, .MathJax, mjx-container').length"
                                  " > 10", timeout=60_000)
            typeset = tab.evaluate("document.querySelectorAll('.MathJax_CHTML, .MathJax, mjx-container').length")
            raw = tab.evaluate("document.body.innerText.includes('$T_\\\\text{math}')")
        finally:
            browser.close()
    assert typeset > 10 and not raw
    assert not [url for url in asked if "mathjax" in url.lower()], asked
