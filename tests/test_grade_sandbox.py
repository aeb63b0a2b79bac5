"""The grader against a hostile class, sandboxed: each attack a submission can make on the teacher's machine.

One batch, graded by the command (two at a time, so attacks overlap honest kernels): an honest control is
graded first and another last, and each attack in between is a copy of the fixture master with the attack
in a cell of its own before the exercises. Every attack is bounded (a fork bomb of at most 600 processes,
children that sleep at most 90 s...), and every one of its processes carries MARKER in its command line, so
that the test can look for survivors in /proc afterwards. What must hold: the honest controls' full marks,
no secret (a teacher's file, an environment variable, a classmate's notebook, the master) in the grades,
no file changed outside the output folder, no process left, no network reached, the grader's own process
untouched. Needs bubblewrap: skipped without it, unless ``ROOFLINE_REQUIRE_SANDBOX=1`` (CI sets it).
"""

import csv
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from roofline_lib.teach import grade, proctree, run, sandbox, worker
from roofline_lib.teach.discovery import CheckCall

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "exercise_master.ipynb"
QUESTIONS = ["00.bf16_bytes", "00.ridge_h200", "00.intensity_4096", "00.t_math_h200", "00.bound_h200"]
ALL = dict.fromkeys(QUESTIONS, 1)
MARKER = f"roofline-attack-{uuid.uuid4().hex[:12]}"
SECRET = f"teacher-secret-{uuid.uuid4().hex[:12]}"
# Limits no attack is meant to meet (the watch stops them first, in a second or two): generous, so that a
# loaded machine, which slows an attack's bomb as much as the watch, cannot turn a watch's note into a timeout.
NOTEBOOK_LIMIT = 60  # seconds per entry (the grader's --notebook-timeout in the batch); cells: 30 s each


