"""The course's own measurement of a device, kept as data beside the published ones.

    python -m roofline_lib.measure.record --out data/measured     # on the machine to measure (about a minute)
    records = rl.measure.own_measurements()                       # what data/measured/ holds, read back

One run measures the device (``measure_device``: STREAM copy/add/triad, the best matmul per format, launch
costs, a CUDA graph) and a few decode steps of a real model's shapes with random weights (``DecodeModel``),
and writes one TOML file, ``<chip>-<date>.toml``: the device and its software (torch, CUDA or HIP, the
driver, the memory nvidia-smi reports), the method (sizes, repeats), every figure with its minimum, median
and spread, and each decode step beside the course's bound for it on the datasheet chip and on the measured
roofs. A bound above its measured time is a bug in the bound (or in the measurement): ``check`` says which
record shows one.
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import re
import subprocess
import sys
import tomllib

from ..core.catalog import DATA_DIR
from ..roofline.bounds import estimate
from ..specs.hardware import Accelerator, get_accelerator
from ..specs.models import get_model

RECORD_DIR = DATA_DIR / "measured"
DEFAULT_MODEL = "Llama-3.1-8B"
# (batch, context) of the decode steps measured: one sequence (the weights' read dominates) and a large
# batch with a long context (the KV cache's read is as large as the weights')
DEFAULT_DECODES = ((1, 1024), (64, 2048))
QUICK_DECODES = ((1, 1024),)
# torch's (and nvidia-smi's) names of devices -> the course's datasheet files
DATASHEET_NAMES = {
    "NVIDIA H200": "H200 SXM", "NVIDIA H200 NVL": "H200 NVL", "NVIDIA H100 80GB HBM3": "H100 SXM",
    "NVIDIA H100 PCIe": "H100 PCIe", "NVIDIA H100 NVL": "H100 NVL", "NVIDIA A100-SXM4-80GB": "A100 80GB SXM",
    "NVIDIA A100-SXM4-40GB": "A100 40GB SXM", "NVIDIA A100 80GB PCIe": "A100 80GB PCIe",
    "NVIDIA A100-PCIE-40GB": "A100 40GB PCIe", "Tesla T4": "T4", "NVIDIA L4": "L4", "NVIDIA L40S": "L40S",
    "NVIDIA A10": "A10", "AMD Instinct MI300X": "MI300X", "NVIDIA B200": "B200",
}


def datasheet_for(device_name):
    """The course's datasheet chip for a device's name as torch reports it, or None."""
    name = DATASHEET_NAMES.get(device_name.strip())
    return get_accelerator(name) if name else None


def _nvidia_smi():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if out.returncode != 0 or not out.stdout.strip():
        return {}
    name, driver, memory = (f.strip() for f in out.stdout.splitlines()[0].split(","))
    return {"nvidia_smi_name": name, "driver": driver, "nvidia_smi_memory": memory}


def _commit():
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=pathlib.Path(__file__).parent)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _timing(t):
    return {"min_s": float(t.min), "median_s": float(t.median), "max_s": float(t.max), "repeats": len(t.samples)}


def record_device(device=None, *, quick=False, model=DEFAULT_MODEL, decodes=None, dtype=None):
    """Measure ``device`` and the decode steps ``decodes`` ((batch, context) pairs) of ``model``: the record as a
    dict, as ``write_record`` stores it. A decode step whose weights and cache need more than a third of the
    device's free memory is skipped and said so."""
    from ..llm.steps import decode_step
    from .decode import DecodeModel, _refuse_unbuilt, measure_decode
    from .device import measure_device
    from .torch_timing import _torch

    torch = _torch()
    m = get_model(model)
    _refuse_unbuilt(m)  # before a minute of measuring, not after
    profile = measure_device(device, quick=quick)
    info, device = profile.info, profile.device
    dtype = dtype or ("bf16" if "bf16" in profile.flops else "fp32")
    chip = datasheet_for(info.name)
    rec = {
        "date": profile.date, "course_commit": _commit(),
        "device": {"name": info.name, "kind": info.kind, "datasheet": chip.name if chip else "",
                   "torch": profile.torch_version, "cuda": torch.version.cuda or "",
                   "hip": getattr(torch.version, "hip", None) or "", "python": sys.version.split()[0],
                   "total_memory_bytes": float(info.total_memory), "cache_bytes": float(info.cache_bytes),
                   "capability": ".".join(map(str, info.capability)), "arch": info.arch, "units": info.units}
                  | (_nvidia_smi() if info.kind == "cuda" else {}),
        "method": {"quick": quick, "stream_elements": profile.plan.stream_elements,
                   "matmul_sizes": list(profile.plan.matmul_sizes), "repeats": profile.plan.repeats,
                   "flush_bytes": profile.plan.flush_bytes, "tf32": False},
        "bandwidth": dict(profile.bandwidth) | {"copy_counted_once": profile.bandwidth_copied_once},
        "matmul": dict(profile.flops), "matmul_best_n": dict(profile.best_matmul_size),
        "launch": {k.replace(" ", "_"): v for k, v in profile.launch.items()}, "graph": dict(profile.graph),
        "timings": {re.sub(r"\W+", "_", k): _timing(t) for k, t in profile.timings.items()},
        "skipped": dict(profile.skipped), "decode": [],
    }
    measured_chip = profile.accelerator
    built = None
    for batch, context in decodes or (QUICK_DECODES if quick else DEFAULT_DECODES):
        need = m.weight_bytes(dtype) + m.kv_cache_bytes(batch, context, dtype)
        if need > info.free_memory / 3:
            rec["skipped"][f"decode {m.name} batch {batch} context {context}"] = (
                f"needs {need / 1e9:.1f} GB, more than a third of the {info.free_memory / 1e9:.1f} GB free")
            continue
        built = DecodeModel(m, batch, context, device=device, dtype=dtype) if built is None \
            else built.with_cache(batch, context)
        times, skipped = measure_decode(built, repeats=5 if quick else 11)
        rec["skipped"] |= skipped
        work = decode_step(m, batch, context, weight_dtype=dtype, kv_dtype=dtype, compute_dtype=dtype)
        row = {"model": m.name, "dtype": dtype, "batch": batch, "context": context,
               "weight_bytes": float(built.weight_bytes()), "kv_bytes": float(built.kv_bytes()),
               "bound_bytes": float(work.bytes), "bound_flops": float(work.flops),
               "bound_on_measured_s": float(estimate(work, measured_chip, dtype).lower)}
        if chip is not None:
            row["bound_on_datasheet_s"] = float(estimate(work, chip, dtype).lower)
        for how, t in times.items():
            row |= {f"{how}_{k}": v for k, v in _timing(t).items() if k != "repeats"}
        rec["decode"].append(row)
    return rec


