"""Open the course in JupyterLab, quietly, at the exercise edition of chapter 00.

    python -m roofline_lib.lab                 # from the course's folder (the one with notebooks/)
    python -m roofline_lib.lab --no-browser    # any other JupyterLab option is passed on
    python -m roofline_lib.lab --lang zh       # the Chinese edition: notebooks/zh/student/00_start_here_student.ipynb

It runs ``jupyter lab --allow-root --ServerApp.root_dir=COURSE notebooks/student/00_start_here_student.ipynb``
with settings for the course's own server only (nothing is written to the user's Jupyter configuration):

- JupyterLab's news and update pop-ups off (``LabApp.news_url=None``, ``NeverCheckForUpdate``, and the
  notification settings' defaults ``fetchNews: "false"``, in an app-settings folder of the course's own, which
  starts from the environment's);
- kernels talk to the server over CurveZMQ where pyzmq has it, which is also what silences ipykernel's
  "running over TCP without encryption" warning;
- the course's notebooks signed as trusted in a store kept in this Python environment (their stored
  outputs are the course's own), so the server does not log "Notebook ... is not trusted" for each;
- a websocket ping timeout no longer than its interval (jupyter_server's default draws a tornado warning).

``--allow-root`` changes nothing for an ordinary user; it lets the same command run in a container, where
one is often root.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .core.language import canonical_language
from .teach.student import student_name

FIRST_PAGE = "00_start_here.ipynb"
# JupyterLab asks "Would you like to get notified about official Jupyter news?" until this is set
LAB_OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
WS_PING_INTERVAL_MS = 30_000  # jupyter_server's own interval; its timeout defaults to 3x, which tornado refuses


def course_root(start=None):
    """The course's folder: ``start`` (default: the current folder) if it holds notebooks/, else the checkout
    this package was imported from."""
    for candidate in (Path(start or Path.cwd()), Path(__file__).resolve().parent.parent):
        if (candidate / "notebooks" / FIRST_PAGE).is_file():
            return candidate.resolve()
    raise SystemExit(f"no notebooks/{FIRST_PAGE} in {Path(start or Path.cwd()).resolve()}: run "
                     "`python -m roofline_lib.lab` from the course's folder (the one with notebooks/ and data/), "
                     "or give it with --course FOLDER")


def first_page(root, language="en"):
    """The page the course opens on: chapter 00's exercise edition (no solution shows before an attempt), in
    notebooks/zh/ for the Chinese edition (``language`` "zh")."""
    folder = Path(root) / "notebooks"
    return (folder / "zh" if canonical_language(language) == "zh" else folder) / "student" / student_name(FIRST_PAGE)


def trust_dir():
    """Where the signatures of trusted notebooks live: this Python environment's share/jupyter, if writable."""
    folder = Path(sys.prefix) / "share" / "jupyter" / "roofline-trust"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".writable"
        probe.touch()
        probe.unlink()
    except OSError:
        return None  # a read-only environment: the notary's own default (the user's Jupyter data folder)
    return folder


def notary(folder):
    """The notebook notary that marks the course's notebooks as trusted: its store in ``folder`` (kept in .venv, out of
    the reader's own Jupyter configuration), or Jupyter's default where folder is None."""
    from nbformat.sign import NotebookNotary

    if folder is None:
        return NotebookNotary()
    return NotebookNotary(db_file=str(folder / "nbsignatures.db"), secret_file=str(folder / "notebook_secret"))


def trust_course_notebooks(root, folder):
    """Sign the course's notebooks (lecture and exercise editions) that are not signed yet; return how many."""
    import nbformat

    signer, signed = notary(folder), 0
    for path in sorted((Path(root) / "notebooks").glob("**/[0-9][0-9]_*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = nbformat.read(path, as_version=4)
        if not signer.check_signature(nb):
            signer.sign(nb)
            signed += 1
    signer.store.close()
    return signed


def lab_settings_dir(folder):
    """An app-settings folder for the course's server: the environment's own (if any), plus LAB_OVERRIDES."""
    import json
    import shutil

    from jupyterlab.commands import get_app_dir

    ours, theirs = folder / "lab-settings", Path(get_app_dir()) / "settings"
    if theirs.is_dir():
        shutil.copytree(theirs, ours, dirs_exist_ok=True)
    ours.mkdir(parents=True, exist_ok=True)
    file = ours / "overrides.json"
    overrides = json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
    for plugin, values in LAB_OVERRIDES.items():
        overrides[plugin] = {**overrides.get(plugin, {}), **values}
    file.write_text(json.dumps(overrides, indent=2), encoding="utf-8")
    return ours


def lab_config(root, folder):
    """The traitlets configuration of the course's JupyterLab server."""
    import zmq
    from traitlets.config import Config

    c = Config()
    c.ServerApp.root_dir = str(root)
    c.ServerApp.allow_root = True
    c.ServerApp.tornado_settings = {"ws_ping_interval": WS_PING_INTERVAL_MS, "ws_ping_timeout": WS_PING_INTERVAL_MS}
    c.LabApp.news_url = None
    c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
    if zmq.has("curve"):
        c.KernelManager.transport_encryption = "auto"  # CurveZMQ where the kernelspec declares it (ipykernel does)
    if folder is not None:
        c.LabApp.app_settings_dir = str(lab_settings_dir(folder))
        c.NotebookNotary.db_file = str(folder / "nbsignatures.db")
        c.NotebookNotary.secret_file = str(folder / "notebook_secret")
    return c


def main(argv=None):
    """``python -m roofline_lib.lab``: open JupyterLab on the course at chapter 00's exercise edition; other options go
    to JupyterLab."""
    parser = argparse.ArgumentParser(prog="python -m roofline_lib.lab", description=__doc__.split("\n")[0],
                                     epilog="Other options (--no-browser, --port 8889, ...) go to JupyterLab.")
    parser.add_argument("--course", default=None, help="the course's folder (default: the current one)")
    parser.add_argument("--open", default=None,
                        help="the notebook to open, relative to the course's folder (default: chapter 00's "
                             "exercise edition)")
    parser.add_argument("--lang", default="en", help="en (default) or zh: the edition chapter 00 opens in (中文版: zh)")
    args, lab_args = parser.parse_known_args(argv)
    try:
        language = canonical_language(args.lang)
    except ValueError as e:
        parser.error(str(e))
    root = course_root(args.course)
    page = root / args.open if args.open else first_page(root, language)
    if not page.is_file():
        raise SystemExit(f"{page} does not exist; --open takes a notebook inside {root}, e.g. "
                         f"notebooks/{FIRST_PAGE}")
    folder = trust_dir()
    trust_course_notebooks(root, folder)
    from jupyterlab.labapp import LabApp

    # LabApp.launch_instance takes no configuration object; this is its own two steps with one
    server = LabApp.initialize_server(argv=[*lab_args, str(page)], config=lab_config(root, folder))
    server.start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