def _require():
    why = sandbox.problem()
    if why and os.environ.get("ROOFLINE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"no sandbox: {why} (ROOFLINE_REQUIRE_SANDBOX=1, so this is a failure, not a skip)")
    return why


needs_sandbox = pytest.mark.skipif(bool(_require()), reason=f"no sandbox here: {sandbox.problem()}")


def attacker(code, at=2):
    """The fixture master with ``code`` in a cell of its own after the setup (or at ``at``)."""
    nb = nbformat.read(FIXTURE, as_version=4)
    nb.cells.insert(at if at >= 0 else len(nb.cells), nbformat.v4.new_code_cell(code))
    return nbformat.writes(nb).encode()


def child(code, n=1):
    """Source that starts ``n`` python children running ``code`` (with MARKER in their argv)."""
    return (f"import subprocess, sys\nfor _ in range({n}):\n    subprocess.Popen([sys.executable, '-c', "
            f"{code!r} + '  # {MARKER}'], start_new_session=True)\n")


def tree_hash(folder):
    h = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_symlink() or not path.is_file():
            h.update(f"{path}\0{path.is_symlink()}\n".encode())
        else:
            h.update(f"{path}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def marked_processes():
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if MARKER.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
            except OSError:
                pass
    return found


def attacks(ctx):
    """{student: notebook bytes}: one per attack, ``ctx`` holds the paths and ports they aim at."""
    leak = "raise RuntimeError('LEAK ' + repr(found)[:1500])\n"
    a = {}
    # Signals: stop, then kill, every python process in view (the grader, the workers, the kernels)...
    a["kill_all"] = attacker("import os, signal\nfound = []\nfor p in os.listdir('/proc'):\n"
                             "    try:\n        if p.isdigit() and int(p) != os.getpid() and b'python' in "
                             "open(f'/proc/{p}/cmdline', 'rb').read():\n"
                             "            os.kill(int(p), signal.SIGSTOP)\n            found.append(int(p))\n"
                             "    except OSError:\n        pass\n"
                             "for p in found:\n    try:\n        os.kill(p, signal.SIGKILL)\n"
                             "    except OSError:\n        pass\n")
    # ... and the grader's own pid and a process of the teacher's, by number.
    a["kill_grader_pid"] = attacker(f"import os, signal\ntry:\n    os.kill({ctx['grader']}, signal.SIGSTOP)\n"
                                    f"    os.kill({ctx['sentinel']}, signal.SIGKILL)\nexcept OSError:\n    pass\n")
    # A setsid, double-forked child that outlives its kernel and keeps rewriting the grades.
    later = (f"import os, time\nif os.fork(): os._exit(0)\nos.setsid()\nfor _ in range(40):\n    time.sleep(2)\n"
             f"    try:\n        open({str(ctx['out'])!r}, 'w').write('student,total\\nzzz_honest,0\\n')\n"
             f"    except OSError:\n        pass\n")
    a["survivor"] = attacker(child(later))
    # Reading: a classmate, the master, the teacher's files and environment, the grader's process.
    targets = [ctx["subs"] / "aaa_honest.ipynb", FIXTURE, ctx["secret"], f"/proc/{ctx['grader']}/environ",
               f"/proc/{ctx['grader']}/cmdline", ROOT / "notebooks", ROOT / "tests", ROOT / ".git"]
    # the teacher's home: only the folders on the way to Python's installation may be seen there
    home, python = Path.home(), [b for b in sandbox._binds() if b.is_relative_to(Path.home())]
    seen = sorted({b.relative_to(home).parts[0] for b in python if b != home})
    a["reader"] = attacker(
        "import os\nfound = []\nfor p in " + repr([str(t) for t in targets]) + ":\n"
        "    try:\n        found.append(open(p, 'rb').read()[:200] if not os.path.isdir(p) else os.listdir(p))\n"
        "    except OSError:\n        pass\n"
        f"found += [set(os.listdir({str(home)!r})) - set({seen!r})] if os.path.isdir({str(home)!r}) else []\n"
        "found = [f for f in found if f]\nfound += [v for v in os.environ.values() if 'secret' in v]\n"
        "for p in os.listdir('/proc'):\n    try:\n        c = open(f'/proc/{p}/cmdline', 'rb').read()\n"
        "        found += [c[:200]] if b'pytest' in c or b'submissions' in c else []\n"
        "    except OSError:\n        pass\n"
        "if found:\n    " + leak)
    # Writing outside the scratch folder: the checkout, startup files, kernelspecs, the folders.
    targets = [ROOT / "roofline_lib" / "teach" / "worker.py", ctx["startup"] / f"00-{MARKER}.py",
               ctx["kernels"] / MARKER / "kernel.json", ctx["subs"] / "aaa_honest.ipynb",
               ctx["subs"] / "planted.ipynb", ctx["out"].parent / "planted.txt", ctx["secret"]]
    a["writer"] = attacker(
        "import os\nfor p in " + repr([str(t) for t in targets]) + ":\n    try:\n"
        "        os.makedirs(os.path.dirname(p), exist_ok=True)\n"
        "        open(p, 'a').write('\\n# " + MARKER + "\\n')\n"
        "    except OSError:\n        pass\n")
    # The network: a loopback listener of the test's; and other kernels' connection files.
    a["network"] = attacker(
        "import socket, glob\nfound = []\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {ctx['port']}), 2).sendall(b'{MARKER}')\n"
        "    found.append('connected')\nexcept OSError:\n    pass\n"
        f"found += [p for p in glob.glob('/tmp/**/kernel-*.json', recursive=True) + glob.glob({str(ctx['runtime'])!r} "
        "+ '/*') if not p.startswith('/tmp/home/')]\nif found:\n    " + leak)
    # Bombs, each bounded: processes, memory in children, the disk, CPU in the background.
    a["fork_bomb"] = attacker(
        "import os, time\nn = 0\ntry:\n    for n in range(600):\n        if os.fork() == 0:\n"
        "            time.sleep(90)\n            os._exit(0)\nexcept OSError:\n    pass\ntime.sleep(3)\n"
        "if n == 599:\n    raise RuntimeError('LEAK: forked 600 processes')\n")
    # (the children start 1.5 s apart: memory, not a burst of CPU, is what must stop it)
    a["memory_bomb"] = attacker("import time\n" + "time.sleep(1.5)\n".join(
        [child("x = b'x' * (900 * 2**20); import time; time.sleep(90)", 1)] * 4) + "time.sleep(8)\n")
    a["disk_filler"] = attacker(
        "import os\nn = 0\nfor d in ('/tmp/work', '/dev/shm', os.path.expanduser('~')):\n"
        "    for i in range(400):\n        try:\n            with open(f'{d}/fill{i}', 'wb') as f:\n"
        "                f.write(b'x' * 2**20 * 8)\n            n += 1\n        except OSError:\n            break\n")
    a["cpu_hog"] = attacker(child("while True: pass", 12) + "import time\ntime.sleep(10)\n")
    # A forged report on the worker's pipe: a neighbour's pid as "kernel", answers for questions it never ran.
    forged = json.dumps({"event": "kernel", "pid": ctx["sentinel"]}) + "\n" + json.dumps(
        {"event": "answers", "replies": {f"x{i}": {"status": "ok"} for i in range(1000)}}) + "\n"
    a["forger"] = attacker(
        "import os\nfor fd in os.listdir(f'/proc/{os.getppid()}/fd'):\n    try:\n"
        f"        os.write(os.open(f'/proc/{{os.getppid()}}/fd/{{fd}}', os.O_WRONLY), {forged.encode()!r})\n"
        "    except OSError:\n        pass\n")
    # The sandbox's init holds the worker's report pipe: it must be the worker (not dumpable), not a stand-in.
    a["forge_init"] = attacker(
        "import os, json\nline = (json.dumps({'event': 'note', 'text': 'FORGED_NOTE_THROUGH_INIT'}) + '\\n').encode()\n"
        "for fd in range(0, 8):\n    try:\n        os.write(os.open(f'/proc/1/fd/{fd}', os.O_WRONLY), line)\n"
        "    except OSError:\n        pass\n")
    # Memory in memory files (memfd), written and never mapped: in no process's resident set.
    a["memfd_hoard"] = attacker(
        "import os, time\nfds, block = [], b'\\1' * 2**20\nfor i in range(40):\n"
        "    fd = os.memfd_create(f'hoard{i}')\n    for _ in range(64):\n        os.write(fd, block)\n"
        "    fds.append(fd)\ntime.sleep(8)\n")
    # CPU in children too short-lived for the watch's looks, reaped by the kernel (SIGCHLD ignored).
    a["churn"] = attacker(
        "import os, signal, time\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\nend = time.time() + 9\n"
        "while time.time() < end:\n    for _ in range(2):\n        if os.fork() == 0:\n"
        "            t = time.time()\n            while time.time() - t < 0.08:\n                pass\n"
        "            os._exit(0)\n    time.sleep(0.08)\n")
    # Files by the ten thousand: each costs the host kernel memory that no size limit counts.
    a["inode_flood"] = attacker(
        "import os, time\nos.makedirs('/tmp/work/many', exist_ok=True)\nfor i in range(60_000):\n"
        "    open(f'/tmp/work/many/{i}', 'w').close()\ntime.sleep(3)\n")
    # Oversized answers: 1,000 checks (the last one counts), each with 30 measured values of 20 kB: 600 MB, were
    # they all read back, where the kernel may hold 1 GB.
    big = "z = 'y' * 20_000\nif False:\n" + "\n".join(
        "    rl.exercises.check('00.bf16_bytes', z, " + ", ".join(f"k{j}=z" for j in range(30)) + ")"
        for _ in range(1000))
    a["oversized"] = attacker(big, at=-1)
    return a


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if _require():
        pytest.skip(f"no sandbox here: {sandbox.problem()}")
    base = tmp_path_factory.mktemp("sandbox")
    subs, out_dir, home = base / "submissions", base / "out", base / "teacher"
    for d in (subs, out_dir, home):
        d.mkdir()
    secret = home / "secret.txt"
    secret.write_text(SECRET)
    os.environ["ROOFLINE_TEST_SECRET"] = SECRET  # the grader's environment, which a kernel must not see
    sentinel = subprocess.Popen(["sleep", "300"])  # a process of the teacher's that no report may get killed
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    reached, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                reached.append(conn.recv(100))
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    jupyter = Path.home() / ".local" / "share" / "jupyter"
    ctx = {"grader": os.getpid(), "sentinel": sentinel.pid, "subs": subs, "out": out_dir / "grades.csv",
           "secret": secret, "port": listener.getsockname()[1], "startup": Path.home() / ".ipython" /
           "profile_default" / "startup", "kernels": jupyter / "kernels", "runtime": jupyter / "runtime"}
    honest = FIXTURE.read_bytes()
    files = {"aaa_honest": honest, **attacks(ctx), "zzz_honest": honest}
    for name, data in files.items():
        (subs / f"{name}.ipynb").write_bytes(data)
    (subs / "linked.ipynb").symlink_to(secret)
    (subs / "linked_classmate.ipynb").symlink_to(subs / "aaa_honest.ipynb")
    os.mkfifo(subs / "fifo.ipynb")
    watched = {"subs": subs, "home": home, "teach": ROOT / "roofline_lib" / "teach", "fixtures": FIXTURE.parent}
    before = {k: tree_hash(v) for k, v in watched.items()}
    startup_before = sorted(p.name for p in ctx["startup"].glob("*")) if ctx["startup"].exists() else []
    kernels_before = sorted(p.name for p in ctx["kernels"].glob("*")) if ctx["kernels"].exists() else []
    lines = []
    start = time.monotonic()
    try:
        code = grade.main([str(subs), "--master", str(FIXTURE), "--out", str(ctx["out"]), "--cell-timeout", "30",
                           "--notebook-timeout", str(NOTEBOOK_LIMIT), "--memory-mb", "1024",
                           "--worker-memory-mb", "1024", "--feedback", str(out_dir / "feedback")],
                          progress=lines.append)
        took = time.monotonic() - start
        time.sleep(2.5)  # past a survivor's next wake-up: it would rewrite the grades now
        with open(ctx["out"], newline="", encoding="utf-8") as f:
            rows = {row["student"]: row for row in csv.DictReader(f)}
        text = ctx["out"].read_text(encoding="utf-8") + "".join(
            p.read_text(encoding="utf-8") for p in (out_dir / "feedback").iterdir())
        after = {k: tree_hash(v) for k, v in watched.items()}
        survivors = marked_processes()
        sentinel_alive = sentinel.poll() is None
        yield {"code": code, "rows": rows, "text": text, "lines": lines, "before": before, "after": after,
               "survivors": survivors, "sentinel": sentinel_alive, "reached": list(reached), "took": took,
               "out_dir": out_dir, "ctx": ctx, "startup": startup_before, "kernels": kernels_before}
    finally:
        stop.set()
        listener.close()
        sentinel.kill()
        os.environ.pop("ROOFLINE_TEST_SECRET", None)
        for pid in marked_processes():
            os.kill(pid, signal.SIGKILL)
        for leftover in (ctx["startup"] / f"00-{MARKER}.py", ctx["kernels"] / MARKER / "kernel.json"):
            if leftover.exists():  # only if an attack got through; the assertions below then fail
                leftover.unlink()


def marks(row):
    return {q: int(row[q]) for q in QUESTIONS}


@needs_sandbox
def test_the_honest_controls_first_and_last_keep_full_marks_in_bounded_time(graded):
    assert graded["code"] == 0
    for name in ("aaa_honest", "zzz_honest"):
        row = graded["rows"][name]
        assert marks(row) == ALL, row
        assert row["notes"] == ""
    # Bounded by the grader's own limits, not by this machine's speed (a loaded machine is slower, never
    # unbounded): every entry within its notebook limit, and the batch within its share of them, two at a time.
    entries = len(graded["rows"])
    assert graded["took"] < (entries + 1) / 2 * (NOTEBOOK_LIMIT + run.PARSE_TIMEOUT), graded["took"]
    for name in ("aaa_honest", "zzz_honest"):  # each in about 2 s alone; never near its limit among attacks
        (seconds,) = [float(m.group(1)) for line in graded["lines"]
                      if (m := re.match(rf"\[\d+/\d+\] {name}\.ipynb 5/5 \((\d+\.\d) s\)", line))]
        assert seconds < NOTEBOOK_LIMIT, (name, seconds)


@needs_sandbox
def test_signals_reach_neither_the_grader_nor_a_neighbour_nor_a_reported_pid(graded):
    assert graded["sentinel"], "a process of the teacher's was killed"
    rows = graded["rows"]
    assert marks(rows["kill_grader_pid"]) == ALL  # the pid it named is not in its world
    assert marks(rows["forger"]) == ALL  # its forged lines never reached the grader, nor were they obeyed
    # kill_all stops and kills every python it sees: only its own worker, the namespace's init, which
    # signals from inside do not reach; so nothing stops and everything is graded
    assert marks(rows["kill_all"]) == ALL and "stopped the grader's worker" not in rows["kill_all"]["notes"]


@needs_sandbox
def test_no_process_outlives_the_run_and_nothing_rewrites_the_grades_later(graded):
    assert graded["survivors"] == []
    assert marks(graded["rows"]["zzz_honest"]) == ALL  # read after the survivor's wake-up
    assert sorted(p.name for p in graded["out_dir"].iterdir()) == ["feedback", "grades.csv"]


@needs_sandbox
def test_nothing_secret_reaches_the_grades_or_the_feedback(graded):
    text = graded["text"]
    assert SECRET not in text
    assert "ROOFLINE_TEST_SECRET" not in text and "pytest" not in text
    assert '"nbformat"' not in text and "BEGIN SOLUTION" not in text  # neither a classmate nor the master
    assert "LEAK" not in text  # no attack found anything to leak
    assert marks(graded["rows"]["reader"]) == ALL


@needs_sandbox
def test_nothing_outside_the_output_folder_is_written(graded):
    assert graded["after"] == graded["before"]
    ctx = graded["ctx"]
    now = sorted(p.name for p in ctx["startup"].glob("*")) if ctx["startup"].exists() else []
    assert now == graded["startup"]
    now = sorted(p.name for p in ctx["kernels"].glob("*")) if ctx["kernels"].exists() else []
    assert now == graded["kernels"]
    assert marks(graded["rows"]["writer"]) == ALL


@needs_sandbox
def test_no_network_and_no_other_kernel_in_reach(graded):
    assert graded["reached"] == []
    assert marks(graded["rows"]["network"]) == ALL  # it found nothing to leak, so it raised nothing


@needs_sandbox
def test_bombs_cost_only_their_own_marks_with_a_note(graded):
    rows = graded["rows"]
    # a fork bomb meets the sandbox's process limit (its forks fail) or the grader's watch (a note)
    assert "LEAK" not in rows["fork_bomb"]["notes"]
    for name in ("memory_bomb", "cpu_hog"):
        assert "stopped by the grader" in rows[name]["notes"], rows[name]
    assert "memory" in rows["memory_bomb"]["notes"]
    assert "CPU" in rows["cpu_hog"]["notes"]
    assert marks(rows["disk_filler"]) == ALL  # its writes fail at the scratch folder's size; it carries on
    assert "memory files" in rows["memfd_hoard"]["notes"], rows["memfd_hoard"]
    assert "files in its scratch folder" in rows["inode_flood"]["notes"], rows["inode_flood"]
    assert "processes and threads in" in rows["churn"]["notes"], rows["churn"]
    assert "more than the 25 allowed in 5 s" in rows["churn"]["notes"], rows["churn"]


@needs_sandbox
def test_nothing_inside_can_write_the_workers_reports(graded):
    row = graded["rows"]["forge_init"]
    assert marks(row) == ALL and "FORGED_NOTE" not in " ".join(row.values())


@needs_sandbox
def test_links_and_pipes_in_the_submissions_folder_are_not_followed(graded):
    rows = graded["rows"]
    for name in ("linked", "linked_classmate"):
        assert sum(marks(rows[name]).values()) == 0 and "symbolic link" in rows[name]["notes"]
    assert "named pipe" in rows["fifo"]["notes"]


@needs_sandbox
def test_oversized_answers_are_read_only_as_far_as_they_count(graded):
    row = graded["rows"]["oversized"]
    assert marks(row) == {**ALL, "00.bf16_bytes": 0}
    assert len(row["feedback 00.bf16_bytes"]) < 1000 and len(row["notes"]) < 2000


# ---------------------------------------------------------------- without a batch


def test_churning_children_are_stopped_without_waiting_for_the_window_to_fill():
    """More than SPAWNS processes started in under SPAWN_WINDOW seconds is over the limit at once, in a young
    sandbox too; fewer, or as many spread over more than the window, are not."""
    def look(t, spawned):
        return sandbox.Usage(time=t, processes=2, tasks=10, cpu=0.0, rss=0, pids=(1, 2), spawned=spawned)

    limits = sandbox.Limits()
    young = [look(0.1 * i, 3) for i in range(1, 11)]  # one second of looks
    assert "started 26 processes and threads in 1.0 s, more than the 25 allowed in 5 s" in limits.over(
        look(1.1, 29), young)
    assert limits.over(look(1.1, 28), young) == ""  # 25: the limit itself is allowed
    steady = [look(0.5 * i, 3 + 4 * i) for i in range(1, 21)]  # 8 a second for ten seconds, 40 in any 5 s
    assert "more than the 25 allowed" in limits.over(look(10.5, 87), steady)
    slow = [look(0.5 * i, 3 + i) for i in range(1, 21)]  # 2 a second: 10 in any 5 s
    assert limits.over(look(10.5, 24), slow) == ""


def test_only_the_last_check_of_each_graded_question_is_read_back():
    calls = [CheckCall("00.a", 1, "x", (("k", "1"),)), CheckCall("00.b", 2, "y"), CheckCall("00.a", 3, "z"),
             CheckCall("99.other", 4, "w"), CheckCall("00.b", 5, "v", tuple((f"k{i}", "1") for i in range(20)))]
    chosen = worker.counting(calls, {"00.a", "00.b"})
    assert [(c.question_id, c.cell, c.answer) for c in chosen] == [("00.a", 3, "z"), ("00.b", 5, "v")]
    assert len(chosen[1].context) == worker.MAX_CONTEXT


def test_a_report_holds_only_what_counts():
    attempt = run._Attempt(run.Run(), questions=("00.a", "00.b"))
    assert run._record(attempt, {"event": "prepared", "checks": [["00.a", 3, ["k"]]], "unparsed": {"9": "x"}})
    run._record(attempt, {"event": "answers", "replies": {"a0": {"status": "ok", "data": {"text/plain": "y" * 10**6}},
                                                          "c0_k": {"status": "ok"}, "a1": {"status": "ok"},
                                                          **{f"z{i}": {} for i in range(10_000)}}})
    assert sorted(attempt.run.replies) == ["a0", "c0_k"]
    assert len(attempt.run.replies["a0"]["data"]["text/plain"]) <= 20_000
    assert attempt.run.cell_problems == {}
    for _ in range(100):
        run._record(attempt, {"event": "note", "text": "n" * 10_000})
    assert len(attempt.run.notes) == run.MAX_NOTES and max(map(len, attempt.run.notes)) <= run.TEXT_CHARS
    forged = run._Attempt(run.Run(), questions=("00.a",))
    with pytest.raises(ValueError):  # a question not graded, or the same one twice: not a worker's report
        run._record(forged, {"event": "prepared", "checks": [["00.a", 1, []], ["00.a", 2, []]], "unparsed": {}})


def test_the_grader_never_signals_a_pid_a_report_names():
    sentinel = subprocess.Popen(["sleep", "60"])
    try:
        attempt = run._Attempt(run.Run())
        assert run._record(attempt, {"event": "kernel", "pid": sentinel.pid})
        time.sleep(0.1)
        assert sentinel.poll() is None
    finally:
        sentinel.kill()


def test_without_a_sandbox_the_grader_refuses_and_names_what_is_exposed(tmp_path, monkeypatch):
    (tmp_path / "alice.ipynb").write_bytes(FIXTURE.read_bytes())
    monkeypatch.setattr(sandbox, "problem", lambda: "bubblewrap (bwrap) is not installed")
    lines = []
    args = [str(tmp_path), "--master", str(FIXTURE), "--out", str(tmp_path / "grades.csv")]
    assert grade.main(args, progress=lines.append) == 2
    said = "\n".join(lines)
    assert "bwrap" in said and "--unsandboxed" in said and "refusing" in said
    assert "read every file" in said and "network" in said and "outlive" in said
    assert not (tmp_path / "grades.csv").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the unsandboxed path is run on POSIX here")
def test_with_unsandboxed_it_grades_and_says_what_is_exposed(tmp_path, monkeypatch):
    (tmp_path / "alice.ipynb").write_bytes(FIXTURE.read_bytes())
    monkeypatch.setattr(sandbox, "problem", lambda: "the sandbox needs Linux (bubblewrap); this is darwin")
    lines = []
    args = [str(tmp_path), "--master", str(FIXTURE), "--out", str(tmp_path / "grades.csv"), "--unsandboxed"]
    assert grade.main(args, progress=lines.append) == 0
    assert any(line.startswith("warning: no sandbox") for line in lines)
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as f:
        (row,) = csv.DictReader(f)
    assert int(row["total"]) == 5


@needs_sandbox
def test_the_sandbox_sees_no_checkout_no_home_and_no_environment():
    probe = ("import os, sys; print((sorted(os.listdir(os.path.dirname(os.path.dirname(__import__('roofline_lib')"
             ".__file__)))), os.path.exists(os.path.expanduser('~/.ipython')), 'ROOFLINE_TEST_SECRET' in os.environ,"
             " os.getpid(), sum(p.isdigit() for p in os.listdir('/proc')) < 5))")
    env = dict(os.environ, ROOFLINE_TEST_SECRET=SECRET)
    done = subprocess.run(sandbox.command([sys.executable, "-c", probe]), capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    listing, home, secret, pid, few = eval(done.stdout)  # noqa: S307 - our own probe's repr
    assert "notebooks" not in listing and "tests" not in listing and ".git" not in listing
    assert not home and not secret and pid < 10 and few


_AUTOREAP = """
import os, signal, sys, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel: their time reaches no cutime
for _ in range(4):
    for _ in range(2):
        if os.fork() == 0:
            while time.process_time() < 0.4:  # CPU time, not wall time: a busy machine only takes longer
                pass
            with open(sys.argv[1], "a") as f:
                f.write(f"{time.process_time()}\\n")
            os._exit(0)
    time.sleep(0.5)
try:
    os.wait()  # with SIGCHLD ignored, returns (ECHILD) once every child has ended
except ChildProcessError:
    pass
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watch reads Linux's /proc")
def test_the_watch_counts_cpu_of_children_reaped_by_the_kernel(tmp_path):
    """A notebook that ignores SIGCHLD hides its children's CPU time from every cutime; the watch keeps the
    time of each process it saw before it vanished. (A process that starts and ends between two looks
    adds nothing here; the count of processes started bounds those: test_bombs_cost_only_their_own_marks.)"""
    import time

    spent = tmp_path / "spent.txt"
    proc = subprocess.Popen([sys.executable, "-c", _AUTOREAP, str(spent)])
    look = sandbox.Tracker()
    while proc.poll() is None:
        time.sleep(sandbox.SAMPLE_SECONDS)
        seen = look(proc.pid).cpu
    children = sum(float(x) for x in spent.read_text().split())
    assert children > 3  # eight children of 0.4 s of CPU each, however busy the machine
    assert seen >= 0.6 * children, (seen, children)


@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"),
                    reason="this kernel keeps no lists of children (CONFIG_PROC_CHILDREN); the watch scans /proc")
def test_the_watch_finds_the_same_tree_as_a_scan_of_every_process():
    """The watch walks each thread's list of children instead of reading every process in /proc: it must find
    what the scan finds, a child started from a second thread and a grandchild included. kill_tree then stops
    all of them."""
    import time

    code = ("import subprocess, sys, threading, time\n"
            "kids = []\n"
            "t = threading.Thread(target=lambda: kids.append(subprocess.Popen(['sleep', '30'])))\n"
            "t.start(); t.join()\n"
            "kids.append(subprocess.Popen([sys.executable, '-c', 'import subprocess, time; "
            "subprocess.Popen([\"sleep\", \"30\"]); time.sleep(30)']))\n"
            "print('ready', flush=True); time.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 10
        while len(proctree.descendants(proc.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)  # the grandchild starts a moment after its parent
        scanned = proctree.descendants(proc.pid)
        assert len(scanned) == 4, scanned  # the script, its thread's sleep, the second python and its sleep
        walked = proctree.tree_stats(proc.pid)
        assert sorted(walked) == sorted(scanned)
        assert sandbox.Tracker()(proc.pid).processes == 4
        proctree.kill_tree(proc.pid)  # the root too, though it leads no process group of its own
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        proctree.kill_tree(proc.pid)
        proc.wait()


@needs_sandbox
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs util-linux's unshare")
def test_a_process_with_its_own_mounts_but_the_hosts_root_is_not_charged_the_hosts_files():
    """bwrap's child, between unsharing its mounts and pivoting into the sandbox's root, still sees the host's
    /tmp. A look that lands there must not count the host disk's files as the notebook's (an honest notebook
    was once stopped for "527,023 files" on a loaded machine). ``unshare`` holds that state for as long as we
    need: a mount namespace of its own, the host's root."""
    import time

    proc = subprocess.Popen(["unshare", "--user", "--map-root-user", "--mount", "sleep", "30"])
    try:
        deadline = time.monotonic() + 10
        while os.readlink(f"/proc/{proc.pid}/ns/mnt") == os.readlink("/proc/self/ns/mnt"):
            assert time.monotonic() < deadline, "unshare did not enter a mount namespace of its own"
            time.sleep(0.05)
        host_files = os.statvfs(f"/proc/{proc.pid}/root{sandbox.ROOT}")
        assert host_files.f_files - host_files.f_ffree > 0  # what the look would have counted
        assert sandbox._inodes([proc.pid]) == 0
    finally:
        proc.kill()
        proc.wait()


@needs_sandbox
def test_a_copy_of_the_course_grades_in_the_sandbox_with_its_own_library(tmp_path):
    """Run from a copy of the checkout, the grader imports the copy's roofline_lib; the sandbox must too (it
    sees only the copy's roofline_lib/ and data/), or every submission would fail to start."""

    for name in ("roofline_lib", "data"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-c", "import roofline_lib; from roofline_lib.teach import sandbox; "
                           "print(roofline_lib.__file__); print(repr(sandbox.problem()))"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    where, problem = done.stdout.strip().splitlines()[-2:]
    assert where.startswith(str(tmp_path)) and problem == "''", done.stdout + done.stderr


@needs_sandbox
def test_a_python_reached_through_a_link_outside_the_sandbox_runs_there(tmp_path, monkeypatch):
    """A venv made by a python3 that is a link in a folder of links (a shim folder, ~/bin) names that link: the
    sandbox recreates the link, and shows nothing else of its folder."""
    links = tmp_path / "links"
    links.mkdir()
    (links / "python3").symlink_to(os.path.realpath(sys.executable))
    (links / "notes.txt").write_text("the teacher's")
    monkeypatch.setattr(sys, "executable", str(links / "python3"))
    done = subprocess.run(sandbox.command([sys.executable, "-c", f"import os; print(os.listdir({str(links)!r}))"]),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.stdout.strip() == "['python3']", done.stdout + done.stderr


@needs_sandbox
def test_a_sandbox_the_grader_cannot_watch_is_stopped_not_left_running(tmp_path, monkeypatch):
    """Fail closed: if a look at a sandbox's processes fails (a /proc file it cannot parse, say), the sandbox
    is stopped with a note; it never runs on unwatched."""
    def broken(self, pid):
        raise RuntimeError("a look that fails")

    monkeypatch.setattr(sandbox.Tracker, "__call__", broken)
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "amy.ipynb").write_bytes(FIXTURE.read_bytes())
    lines = []
    assert grade.main([str(subs), "--master", str(FIXTURE), "--out", str(tmp_path / "g.csv"), "--cell-timeout",
                       "10", "--notebook-timeout", "45", "--allow-empty"], progress=lines.append) == 0
    said = "\n".join(lines)
    assert "could not be watched (RuntimeError)" in said, said