# ------------------------------------------------------------------ TOML, written and read

def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"a record holds numbers, strings and lists, got {type(v).__name__}")


def _key(k):
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_value(k)


def to_toml(rec):
    """``rec`` (a dict of scalars, tables of scalars, one level of sub-tables, and the list of decode rows) as
    TOML text."""
    head = ["# The course's own measurement, written by python -m roofline_lib.measure.record",
            "# (roofline_lib/measure/record.py). Rates in byte/s and FLOP/s, times in seconds, sizes in bytes.",
            "# bandwidth: every read and write counted, as STREAM counts them; copy_counted_once as nvbandwidth."]
    lines = head + [f"{_key(k)} = {_toml_value(v)}" for k, v in rec.items() if not isinstance(v, (dict, list))]
    for k, v in rec.items():
        if isinstance(v, dict):
            flat = {a: b for a, b in v.items() if not isinstance(b, dict)}
            lines += ["", f"[{_key(k)}]"] + [f"{_key(a)} = {_toml_value(b)}" for a, b in flat.items()]
            for a, b in v.items():
                if isinstance(b, dict):
                    lines += ["", f"[{_key(k)}.{_key(a)}]"] + [f"{_key(x)} = {_toml_value(y)}" for x, y in b.items()]
    for row in rec.get("decode", []):
        lines += ["", "[[decode]]"] + [f"{_key(a)} = {_toml_value(b)}" for a, b in row.items()]
    return "\n".join(lines) + "\n"


def write_record(rec, folder=RECORD_DIR):
    """Write ``rec`` as ``folder/<device>-<date>.toml`` (a second run the same day gets -2, -3 ...)."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^a-z0-9]+", "-", rec["device"]["name"].lower()).strip("-") or "device"
    path, n = folder / f"{slug}-{rec['date']}.toml", 2
    while path.exists():
        path, n = folder / f"{slug}-{rec['date']}-{n}.toml", n + 1
    text = to_toml(rec)
    if tomllib.loads(text) != tomllib.loads(to_toml(tomllib.loads(text))):  # what is read back writes the same
        raise AssertionError("the record does not survive a round trip through TOML")
    path.write_text(text, encoding="utf-8")
    return path


@dataclasses.dataclass(frozen=True)
class DeviceRecord:
    """One file of data/measured/, read back. ``data`` is the TOML as a dict."""

    data: dict
    path: pathlib.Path

    @property
    def name(self):
        """The device's name as torch reports it."""
        return self.data["device"]["name"]

    @property
    def datasheet(self):
        """The datasheet chip of the device measured, or None where the course has none."""
        name = self.data["device"].get("datasheet")
        return get_accelerator(name) if name else None

    @property
    def accelerator(self):
        """The measured roofs as a chip: the best matmul per format and the better of add and triad."""
        bw = self.data["bandwidth"]
        return Accelerator(name=f"{self.name} (measured {self.data['date']})", peak_flops_by_dtype=self.data["matmul"],
                           mem_bandwidth=max(bw["add"], bw["triad"]),
                           mem_capacity=self.data["device"]["total_memory_bytes"], vendor="measured",
                           notes=f"the course's own measurement, {self.path.name}")

    @property
    def decodes(self):
        """The decode steps timed, each a table of its settings, times and bounds."""
        return self.data.get("decode", [])

    def problems(self):
        """What is wrong with the record: a bound above a measured time, a measured rate above the datasheet."""
        out = []
        for row in self.decodes:
            fastest = min(row[k] for k in ("eager_min_s", "graph_min_s") if k in row)
            for key in ("bound_on_datasheet_s", "bound_on_measured_s"):
                if key in row and row[key] > fastest:
                    out.append(f"{row['model']} batch {row['batch']} context {row['context']}: {key} "
                               f"{row[key] * 1e3:.3f} ms is above the fastest measured step {fastest * 1e3:.3f} ms")
        chip = self.datasheet
        if chip is not None:
            for dtype, rate in self.data["matmul"].items():
                peak = chip.peak_flops_by_dtype.get(dtype)
                if peak and rate > peak:
                    out.append(f"matmul {dtype}: {rate / 1e12:.1f} TFLOP/s measured, above the datasheet's "
                               f"{peak / 1e12:.1f}")
            for kernel in ("copy", "add", "triad"):
                if self.data["bandwidth"][kernel] > chip.mem_bandwidth:
                    out.append(f"{kernel}: {self.data['bandwidth'][kernel] / 1e9:.0f} GB/s measured, above the "
                               f"datasheet's {chip.mem_bandwidth / 1e9:.0f}")
        return out


