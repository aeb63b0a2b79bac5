"""Static HTML of the chapters that reads as JupyterLab shows them: collapsed proof cells stay hidden and the
maths renders with no network (MathJax from the jupyter-server-mathjax package, copied beside the pages).

    python -m roofline_lib.teach.export                                  # every lecture edition -> build/html/
    python -m roofline_lib.teach.export notebooks/05_llm_inference.ipynb --out site/

GitHub's and nbviewer's own renderings are theirs: they show a collapsed cell's code (they ignore
``metadata.jupyter.source_hidden``) and load MathJax from the web; this export is the course's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from .student import masters

MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"  # the configuration jupyter-server-mathjax ships
MATHJAX_FOLDER = "mathjax"  # beside the pages, so that a copied folder keeps working


def mathjax_source():
    """The folder holding MathJax.js, from the jupyter-server-mathjax package."""
    try:
        import jupyter_server_mathjax
    except ImportError:
        raise SystemExit("the export needs jupyter-server-mathjax for offline maths: "
                         "pip install -r requirements.txt (or pip install jupyter-server-mathjax)") from None
    folder = Path(jupyter_server_mathjax.__file__).parent / "static"
    if not (folder / "MathJax.js").is_file():
        raise SystemExit(f"jupyter-server-mathjax has no MathJax.js in {folder}: reinstall it")
    return folder


def _hide_collapsed():
    from nbconvert.preprocessors import Preprocessor

    class HideCollapsed(Preprocessor):
        """A cell collapsed in the notebook (``metadata.jupyter.source_hidden`` / ``outputs_hidden``) loses that
        part in the page: nbconvert's templates skip a source marked ``transient.remove_source``."""

        def preprocess_cell(self, cell, resources, index):
            folded = cell.metadata.get("jupyter", {})
            if folded.get("source_hidden"):
                cell.metadata.setdefault("transient", {})["remove_source"] = True
            if folded.get("outputs_hidden") and cell.cell_type == "code":
                cell.outputs = []
            return cell, resources

    return HideCollapsed


def exporter():
    """nbconvert's HTML exporter with JupyterLab's look, proof cells hidden and MathJax from the folder beside the
    pages."""
    from nbconvert import HTMLExporter

    html = HTMLExporter(template_name="lab", mathjax_url=f"{MATHJAX_FOLDER}/MathJax.js?config={MATHJAX_CONFIG}")
    html.register_preprocessor(_hide_collapsed(), enabled=True)
    return html


def export(notebooks, out):
    """Write one page per notebook into ``out``, MathJax beside them; return the pages' paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(mathjax_source(), out / MATHJAX_FOLDER, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    html, pages = exporter(), []
    for notebook in map(Path, notebooks):
        if notebook.suffix != ".ipynb" or not notebook.is_file():
            raise SystemExit(f"{notebook}: not a notebook file (give .ipynb files, or nothing for every chapter)")
        body, _ = html.from_filename(str(notebook))
        page = out / f"{notebook.stem}.html"
        page.write_text(body, encoding="utf-8")
        pages.append(page)
    return pages


def main(argv=None):
    """``python -m roofline_lib.teach.export``: write static HTML pages of the chapters (every lecture edition, or those
    named)."""
    parser = argparse.ArgumentParser(prog="python -m roofline_lib.teach.export", description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to export (default: every lecture edition)")
    parser.add_argument("--out", default="build/html", help="the folder for the pages (default: build/html)")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or masters(Path("notebooks"))
    if not notebooks:
        raise SystemExit("no notebooks/NN_*.ipynb here: run it from the course's folder or name the notebooks")
    pages = export(notebooks, args.out)
    print(f"wrote {len(pages)} page{'s' if len(pages) != 1 else ''} to {args.out} (MathJax in "
          f"{Path(args.out) / MATHJAX_FOLDER}; open them with no network)")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["export", "exporter", "main", "MATHJAX_CONFIG", "mathjax_source"]
