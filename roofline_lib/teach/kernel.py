"""One kernel for one submission: start it, run a cell, read answers out of it, stop it.

Used by the worker process (worker.py), which is the kernel's parent: a kernel
that signals or kills its parent stops only its own worker, never the grader.
The grader itself only needs ``parse_capture``, to turn what the kernel
replied into a value it judges.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import queue
import signal
import subprocess
import time
from pathlib import Path

STARTUP_TIMEOUT = 60.0  # s: a kernel to start

# Defined in the kernel before each read. It turns the answer into JSON the
# grader can judge: numbers (as check() would read them), strings, booleans,
# "missing" for `...`/None, else only the type's name and a short repr.
CAPTURE_DEF = '''
def __roofline_capture__(thunk):
    import json, numbers
    try:
        value = thunk()
    except BaseException as e:
        return json.dumps({"kind": "error", "error": (type(e).__name__ + ": " + str(e))[:300]})
    if value is None or value is Ellipsis:
        return json.dumps({"kind": "missing"})
    if isinstance(value, bool):
        return json.dumps({"kind": "bool", "value": value})
    if isinstance(value, str):
        return json.dumps({"kind": "str", "value": value[:2000]})
    number = None
    try:
        if isinstance(value, numbers.Real):
            number = float(value)
        elif type(value).__name__ == "ndarray" and value.size == 1 and value.dtype.kind in "iuf":
            number = float(value.item())
        elif getattr(value, "is_number", False) is True:
            number = float(value)
    except Exception:
        number = None
    try:
        text = repr(value)[:200]
    except Exception:
        text = "?"
    if number is not None:
        return json.dumps({"kind": "number", "value": number, "type": type(value).__name__[:100], "repr": text})
    return json.dumps({"kind": "other", "type": type(value).__name__[:100], "repr": text})
'''
REPLY_CHARS = 20_000  # a real capture is far shorter; a forged reply is cut here


class Unreadable(Exception):
    """A kernel's answer that could not be read back (not the expected message, or too large)."""

    pass


def trim_reply(reply):
    """The part of one user_expressions entry the grader looks at, with every string bounded."""
    if not isinstance(reply, dict):
        return {"status": "error", "ename": "no reply"}
    text = (reply.get("data") or {}).get("text/plain") if isinstance(reply.get("data"), dict) else None
    return {"status": str(reply.get("status"))[:20], "ename": str(reply.get("ename", "error"))[:100],
            "evalue": str(reply.get("evalue", ""))[:300],
            "data": {"text/plain": text[:REPLY_CHARS] if isinstance(text, str) else None}}


def parse_capture(reply):
    """The answer value from one user_expressions entry; Unreadable says why there is none."""
    if reply.get("status") != "ok":
        raise Unreadable(f"{reply.get('ename', 'error')}: {reply.get('evalue', '')}"[:200])
    try:
        text = ast.literal_eval(reply["data"]["text/plain"])
        captured = json.loads(text)
        kind = captured["kind"]
    except (KeyError, TypeError, ValueError, SyntaxError, RecursionError, MemoryError):
        raise Unreadable("the kernel's reply was not in the expected form") from None
    if kind == "error":
        raise Unreadable(str(captured.get("error", "error"))[:200])
    if kind == "missing":
        return ...
    if kind == "bool" and isinstance(captured.get("value"), bool):
        return captured["value"]
    if kind == "str" and isinstance(captured.get("value"), str):
        return captured["value"]
    if kind == "number" and isinstance(captured.get("value"), (int, float)) and not isinstance(
            captured["value"], bool):
        try:
            return _stand_in(captured, float, float(captured["value"]))
        except OverflowError:  # an integer of hundreds of digits: no float holds it
            raise Unreadable(f"the number is too large for a float ({len(str(captured['value']))} digits)") from None
    if kind == "other":
        return _stand_in(captured, object)
    raise Unreadable("the kernel's reply was not in the expected form")


def _stand_in(captured, base, *value):
    """The answer rebuilt for check(): a ``base`` whose type's name and repr are the original's."""
    text = str(captured.get("repr", "?"))[:200]
    name = str(captured.get("type") or base.__name__)[:100]
    return type(name if name.isidentifier() else "answer", (base,), {"__repr__": lambda self: text})(*value)


# ---------------------------------------------------------------- the kernel


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How a cell (or a read) ended: kind is "ok", "error", "timeout" or "dead"; text says more."""

    kind: str = "ok"
    text: str = ""


def kernel_env(private=None):
    """The environment of a worker and its kernel. ``private``: a folder of the grader's, for a worker run
    without a sandbox, which then gets Jupyter and IPython folders of its own there (no kernelspec or
    startup file of the teacher's, none left for a later run). In a sandbox the environment is already
    the sandbox's own (sandbox.environment)."""
    env = dict(os.environ)
    # The kernel imports the same roofline_lib as the grader.
    root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")  # parallel kernels should not fight over cores
    if private is not None:
        home = Path(private) / "home"
        env.update({"IPYTHONDIR": str(home / ".ipython"), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
                    "JUPYTER_DATA_DIR": str(home / "jupyter"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
                    "MPLCONFIGDIR": str(home / ".matplotlib")})
    return env


def limit_memory(megabytes):
    """A preexec function: the address-space limit of a kernel (0: as high as the hard limit allows)."""

    def apply():
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = int(megabytes) * 1024 * 1024 if megabytes else hard
        # The worker runs under a soft limit of its own; the kernel gets exactly this one.
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit if megabytes else hard))

    return apply