def load_record(path):
    """A ``DeviceRecord`` from a file ``python -m roofline_lib.measure.record`` wrote; a ValueError naming the file
    where it is not one."""
    path = pathlib.Path(path)
    with open(path, "rb") as f:
        data = tomllib.load(f)
    missing = [k for k in ("date", "device", "method", "bandwidth", "matmul", "launch") if k not in data]
    if missing:
        raise ValueError(f"{path.name}: not a record of python -m roofline_lib.measure.record "
                         f"(no {', '.join(missing)})")
    return DeviceRecord(data, path)


def own_measurements(folder=RECORD_DIR):
    """Every record in ``folder`` (data/measured/), oldest first; [] where there is none yet."""
    folder = pathlib.Path(folder)
    paths = sorted(folder.glob("*.toml")) if folder.is_dir() else []
    return sorted((load_record(p) for p in paths), key=lambda r: (r.data["date"], r.path.name))


def _summary(rec):
    lines = [f"{rec['device']['name']} ({rec['device']['kind']}, torch {rec['device']['torch']}), {rec['date']}"]
    bw = rec["bandwidth"]
    lines.append("  STREAM " + ", ".join(f"{k} {bw[k] / 1e9:.0f}" for k in ("copy", "add", "triad")) + " GB/s; "
                 f"copy counted once {bw['copy_counted_once'] / 1e9:.0f} GB/s")
    lines.append("  matmul " + ", ".join(f"{k} {v / 1e12:.1f}" for k, v in rec["matmul"].items()) + " TFLOP/s")
    lines.append(f"  launch {rec['launch']['issue'] * 1e6:.1f} us issued, {rec['launch']['round_trip'] * 1e6:.1f} us "
                 "round trip" + (f"; graph {rec['graph']['graph'] * 1e6:.2f} us per kernel vs eager "
                                 f"{rec['graph']['eager'] * 1e6:.2f}" if rec["graph"] else ""))
    for row in rec["decode"]:
        times = ", ".join(f"{how} {row[f'{how}_min_s'] * 1e3:.3f} ms" for how in ("eager", "graph")
                          if f"{how}_min_s" in row)
        bound = row.get("bound_on_datasheet_s", row["bound_on_measured_s"])
        lines.append(f"  decode {row['model']} {row['dtype']} batch {row['batch']} context {row['context']}: "
                     f"{times}; bound {bound * 1e3:.3f} ms")
    lines += [f"  skipped: {k}: {v}" for k, v in rec["skipped"].items()]
    return "\n".join(lines)


def main(argv=None):
    """``python -m roofline_lib.measure.record``: measure this device and a model's decode steps, write the record; exit
    1 on a problem found, 2 where nothing could be measured."""
    ap = argparse.ArgumentParser(prog="python -m roofline_lib.measure.record", description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None, help="cuda, cuda:N, mps or cpu (default: the first torch can use)")
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats, one decode step")
    ap.add_argument("--model", default=DEFAULT_MODEL, help=f"the model whose decode step is timed ({DEFAULT_MODEL})")
    ap.add_argument("--out", default=str(RECORD_DIR), help="the folder to write to (data/measured)")
    args = ap.parse_args(argv)
    try:
        rec = record_device(args.device, quick=args.quick, model=args.model)
    except (ModuleNotFoundError, ValueError, KeyError) as exc:  # no torch, no such device or model
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = write_record(rec, args.out)
    print(_summary(rec))
    problems = load_record(path).problems()
    print(f"wrote {path}")
    for p in problems:
        print(f"PROBLEM: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["DATASHEET_NAMES", "DeviceRecord", "RECORD_DIR", "datasheet_for", "load_record", "own_measurements",
           "record_device", "to_toml", "write_record"]
