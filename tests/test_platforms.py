"""Chapters 07-08 on macOS and Windows, simulated on Linux (see platform_sim.py for what is removed), without
PyTorch.

What is simulated: the missing calls and files, so every fallback path runs. What is not: the real
sysctl and kernel32 answers; their parsing is tested on hand-written values (an Apple M2's sysctl
figures, a hand-built GetLogicalProcessorInformation buffer).
"""

import pathlib
import struct
import sys

import pytest

import roofline_lib as rl
from roofline_lib import measure
from roofline_lib.measure import system

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import platform_sim  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY = dict(quick=True, array_bytes=2**20, matmul_sizes=(32, 64), repeats=3, progress=False)


@pytest.fixture(params=["darwin", "win32"])
def simulated(request, monkeypatch):
    platform_sim.simulate(request.param, monkeypatch.setattr, monkeypatch.delattr)
    return request.param


def test_simulation_removes_what_the_platform_lacks(simulated):
    import os

    assert not hasattr(os, "sched_getaffinity")
    # the simulation's own errors (platform_sim.py), not a real file missing on this machine
    with pytest.raises(FileNotFoundError, match="simulated platform"):
        pathlib.Path("/proc/meminfo").read_text()
    with pytest.raises(FileNotFoundError, match="simulated platform"):
        open("/sys/devices/system/cpu/cpu0/cache/index0/size")
    if simulated == "win32":
        assert not hasattr(os, "getloadavg") and not hasattr(os, "sysconf")
    else:
        with pytest.raises(ValueError, match="unrecognized configuration name"):
            os.sysconf("SC_AVPHYS_PAGES")


def test_whole_measurement_runs_with_warnings(simulated):
    p = measure.measure_machine(**TINY)
    assert p.platform == {"darwin": "macos", "win32": "windows"}[simulated]
    assert p.accelerator.mem_bandwidth > 0 and p.overhead_per_call > 0 and p.flops["fp32"] > 0
    text = " ".join(p.warnings)
    assert "could not read cache sizes" in text and "assuming a 32 MiB" in text
    assert p.llc_bytes == 32 * 2**20
    assert "available memory" in text  # Darwin has no SC_AVPHYS_PAGES, Windows no sysconf at all
    if simulated == "win32":
        assert p.load_average[0] is None and "no load average" in text
        assert "memory size" in text  # nor total memory without kernel32
    else:
        assert p.load_average[0] is not None  # macOS has getloadavg
    assert "warning:" in p.summary()


def test_macos_sysctl_figures_are_used(monkeypatch):
    # an Apple M2 (8 GiB; 4 performance + 4 efficiency cores; P-core L1d 128 KiB, L2 16 MiB; no L3)
    values = {"hw.memsize": 8 * 2**30, "vm.page_free_count": 100_000, "hw.pagesize": 16384,
              "hw.perflevel0.physicalcpu": 4, "hw.perflevel1.physicalcpu": 4,
              "hw.perflevel0.l1dcachesize": 128 * 2**10, "hw.perflevel0.l2cachesize": 16 * 2**20,
              "hw.l2cachesize": 4 * 2**20}
    monkeypatch.setattr(system, "sysctl", values.get)
    monkeypatch.delattr("os.sched_getaffinity")
    total, available, notes = system.memory("darwin")
    assert (total, available, notes) == (8 * 2**30, 100_000 * 16384, [])
    assert system.caches("darwin")[0] == {1: 128 * 2**10, 2: 16 * 2**20}  # the P-cores' L2, and no L3
    size, source, notes = system.last_level_cache("darwin")
    assert size == 16 * 2**20 and source.startswith("L2") and notes == []
    assert "4 performance and 4 efficiency cores" in system.cores("darwin")[1][0]


def _slpi(relation, level=0, size=0, kind=0):
    # 64-bit SYSTEM_LOGICAL_PROCESSOR_INFORMATION: mask (8), relationship (4), pad (4), 16-byte union
    union = struct.pack("<BBHII", level, 8, 64, size, kind) + b"\0" * 4 if relation == 2 else b"\0" * 16
    return struct.pack("<QI4x", 0b11, relation) + union


def test_windows_cache_records_parsed_from_a_hand_built_buffer():
    buffer = (_slpi(0) + _slpi(2, 1, 48 * 2**10, 2) + _slpi(2, 1, 32 * 2**10, 1) + _slpi(2, 2, 2 * 2**20, 0)
              + _slpi(2, 3, 36 * 2**20, 0) + _slpi(3))
    assert system.parse_logical_processor_information(buffer) == {1: 48 * 2**10, 2: 2 * 2**20, 3: 36 * 2**20}
    with pytest.raises(ValueError, match="whole number"):
        system.parse_logical_processor_information(buffer[:-1])


def test_windows_kernel32_figures_are_used(monkeypatch):
    monkeypatch.setattr(system, "windows_memory", lambda: (16 * 2**30, 9 * 2**30))
    monkeypatch.setattr(system, "windows_caches", lambda: {2: 2**21, 3: 2**25})
    assert system.memory("win32") == (16 * 2**30, 9 * 2**30, [])
    assert system.last_level_cache("win32")[:2] == (2**25, "L3 from GetLogicalProcessorInformation")


def test_platform_names():
    assert [system.platform_name(p) for p in ("linux", "darwin", "win32", "freebsd13")] == \
        ["linux", "macos", "windows", "other"]


def test_linux_probe_needs_no_fallback_here():
    if not sys.platform.startswith("linux"):
        pytest.skip("the real Linux probe")
    info = system.probe()
    assert info.platform == "linux" and info.load_average is not None
    assert 0 < info.available_memory <= info.total_memory and info.cores >= 1


# ---------------------------------------------------------------- both chapters, top to bottom

def _run_simulated(notebook, platform):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "notebooks" / notebook, as_version=4)
    setup = (f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
             # what the notebook's first cell imports, loaded while the platform is still the real one
             "import numpy, matplotlib, matplotlib.pyplot, roofline_lib, roofline_lib.plotting\n"
             f"import platform_sim; platform_sim.simulate({platform!r})\n"
             # and as a reader who has not installed PyTorch (the chapters' own nbval runs have it, where
             # it is installed): the chapters' "PyTorch not installed" paths run here, on each platform (and in
             # test_student's exercise editions, on Linux)
             "sys.modules['torch'] = None\n"
             "import roofline_lib.measure as _m; _w = _m.measure_machine(**" + repr(TINY) + ").warnings\n"
             "assert any('could not read cache sizes' in w for w in _w), _w")
    nb.cells.insert(0, nbformat.v4.new_code_cell(setup))
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {
        "path": str(ROOT / "notebooks")}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error" or o.get("name") == "stderr"]
    assert not errors, errors
    return nb


# Each chapter on one platform, each platform under one chapter: what differs between the two platforms lies in
# the library (the probe's fallbacks, and the summary with or without a load average), which
# test_whole_measurement_runs_with_warnings runs on both; the chapters' own code reads only what is the same on
# both (the profile's roofs and its assumed 32 MiB cache), so the other two pairings would repeat those runs.
@pytest.mark.parametrize(("notebook", "platform"), [("07_measure_your_machine.ipynb", "darwin"),
                                                    ("08_overhead_bound.ipynb", "win32")])
def test_chapter_runs_on_simulated_platform(notebook, platform):
    nb = _run_simulated(notebook, platform)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "could not read cache sizes" in text  # the profile's summary states the assumption
    assert "pip install torch" in text  # the chapter says what to install, and carries on without it
    assert rl.__name__ == "roofline_lib"
