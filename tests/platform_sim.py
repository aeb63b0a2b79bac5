"""Make this Linux process look like macOS or Windows to roofline_lib: what those platforms lack is removed.

- both: ``sys.platform`` says so; ``os.sched_getaffinity`` (Linux only) is gone; /proc and /sys cannot be
  opened or listed (neither exists there);
- Windows: ``os.getloadavg`` and ``os.sysconf`` are gone too (Unix only), and ``ctypes.windll`` is absent
  as on any non-Windows Python, so the kernel32 calls fail as they would if they misbehaved;
- macOS: ``os.sysconf`` keeps the names Darwin defines, but ``SC_AVPHYS_PAGES`` raises ValueError as on
  Darwin; the C library has no ``sysctlbyname`` here, so every sysctl read fails.

``simulate(platform, setattr, delattr)`` takes the two patching functions, so pytest's monkeypatch
(undone after the test) and a notebook kernel (thrown away afterwards) can both use it.
"""

import builtins

# ctypes.util picks its find_library by sys.platform when first imported: loaded here, before the platform is
# faked, it is this host's (as "darwin" it would import ctypes.macholib, which Debian's Python leaves out)
import ctypes.util  # noqa: F401
import io
import os
import sys

HIDDEN = ("/proc", "/sys")


def _hidden(path):
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return False
    return any(text == h or text.startswith(h + "/") for h in HIDDEN)


def simulate(platform, setattr=builtins.setattr, delattr=builtins.delattr):
    if platform not in ("darwin", "win32"):
        raise ValueError(f"platform must be 'darwin' or 'win32', got {platform!r}")
    real_open, real_scandir, real_listdir, real_sysconf = io.open, os.scandir, os.listdir, getattr(os, "sysconf", None)

    def guarded(real):
        def call(path=".", *args, **kwargs):
            if _hidden(path):
                raise FileNotFoundError(2, "No such file or directory (simulated platform)", os.fspath(path))
            return real(path, *args, **kwargs)
        return call

    setattr(sys, "platform", platform)
    for name in ("sched_getaffinity", "sched_setaffinity"):
        if hasattr(os, name):
            delattr(os, name)
    setattr(io, "open", guarded(real_open))
    setattr(builtins, "open", guarded(real_open))
    setattr(os, "scandir", guarded(real_scandir))
    setattr(os, "listdir", guarded(real_listdir))
    if platform == "win32":
        for name in ("getloadavg", "sysconf"):
            if hasattr(os, name):
                delattr(os, name)
    elif real_sysconf is not None:
        def darwin_sysconf(name):
            if name == "SC_AVPHYS_PAGES":
                raise ValueError("unrecognized configuration name")
            return real_sysconf(name)
        setattr(os, "sysconf", darwin_sysconf)
