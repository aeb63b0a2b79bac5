"""Accelerators: peak FLOP/s per dtype, memory bandwidth and capacity, with sources.

Each chip is one TOML file in ``data/accelerators/``, written in the units of a
datasheet (TFLOP/s, TB/s, GB). The loader converts to SI base units (FLOP/s,
byte/s, byte; decimal prefixes) and refuses a file with a missing, non-numeric
or non-positive figure, naming the file, the chip and the field.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re

from ..core import units
from ..core.catalog import DATA_DIR, Catalog, Entry, build_checked, read_toml
from ..core.checks import figure, positive
from ..core.dtypes import BYTES_PER_ELEMENT, COMPUTE_FORMAT, canonical_dtype

ACCELERATOR_DIR = DATA_DIR / "accelerators"

TERA, GIGA = 1e12, 1e9  # the prefixes data files are written in (TFLOP/s, GB)


@dataclasses.dataclass(frozen=True)
class Accelerator:
    """One chip. All figures in SI base units: FLOP/s, byte/s, byte."""

    name: str
    peak_flops_by_dtype: dict  # dtype -> dense FLOP/s (ops/s for int8)
    mem_bandwidth: float  # byte/s
    mem_capacity: float  # byte, as the driver reports it (what a program can address)
    vendor: str = ""
    aliases: tuple = ()
    interconnect: str = ""
    interconnect_bandwidth: float | None = None  # byte/s, both directions added
    host_link: str = ""
    host_link_bandwidth: float | None = None  # byte/s, both directions added
    compute_units: int | None = None  # SMs (NVIDIA), CUs (AMD), TensorCores (TPU)
    mem_capacity_label: str = ""  # the datasheet's own words ("141 GB"): display only, never arithmetic
    special_function_rate: float | None = None  # op/s of the special-function units (exp2, log2, rcp, ...)
    sparse_flops_by_dtype: dict = dataclasses.field(default_factory=dict)  # never used by rooflines
    measured: dict = dataclasses.field(default_factory=dict)  # published achieved ceilings
    sources: dict = dataclasses.field(default_factory=dict)
    notes: str = ""
    source_file: str = ""

    def __post_init__(self):
        where = f"accelerator {self.name!r}"
        if not self.peak_flops_by_dtype:
            raise ValueError(f"{where}: peak_flops_by_dtype is empty; give at least one dtype")
        clean = {}
        for dtype, value in self.peak_flops_by_dtype.items():
            clean[canonical_dtype(dtype)] = figure(f"{where}: peak FLOP/s for {dtype}", value)
        object.__setattr__(self, "peak_flops_by_dtype", clean)
        object.__setattr__(self, "mem_bandwidth", figure(f"{where}: mem_bandwidth", self.mem_bandwidth))
        object.__setattr__(self, "mem_capacity", figure(f"{where}: mem_capacity", self.mem_capacity))
        for field in ("interconnect_bandwidth", "host_link_bandwidth", "special_function_rate"):
            value = getattr(self, field)
            if value is not None:
                object.__setattr__(self, field, figure(f"{where}: {field}", value))

    @property
    def dtypes(self):
        """The dtypes this chip has a dense peak for, fastest-first order of the file."""
        return tuple(self.peak_flops_by_dtype)

    def peak_flops(self, dtype="bf16"):
        """Dense peak FLOP/s for ``dtype`` (no 2:4 sparsity)."""
        key = canonical_dtype(dtype)
        if key not in self.peak_flops_by_dtype:
            key = self.datasheet_row(key)
        return self.peak_flops_by_dtype[key]

    def datasheet_row(self, dtype="bf16"):
        """The datasheet row whose peak ``peak_flops(dtype)`` returns: the format's own ("fp8" for fp8) or, for a
        block-scaled format that no datasheet lists by name, the row of the tensor cores it runs on
        (``core.dtypes.COMPUTE_FORMAT``: NVFP4 and MXFP4 at the "fp4" row, MXFP8 at "fp8"). ValueError if the
        chip has neither."""
        key = canonical_dtype(dtype)
        if key in self.peak_flops_by_dtype:
            return key
        row = COMPUTE_FORMAT.get(key)
        if row in self.peak_flops_by_dtype:
            return row
        also = f" (nor {row}, the tensor-core rate {key} computes at)" if row else ""
        raise ValueError(f"{self.name} has no {key} peak in its datasheet{also}; it has: {', '.join(self.dtypes)}")

    def ridge_point(self, dtype="bf16"):
        """FLOP per byte at which the roofline bends: peak_flops / mem_bandwidth.

        >>> import roofline_lib as rl
        >>> round(rl.get_accelerator("A100").ridge_point("bf16"), 1)    # 312 TFLOP/s / 2.039 TB/s
        153.0
        """
        return self.peak_flops(dtype) / self.mem_bandwidth

    def exp_time(self, count):
        """Seconds for ``count`` exponentials (or other special functions) at the special-function
        units' peak rate: a third ceiling beside t_math and t_mem, since softmax's exponentials do
        not run on the tensor cores. Vectorised. ValueError if the chip has no sourced rate."""
        if self.special_function_rate is None:
            with_data = sorted({a.name for a in _registry().values() if a.special_function_rate})
            raise ValueError(f"{self.name} has no sourced special-function (exp) throughput in its data file; "
                             f"chips that have one: {', '.join(with_data) or 'none'}")
        return positive("count", count) / self.special_function_rate

    @property
    def interconnect_bandwidth_per_direction(self):
        """Chip-to-chip byte/s in one direction (datasheets add both directions)."""
        if self.interconnect_bandwidth is None:
            raise ValueError(f"{self.name} has no chip-to-chip interconnect figure")
        return self.interconnect_bandwidth / 2

    @property
    def host_link_bandwidth_per_direction(self):
        """Chip-to-host byte/s in one direction (PCIe; datasheets add both directions)."""
        if self.host_link_bandwidth is None:
            raise ValueError(f"{self.name} has no host link (PCIe) figure")
        return self.host_link_bandwidth / 2

    def achieved(self):
        """The same chip with its published *measured* ceilings in place of the datasheet ones.

        Real kernels never reach the datasheet roof; this is the "sub-optimal"
        roofline drawn below it. Raises ValueError if no measurement is recorded.
        """
        if not self.measured:
            with_data = [a.name for a in _registry().values() if a.measured]
            raise ValueError(
                f"no published measured ceilings are recorded for {self.name}; "
                f"chips that have them: {', '.join(sorted(set(with_data)))}"
            )
        peaks = {d: v for d, v in self.measured.items() if d in BYTES_PER_ELEMENT}
        return dataclasses.replace(
            self,
            name=f"{self.name} (measured)",
            aliases=(),
            peak_flops_by_dtype=peaks,
            mem_bandwidth=self.measured["mem_bandwidth"],
            measured={},
        )

    def __repr__(self):
        # in the datasheet's own units (TFLOP/s, TB/s), so the figures read as the vendor prints them
        bf16 = units.in_units(self.peak_flops_by_dtype.get("bf16", float("nan")), "T")
        return (f"Accelerator({self.name!r}, bf16={bf16:g} TFLOP/s, {units.in_units(self.mem_bandwidth, 'T'):g} TB/s, "
                f"{self.mem_capacity / units.GIB:.4g} GiB)")


# ---------------------------------------------------------------- file loading

_REQUIRED = ("name", "vendor", "mem_bandwidth_TBps", "mem_capacity_label", "peak_dense_TFLOPs", "sources")
# Memory capacity as the driver reports it, in one of these units. Vendor "GB" of memory are
# about GiB, so the datasheet's "141 GB" (kept as mem_capacity_label) is not 141e9 bytes.
_CAPACITY_FIELDS = {"mem_capacity_MiB": 2**20, "mem_capacity_GiB": units.GIB, "mem_capacity_bytes": 1}


def load_accelerator(path):
    """Read one accelerator TOML file; raise ValueError naming the file, chip and field."""
    path = pathlib.Path(path)
    raw = read_toml(path)
    entry = Entry(raw, f"{path.name} (chip {raw.get('name', '?')!r})")
    fail = entry.fail
    entry.require(_REQUIRED)
    if "mem_capacity_GB" in raw:
        fail("mem_capacity_GB", "is ambiguous (vendor memory 'GB' are about GiB): put the datasheet's words in "
             "mem_capacity_label (e.g. \"80 GB\") and the size the driver reports in mem_capacity_MiB "
             "(nvidia-smi memory.total), mem_capacity_bytes or mem_capacity_GiB")
    given = [f for f in _CAPACITY_FIELDS if f in raw]
    if len(given) != 1:
        fail("mem_capacity_MiB", f"must be given once, as one of {', '.join(_CAPACITY_FIELDS)}; got {given or 'none'}")
    capacity_field = given[0]
    if not isinstance(raw["mem_capacity_label"], str) or not raw["mem_capacity_label"].strip():
        fail("mem_capacity_label", f"must be the datasheet's text, such as \"80 GB\"; "
             f"got {raw['mem_capacity_label']!r}")

    def number(field, value):
        return float(entry.figure(field, value))

    def table(field):
        value = raw.get(field, {})
        if not isinstance(value, dict):
            fail(field, "must be a table")
        return value

    peaks = {}
    for dtype, value in table("peak_dense_TFLOPs").items():
        if dtype not in BYTES_PER_ELEMENT:
            fail(f"peak_dense_TFLOPs.{dtype}", f"is not a known dtype ({', '.join(BYTES_PER_ELEMENT)})")
        peaks[dtype] = number(f"peak_dense_TFLOPs.{dtype}", value) * TERA
    if not peaks:
        fail("peak_dense_TFLOPs", "has no dtype")
    sparse = {d: number(f"sparse_headline_TFLOPs.{d}", v) * TERA
              for d, v in table("sparse_headline_TFLOPs").items()}

    sources = table("sources")
    figures = ["peak_dense_TFLOPs", "mem_bandwidth_TBps", "mem_capacity_label", capacity_field]
    figures += [f for f in ("interconnect_GBps", "host_link_GBps", "compute_units", "special_function_TOPS")
                if f in raw]
    for field in figures:
        if not str(sources.get(field, "")).strip():
            fail(f"sources.{field}", "is missing: every figure needs its source")

    measured = {}
    m = table("measured")
    if m:
        if not str(m.get("source", "")).strip():
            fail("measured.source", "is missing: a measured ceiling needs its source")
        if "mem_bandwidth_TBps" not in m:
            fail("measured.mem_bandwidth_TBps", "is missing")
        measured["mem_bandwidth"] = number("measured.mem_bandwidth_TBps", m["mem_bandwidth_TBps"]) * TERA
        for key, value in m.items():
            match = re.fullmatch(r"(\w+)_TFLOPs", key)
            if match:
                measured[canonical_dtype(match.group(1))] = number(f"measured.{key}", value) * TERA
        measured["source"] = m["source"]

    capacity = number(capacity_field, raw[capacity_field]) * _CAPACITY_FIELDS[capacity_field]
    optional = {}
    for field, key, scale in (("interconnect_GBps", "interconnect_bandwidth", GIGA),
                              ("host_link_GBps", "host_link_bandwidth", GIGA),
                              ("special_function_TOPS", "special_function_rate", TERA)):
        if field in raw:
            optional[key] = number(field, raw[field]) * scale
    if "compute_units" in raw:
        optional["compute_units"] = int(number("compute_units", raw["compute_units"]))
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        fail("aliases", "must be a list of strings")

    return build_checked(  # every figure was checked above, with the file's field in the message
        Accelerator,
        name=raw["name"],
        vendor=raw["vendor"],
        aliases=tuple(aliases),
        peak_flops_by_dtype=peaks,
        sparse_flops_by_dtype=sparse,
        mem_bandwidth=number("mem_bandwidth_TBps", raw["mem_bandwidth_TBps"]) * TERA,
        mem_capacity=capacity,
        mem_capacity_label=raw["mem_capacity_label"].strip(),
        interconnect=raw.get("interconnect", ""),
        host_link=raw.get("host_link", ""),
        measured=measured,
        sources=dict(sources),
        notes=raw.get("notes", ""),
        source_file=str(path),
        **optional,
    )


_CATALOG = Catalog(ACCELERATOR_DIR, load_accelerator, "accelerator")


def _registry():
    return _CATALOG.items()


def list_accelerators(dtype=None):
    """Names of every accelerator in data/accelerators/, in file order; with ``dtype`` ("bf16"), only the chips
    with a dense peak in that format (a T4 has fp16 but no bf16).

    Taught in chapter 00 (notebooks/00_start_here.ipynb); also used in chapters 04, 05."""
    names = _CATALOG.names()
    if dtype is None:
        return names
    key = canonical_dtype(dtype)
    return [n for n in names if key in _CATALOG.get(n).peak_flops_by_dtype]


def get_accelerator(name):
    """Look up a chip by name or alias, case- and punctuation-insensitive ("h200", "H100-SXM").

    Taught in chapter 00 (notebooks/00_start_here.ipynb); also used in chapters 01, 02, 03, 04, 05, 06, 07, 08, 09,
    10, 11, 12, 13, 14, 15."""
    if isinstance(name, Accelerator):
        return name
    return _CATALOG.get(name)


__all__ = ["Accelerator", "ACCELERATOR_DIR", "get_accelerator", "GIGA", "list_accelerators", "load_accelerator", "TERA"]