class Kernel:
    """One kernel for one submission, restartable; spoken to with jupyter_client's public API."""

    def __init__(self, cells, scratch, memory_mb):
        self.sources = [src for _, src in cells]
        self.scratch, self.memory_mb = scratch, memory_mb
        self.km = self.kc = None
        self.output = {}  # cell index -> bytes of output seen (counted, never kept)

    @property
    def running(self):
        """Whether the kernel has been started and not stopped."""
        return self.kc is not None

    async def start(self, on_started=None):
        """Start a kernel; ``on_started(pid)`` is told its process id (its process group's too) at once."""
        from jupyter_client.manager import AsyncKernelManager

        self.km = AsyncKernelManager(kernel_name="python3")
        await self.km.start_kernel(cwd=str(self.scratch), env=kernel_env(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, preexec_fn=limit_memory(self.memory_mb))
        if on_started:
            on_started(getattr(self.km.provisioner, "pid", None))
        kc = self.km.client()
        kc.start_channels()
        self.kc = kc
        await kc.wait_for_ready(timeout=STARTUP_TIMEOUT)

    async def stop(self):
        """Stop the kernel and everything in its process group."""
        km, kc, self.km, self.kc = self.km, self.kc, None, None
        if km is None:
            return
        pid = getattr(km.provisioner, "pid", None) if km.has_kernel else None
        if kc is not None:
            kc.stop_channels()
        try:
            if km.has_kernel:
                await km.shutdown_kernel(now=True)
        except Exception:  # noqa: BLE001 - a kernel that is already gone is fine
            pass
        kill_group(pid)

    def output_bytes(self, index):
        """Bytes of output cell ``index`` has produced so far."""
        return self.output.get(index, 0)

    def _count(self, index, msg):
        content = msg.get("content") or {}
        size = len(str(content.get("text", ""))) + sum(len(str(v)) for v in (content.get("data") or {}).values())
        self.output[index] = self.output.get(index, 0) + size

    async def run_cell(self, index, timeout):
        """Run one cell until the kernel is idle again; return an Outcome."""
        kc, deadline = self.kc, time.monotonic() + timeout
        msg_id = kc.execute(self.sources[index], store_history=True, allow_stdin=False, stop_on_error=False)
        reply, idle = None, False
        while reply is None or not idle:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Outcome("timeout", f"was still running after {timeout:.0f} s")
            got = False
            try:
                msg = await kc.get_iopub_msg(timeout=min(remaining, 0.2) if reply is None or not idle else 0)
                got = True
                if (msg.get("parent_header") or {}).get("msg_id") == msg_id:
                    if msg.get("msg_type") == "status":
                        idle = idle or (msg.get("content") or {}).get("execution_state") == "idle"
                    else:
                        self._count(index, msg)
            except queue.Empty:
                pass
            if reply is None:
                try:
                    msg = await kc.get_shell_msg(timeout=0)
                    got = True
                    if (msg.get("parent_header") or {}).get("msg_id") == msg_id:
                        reply = msg.get("content") or {}
                except queue.Empty:
                    pass
            if not got and not await self.km.is_alive():
                return Outcome("dead", "stopped the kernel (os._exit or a crash)")
        if reply.get("status") == "error":
            return Outcome("error", f"raised {reply.get('ename', 'an error')}: {reply.get('evalue', '')}"[:300])
        return Outcome()

    async def read(self, expressions, timeout):
        """Evaluate ``expressions`` (name -> source): (Outcome, {name: trimmed reply})."""
        kc = self.kc
        wrapped = {name: f"__roofline_capture__(lambda: ({src}\n))" for name, src in expressions.items()}
        msg_id = kc.execute(CAPTURE_DEF, silent=True, store_history=False, user_expressions=wrapped,
                            stop_on_error=False)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Outcome("timeout", f"reading the answer took more than {timeout:.0f} s"), {}
            try:
                msg = await kc.get_shell_msg(timeout=min(remaining, 1.0))
            except queue.Empty:
                if not await self.km.is_alive():
                    return Outcome("dead", "stopped the kernel while its answer was read"), {}
                continue
            if (msg.get("parent_header") or {}).get("msg_id") == msg_id:
                break
        results = (msg.get("content") or {}).get("user_expressions") or {}
        results = results if isinstance(results, dict) else {}
        return Outcome(), {name: trim_reply(results.get(name)) for name in expressions}


def kill_group(pid):
    """SIGKILL the process group led by ``pid`` (a kernel or a worker), if it is still there."""
    if not pid:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


__all__ = [
    "CAPTURE_DEF", "Kernel", "kernel_env", "kill_group", "limit_memory", "Outcome", "parse_capture", "REPLY_CHARS",
    "STARTUP_TIMEOUT", "trim_reply", "Unreadable",
]
