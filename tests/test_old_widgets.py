"""Where live figures cannot be had (Colab ships ipywidgets 7.7.1, and ipympl does not work there), the course
still runs: `rl.widgets.live_figures()` falls back to inline figures with a note, chapter 02 runs top to
bottom in a kernel whose ipywidgets is 7.7.1, and every explorer's slider still moves its readout.

The old ipywidgets is laid over this environment in a throwaway virtual environment (its own site-packages
first, then this one's), so nothing here is downgraded. It needs the package index; without it the test skips,
unless ROOFLINE_REQUIRE_OLD_WIDGETS=1 (CI) makes that a failure."""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OLD_WIDGETS = ["ipywidgets==7.7.1", "widgetsnbextension==3.6.1", "jupyterlab_widgets==1.1.1", "ipython_genutils==0.2.0"]
# One chapter top to bottom: the fallback is the library's (live_figures), the same in every chapter; every
# explorer's slider is moved below.
CHAPTERS = ["02_roofline_model.ipynb"]


@pytest.fixture(scope="module")
def old_python(tmp_path_factory):
    venv = tmp_path_factory.mktemp("widgets7") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, *OLD_WIDGETS],
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        why = f"could not install {', '.join(OLD_WIDGETS)}: {done.stderr.strip()[-300:]}"
        if os.environ.get("ROOFLINE_REQUIRE_OLD_WIDGETS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    # after its own site-packages, this environment's (addsitedir also runs its .pth files: the editable install)
    Path(site, "zz_course_environment.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    return python


def _run(python, code, timeout=300):
    done = subprocess.run([str(python), "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# Twice, in the parallel suite, this run waited out a 600 s cell limit with its kernel up and no reply; alone it
# never did. The kernel now talks over Unix sockets where there are any, which rules out one cause (with TCP each
# kernel's ports are chosen free a moment before it binds them, and another kernel starting then can take one), and
# a cell gets 120 s (about 1 s here), so a hang costs two minutes, not ten, and fails with the cell it hung in.
_CHAPTER = """
import json, os, sys, tempfile, ipywidgets, nbformat, nbclient, jupyter_client
nb = nbformat.read(sys.argv[1] if len(sys.argv) > 1 else {path!r}, as_version=4)
ipc = {{}} if os.name == "nt" else {{"transport": "ipc", "ip": os.path.join(tempfile.mkdtemp(), "kernel")}}
km = jupyter_client.KernelManager(kernel_name="python3", **ipc)
nbclient.NotebookClient(nb, km=km, timeout=120, record_timing=False,
                        resources={{"metadata": {{"path": "notebooks"}}}}).execute()
outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
print(json.dumps({{"widgets": ipywidgets.__version__,
                  "errors": [o.get("ename") for o in outputs if o["output_type"] == "error"],
                  "notes": [o["text"] for o in outputs if o["output_type"] == "stream" and "note:" in o["text"]]}}))
"""


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_chapter_runs_top_to_bottom_under_ipywidgets_7_with_inline_figures(old_python, chapter):
    said = _run(old_python, _CHAPTER.format(path=str(ROOT / "notebooks" / chapter)))
    assert said["widgets"] == "7.7.1" and said["errors"] == []  # an error stops nbclient before this
    assert any("ipywidgets 7.7.1 is installed" in note for note in said["notes"]), said["notes"]


_SLIDERS = """
import json, matplotlib
matplotlib.use("Agg")
import ipywidgets
import roofline_lib as rl
moved = {}
for name in ["RooflineExplorer", "MatmulExplorer", "AttentionExplorer", "LLMExplorer", "CommsExplorer",
             "ServingExplorer", "TrainingExplorer", "MoEExplorer"]:
    explorer = getattr(rl.widgets, name)()
    explorer.widget()
    before = explorer.readout.value
    sliders = [c for c in explorer.controls.values() if "Slider" in type(c).__name__]
    slider = sliders[0]
    if hasattr(slider, "options"):  # a SelectionSlider (the course's log sliders)
        values = [o[1] if isinstance(o, tuple) else o for o in slider.options]
        choice = values[len(values) // 2]
        slider.value = choice if choice != slider.value else values[-1]
    else:
        middle = (slider.min + slider.max) / 2
        middle = round(middle) if isinstance(slider, ipywidgets.widgets.widget_int._Int) else middle
        slider.value = middle if middle != slider.value else slider.max
    after = explorer.readout.value
    moved[name] = after != before and "#cf222e" not in after  # changed, and not to an error message
print(json.dumps({"widgets": ipywidgets.__version__, "moved": moved}))
"""


def test_every_explorer_follows_its_slider_under_ipywidgets_7(old_python):
    said = _run(old_python, _SLIDERS)
    assert said["widgets"] == "7.7.1"
    assert said["moved"] and all(said["moved"].values()), said["moved"]
