"""The course's start command (`python -m roofline_lib.lab`): where it lands, what it serves, and that the
server and kernel it starts log no upstream warning (while a plain `jupyter lab` on the same files does)."""

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pytest

from roofline_lib import lab
from roofline_lib.teach import student

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_first_page_is_chapter_00s_exercise_edition_with_no_solution():
    page = lab.first_page(ROOT)
    assert page == ROOT / "notebooks" / "student" / "00_start_here_student.ipynb"
    nb = nbformat.read(page, as_version=4)
    master = nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4)
    assert student.solution_leaks(master, nb) == []
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")  # no answer in an output either
    # and it says which edition it is and where the other one is
    assert "Exercise edition" in nb.cells[0].source and "notebooks/00_start_here.ipynb" in nb.cells[0].source


def test_no_exercise_edition_shares_a_file_name_with_a_lecture_notebook():
    masters = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    students = {p.name for p in (ROOT / "notebooks" / "student").glob("*.ipynb")}
    assert students and not masters & students  # two tabs never read the same


def test_the_readme_opens_the_course_with_the_launcher_on_every_platform():
    block = re.search(r"<!-- open-command -->\n```\n(.*?)\n```\n<!-- /open-command -->", README, re.S).group(1)
    assert shlex.split(block.split("&&")[-1]) == [".venv/bin/python", "-m", "roofline_lib.lab"]
    assert "py -m venv .venv && .venv\\Scripts\\pip install -r requirements.txt && " \
           ".venv\\Scripts\\python -m roofline_lib.lab" in README
    # every jupyter lab command the README shows runs as root too (a container)
    for command in re.findall(r"jupyter lab[^`\n]*", README):
        assert "--allow-root" in command, command


_SERVE = """
import json, sys
from jupyter_server.serverapp import ServerApp
from roofline_lib import lab
root = lab.course_root()
app = ServerApp.instance(config=lab.lab_config(root, None))
app.initialize([str(lab.first_page(root)), "--no-browser"], find_extensions=False, new_httpserver=False)
print(json.dumps([app.root_dir, app._resolve_file_to_run_and_root_dir(), app.allow_root]))
"""


def test_the_server_serves_the_course_folder_and_opens_the_first_page():
    done = subprocess.run([sys.executable, "-c", _SERVE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    root, opens, allow_root = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(root).resolve() == ROOT and opens == "notebooks/student/00_start_here_student.ipynb"
    assert allow_root is True
    assert (ROOT / "data").is_dir() and (ROOT / "docs").is_dir()  # reachable from the file browser


def test_a_folder_without_the_course_is_refused_with_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(lab, "__file__", str(tmp_path / "roofline_lib" / "lab.py"))
    with pytest.raises(SystemExit, match="run `python -m roofline_lib.lab` from the course's folder"):
        lab.course_root(tmp_path)


def test_trusting_signs_each_course_notebook_once(tmp_path):
    (tmp_path / "notebooks" / "student").mkdir(parents=True)
    for name in ("00_start_here.ipynb", "student/00_start_here_student.ipynb"):
        shutil.copy(ROOT / "notebooks" / name, tmp_path / "notebooks" / name)
    trust = tmp_path / "trust"
    trust.mkdir()
    assert lab.trust_course_notebooks(tmp_path, trust) == 2
    assert lab.trust_course_notebooks(tmp_path, trust) == 0  # already signed
    signer = lab.notary(trust)
    assert signer.check_signature(nbformat.read(tmp_path / "notebooks" / "00_start_here.ipynb", as_version=4))


# ---------------------------------------------------------------- a live server: quiet, news off

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_code(port, token, kernel_id, code):
    from tornado.websocket import websocket_connect

    async def go():
        session = uuid.uuid4().hex
        ws = await websocket_connect(f"ws://127.0.0.1:{port}/api/kernels/{kernel_id}/channels"
                                     f"?token={token}&session_id={session}")
        header = {"msg_id": uuid.uuid4().hex, "username": "learner", "session": session,
                  "msg_type": "execute_request", "version": "5.3"}
        await ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "channel": "shell",
                                           "content": {"code": code, "silent": False}}))
        while True:
            reply = json.loads(await asyncio.wait_for(ws.read_message(), 60))
            if reply["msg_type"] == "stream":
                ws.close()
                return reply["content"]["text"]

    return asyncio.run(go())


def _serve_and_use(command, course, base):
    """Start ``command`` (a JupyterLab server on ``course``), open two notebooks, run code in a kernel; return
    (what the code printed, the page's config, the server's log)."""
    port, token = _free_port(), uuid.uuid4().hex
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_RUNTIME_DIR=str(base / "runtime"),
               JUPYTER_DATA_DIR=str(base / "data"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    log = base / "lab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*command, "--no-browser", "--ip", "127.0.0.1", "--port", str(port),
                                 "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"],
                                cwd=course, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"

        def api(method, path, body=None):
            request = urllib.request.Request(url + path, method=method, data=body and json.dumps(body).encode(),
                                             headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.read().decode()

        deadline = time.monotonic() + 90
        while True:
            try:
                api("GET", "/api/status")
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
                time.sleep(0.3)
        for path in ("notebooks/05_llm_inference.ipynb", "notebooks/student/05_llm_inference_student.ipynb"):
            api("GET", f"/api/contents/{path}?content=1")
        session = json.loads(api("POST", "/api/sessions", {"path": "notebooks/student/05_llm_inference_student.ipynb",
                                                           "type": "notebook", "kernel": {"name": "python3"}}))
        printed = _run_code(port, token, session["kernel"]["id"], "print(6 * 7)")
        notification = json.loads(api("GET", "/lab/api/settings/@jupyterlab/apputils-extension:notification"))
        news = notification["schema"]["properties"]["fetchNews"]["default"]
        page = api("GET", "/lab") + f"\nfetchNews default: {news}"
        time.sleep(1.0)  # let the kernel's own start-up lines reach the log
        said = log.read_text(errors="replace")  # before the stop, which the server logs as critical
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return printed, page, said


WARNING_LINE = re.compile(r"^\[[WEC] |WARNING", re.M)


@pytest.fixture
def course_copy(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "notebooks", course / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (course / "data").symlink_to(ROOT / "data")
    return course


@pytest.mark.skipif(sys.platform == "win32", reason="process groups (killpg) are POSIX")
def test_the_course_server_and_its_kernel_log_no_warning_and_show_no_news(course_copy, tmp_path):
    printed, page, said = _serve_and_use([sys.executable, "-m", "roofline_lib.lab"], course_copy, tmp_path)
    assert printed.strip() == "42"
    assert '"news": {"disabled": true}' in page
    assert "fetchNews default: false" in page  # no "Would you like to get notified about official Jupyter news?"
    assert not WARNING_LINE.findall(said), said


@pytest.mark.skipif(sys.platform == "win32", reason="process groups (killpg) are POSIX")
def test_a_plain_jupyter_lab_on_the_same_files_logs_the_warnings_the_launcher_removes(course_copy, tmp_path):
    """The control: the check above can see the warnings it says are gone."""
    plain = [sys.executable, "-m", "jupyter", "lab", "--allow-root", "--ServerApp.root_dir=.",
             "notebooks/student/00_start_here_student.ipynb"]
    printed, page, said = _serve_and_use(plain, course_copy, tmp_path)
    assert printed.strip() == "42"
    assert "is not trusted" in said and "without encryption" in said, said
    assert '"news": {"disabled": false}' in page and "fetchNews default: none" in page
