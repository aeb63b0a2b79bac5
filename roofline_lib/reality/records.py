"""Published measurements of LLM inference, and the course's prediction of each one.

Each file in ``data/measurements/`` holds the records of one source (gpt-fast's README,
TensorRT-LLM's performance overview, an MLPerf round ...): the configuration, the figure and
its unit exactly as published, and the verbatim sentence or table row. ``measured_vs_predicted``
turns every figure into seconds for one unit of work and sets the roofline's lower bound for
the same work beside it:

- ``decode_step``: seconds per decode step (one token per sequence), averaged over the
  generation: step i of ``output_len`` attends to ``prompt_len + i`` positions;
- ``prefill``: seconds to run the prompt (time to first token);
- ``prefill_throughput``: seconds to prefill ``batch`` prompts, from input tokens/s;
- ``throughput`` and ``request``: seconds for ``batch`` whole requests (prefill, then
  ``output_len`` decode steps), from output tokens/s or from the published latency.

A pool of a prefill/decode-disaggregated deployment says which phase it runs (``phase = "prefill"`` or
``"decode"``): a decode pool's bound holds its decode steps only (its prompts were prefilled elsewhere), a
prefill pool's its prefills only. ``per = "node"`` is a rate per node of ``chips_per_node`` chips (by default the
chip's 8-GPU board in data/topologies.toml).

On ``n_chips`` chips the work is split perfectly and communication is free: a lower bound
still. A quantised format counts only its packed weights (no scales), and fp8 weights compute
at the fp8 peak where the chip has one: both make the bound lower, never higher. So a lower
bound above a measured time (MBU or MFU above 1) means a wrong record or a wrong model.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np

from ..core.catalog import DATA_DIR, Entry, read_records
from ..core.dtypes import COMPUTE_FORMAT, canonical_dtype
from ..llm.memory import max_batch
from ..llm.steps import decode_step, prefill
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from ..specs.topologies import get_topology, list_topologies
from .ceilings import achieved_fractions, calibrated
from .estimate import Terms, estimate_terms

MEASUREMENT_DIR = DATA_DIR / "measurements"
# pools of prefill/decode-disaggregated deployments (records with a phase), kept apart from the whole systems the
# chapters up to 13 set beside their bounds; chapter 14 reads them: published_measurements(POOL_DIR)
POOL_DIR = MEASUREMENT_DIR / "pools"

MEASURES = ("decode_step", "prefill", "prefill_throughput", "throughput", "request")
PER = ("sequence", "system", "chip", "request", "node")
PHASES = ("prefill", "decode")  # a pool of a disaggregated deployment runs one of them; "" for both
# Published units, read by _unit(): a rate of tokens per second ("tok/s", "Tokens per second",
# "out tok/s/GPU", "input tokens/s/node"), or a time ("s", "ms", "ms/token", "us").
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "ms/tok": 1e-3, "us": 1e-6, "ns": 1e-9}
ACCEPTED_UNITS = "tok/s, tokens/s, Tokens per second, output tok/s/GPU, tok/s/node, s, ms, ms/token, us, ns"


def _unit(text):
    """('rate', "chip", "node" or "") or ('time', seconds per unit) for a published unit, or None if not
    understood."""
    u = text.lower().replace(" ", "").replace("persecond", "/s").replace("/second", "/s").replace("/sec", "/s")
    u = u.replace("tokens", "tok").replace("token", "tok")
    for prefix in ("completed", "output", "out", "input"):
        u = u.removeprefix(prefix)
    scope = "chip" if u.endswith("/gpu") else "node" if u.endswith("/node") else ""
    u = u.removesuffix("/gpu").removesuffix("/node")
    if u == "tok/s":
        return "rate", scope
    if u in TIME_UNITS and not scope:
        return "time", TIME_UNITS[u]
    return None

_REQUIRED = ("id", "system", "chip", "n_chips", "model", "weight_dtype", "kv_dtype", "batch",
             "measures", "value", "unit", "per", "quote")


@dataclasses.dataclass(frozen=True)
class Record:
    """One published measurement, in the source's own units."""

    id: str
    system: str
    chip: str
    n_chips: int
    model: str
    weight_dtype: str
    kv_dtype: str
    batch: int | str  # per replica: a whole number, or "max" where the engine chose it (see compare())
    prompt_len: int | None  # None where the source does not publish it (throughput and decode only)
    output_len: int | None
    measures: str
    value: float
    unit: str
    per: str
    quote: str
    source: str
    compute_dtype: str = ""
    chips_per_replica: int = 0  # chips one copy of the model spans (data parallel); 0: all n_chips
    batch_limit: int = 0  # the engine's most sequences in flight per replica, where published; 0: none
    system_tokens_per_s: float = 0.0  # output tokens/s of the whole system in the same run (a server's log), or 0
    parallelism: str = "none"
    quant_scheme: str = ""
    notes: str = ""
    source_file: str = ""
    # prompt + output positions beyond the model's trained context (its max_context): the engine ran them, so the
    # record is kept and bounded like any other (the bound counts FLOPs and bytes, not output quality); notes say so
    beyond_trained_context: bool = False
    phase: str = ""  # "prefill" or "decode" for a pool of a disaggregated deployment; "" for a whole system
    chips_per_node: int = 0  # the chips of one node, for a rate per node


    def measured_seconds(self, batch=None):
        """Seconds for the unit of work ``measures`` names (see the module docstring)."""
        batch = self.batch if batch is None else batch
        kind, scale = _unit(self.unit)
        if kind == "time":
            return self.value * scale
        # tokens/s of one replica (all n_chips unless the model is copied over several groups of chips)
        rate = {"chip": self.value * self.replica_chips, "system": self.value / self.replicas,
                "node": self.value * self.replica_chips / (self.chips_per_node or 1)}.get(self.per, self.value)
        if self.measures == "decode_step":
            return 1 / self.value if self.per == "sequence" else batch / rate
        if self.measures == "prefill_throughput":
            return batch * self.prompt_len / rate
        if self.measures == "prefill":
            return self.prompt_len / self.value if self.per == "sequence" else batch * self.prompt_len / rate
        if self.output_len is None:  # throughput with unpublished lengths: seconds per decode step of the batch
            return batch / rate
        return batch * self.output_len / rate  # throughput: output tokens of `batch` whole requests

    @property
    def replica_chips(self):
        """Chips one copy of the model is split over."""
        return self.chips_per_replica or self.n_chips

    @property
    def replicas(self):
        """Copies of the model the record's chips hold (n_chips / replica_chips)."""
        return self.n_chips // self.replica_chips


def load_measurements(path):
    """Read one source's TOML file of records; raise ValueError naming the file, record and field."""
    path, source, records = read_records(path)
    return [_record(path, source, r) for r in records]


def _record(path, source, r):
    entry = Entry(r, f"{path.name} (record {r.get('id', '?')!r})")
    fail = entry.fail
    entry.require(_REQUIRED)

    def whole(field):
        return entry.figure(field, r[field], integer=True)

    def choice(field, allowed):
        if r[field] not in allowed:
            fail(field, f"must be one of {', '.join(allowed)}; got {r[field]!r}")
        return r[field]

    def check(field, lookup):
        try:
            return lookup(r[field])
        except ValueError as exc:
            fail(field, f"is not known: {exc}")

    value = entry.figure("value", r["value"])
    unit = _unit(str(r["unit"]))
    if unit is None:
        fail("unit", f"{r['unit']!r} is not understood; accepted: {ACCEPTED_UNITS}")
    measures, per = choice("measures", MEASURES), choice("per", PER)
    if unit[0] == "rate" and unit[1] and per != unit[1]:
        fail("per", f"must be \"{unit[1]}\" for a unit per {'GPU' if unit[1] == 'chip' else 'node'} "
             f"({r['unit']!r}); got {per!r}")
    batch = r["batch"] if r["batch"] == "max" else whole("batch")
    output_len = whole("output_len") if "output_len" in r else None
    prompt_len = whole("prompt_len") if "prompt_len" in r else None
    if measures in ("prefill", "prefill_throughput", "request") and prompt_len is None:
        fail("prompt_len", f"is needed to predict a {measures} record")
    if measures == "request" and output_len is None:
        fail("output_len", "is needed to predict a request record")
    if (prompt_len is None) != (output_len is None) and measures == "throughput":
        fail("prompt_len", "and output_len go together in a throughput record (give both, or neither)")
    n_chips = whole("n_chips")
    per_replica = whole("chips_per_replica") if "chips_per_replica" in r else 0
    batch_limit = whole("batch_limit") if "batch_limit" in r else 0
    same_run_rate = entry.figure("system_tokens_per_s", r["system_tokens_per_s"]) if "system_tokens_per_s" in r else 0.0
    if per_replica and n_chips % per_replica:
        fail("chips_per_replica", f"must divide n_chips ({n_chips}); got {per_replica}")
    phase = str(r.get("phase", ""))
    if phase and phase not in PHASES:
        fail("phase", f"must be one of {', '.join(PHASES)} (or left out for a whole system); got {phase!r}")
    if phase == "decode" and measures not in ("decode_step", "throughput"):
        fail("measures", f"of a decode pool must be decode_step or throughput (output tokens); got {measures!r}")
    if phase == "prefill" and measures not in ("prefill", "prefill_throughput"):
        fail("measures", f"of a prefill pool must be prefill or prefill_throughput; got {measures!r}")
    if phase == "decode" and measures == "throughput" and output_len is None:
        fail("output_len", "is needed for a decode pool's throughput: the decode steps each sequence runs there")
    chips_per_node = whole("chips_per_node") if "chips_per_node" in r else 0
    if per == "node" and not chips_per_node:
        chips_per_node = _node_size(check("chip", get_accelerator).name)
        if not chips_per_node:
            fail("chips_per_node", "is needed for a rate per node: data/topologies.toml has no node of 8 or fewer "
                 f"{r['chip']} (give how many chips one node holds, e.g. 8)")
    if unit[0] == "rate" and measures == "request":
        fail("unit", "of a request record must be a time (s, ms)")
    if not str(r["quote"]).strip():
        fail("quote", "is empty: give the verbatim sentence or table row")
    check("chip", get_accelerator)
    model = check("model", get_model)
    positions = (prompt_len or 0) + (output_len or 0)
    beyond = bool(model.max_context and positions > model.max_context)
    notes = str(r.get("notes", ""))
    if beyond:
        notes = (f"{notes} " if notes else "") + (
            f"Beyond the trained context: {prompt_len or 0} + {output_len or 0} = {positions} positions, more than "
            f"{model.name}'s max_context ({model.max_context}); the engine ran them as published, and the bound "
            "counts them like any others (speed, not the quality of the output).")
    dtypes = {f: check(f, canonical_dtype) for f in ("weight_dtype", "kv_dtype")}
    compute = check("compute_dtype", canonical_dtype) if r.get("compute_dtype") else ""
    return Record(
        id=str(r["id"]), system=str(r["system"]), chip=get_accelerator(r["chip"]).name, n_chips=n_chips,
        model=get_model(r["model"]).name, weight_dtype=dtypes["weight_dtype"], kv_dtype=dtypes["kv_dtype"],
        batch=batch, prompt_len=prompt_len, output_len=output_len, chips_per_replica=per_replica,
        batch_limit=batch_limit, system_tokens_per_s=float(same_run_rate), measures=measures, value=float(value),
        unit=str(r["unit"]), per=per, quote=str(r["quote"]).strip(), source=source, compute_dtype=compute,
        parallelism=str(r.get("parallelism", "none")), quant_scheme=str(r.get("quant_scheme", "")),
        notes=notes, source_file=str(path), beyond_trained_context=beyond, phase=phase,
        chips_per_node=chips_per_node,
    )


def _node_size(chip):
    """GPUs in one node of ``chip`` as data/topologies.toml describes it (an 8-GPU HGX/DGX board), or 0 where it
    has none of 8 or fewer (a rack-scale NVLink domain such as NVL72 is not one node)."""
    sizes = [t.gpus_per_node for t in map(get_topology, list_topologies()) if t.chip == chip and t.gpus_per_node <= 8]
    return sizes[0] if sizes else 0


def published_measurements(directory=MEASUREMENT_DIR):
    """Every record in ``directory`` (default ``data/measurements/``), file by file.

    Taught in chapter 11 (notebooks/11_serving.ipynb); also used in chapter 14."""
    records = [rec for path in sorted(pathlib.Path(directory).glob("*.toml")) for rec in load_measurements(path)]
    seen = set()
    for rec in records:
        if rec.id in seen:
            raise ValueError(f"{pathlib.Path(rec.source_file).name}: record id {rec.id!r} is used twice")
        seen.add(rec.id)
    return records


@dataclasses.dataclass(frozen=True)
class Comparison:
    """A published measurement beside the course's prediction of the same work, in seconds."""

    record: Record
    batch: int  # the batch predicted (the record's, or the largest that fits for "max")
    measured_s: float
    predicted_lower_s: float  # roofline lower bound at the datasheet ceilings
    calibrated_s: float  # the same bound at published achieved ceilings (chip.achieved()), where known
    mbu: float  # bytes / measured_s / (chips x bandwidth), over the chips of one replica
    mfu: float  # FLOPs / measured_s / (chips x peak): t_math / measured_s
    bound: str  # which term binds the prediction: "compute" or "memory"
    estimate_terms: Terms | None = None  # the best estimate, term by term (``reality.estimate``)
    estimate_batch: int = 0  # the batch the estimate runs: the bound's, or a server's by Little's law

    @property
    def estimate_s(self):
        """The best estimate of the measured seconds: the sum of ``estimate_terms``."""
        return self.estimate_terms.total

    @property
    def estimate_error(self):
        """estimate / measured - 1 (negative: the estimate is too fast)."""
        return self.estimate_s / self.measured_s - 1

    @property
    def source(self):
        """Where the record was published."""
        return self.record.source

    @property
    def id(self):
        """The record's id in data/measurements/."""
        return self.record.id

    @property
    def ratio(self):
        """measured / predicted lower bound: >= 1 always; how far the real system is from the roof."""
        return self.measured_s / self.predicted_lower_s

    @property
    def calibrated_error(self):
        """calibrated / measured - 1: the calibrated estimate's relative error (negative: too fast)."""
        return self.calibrated_s / self.measured_s - 1


def _steps(rec, batch):
    """The workloads of the record's unit of work: a list of (workload, count-weight) pairs."""
    m = get_model(rec.model)
    chip = get_accelerator(rec.chip)
    fmt = COMPUTE_FORMAT.get(rec.weight_dtype)  # fp8 and FP4 weights compute at their tensor cores' rate, if any
    compute = rec.compute_dtype or (fmt if fmt in chip.dtypes else "bf16")
    dtypes = dict(weight_dtype=rec.weight_dtype, kv_dtype=rec.kv_dtype, compute_dtype=compute)
    out = rec.output_len or 1
    # unpublished lengths: decode at context 1, the cheapest step there is (a looser bound, still a bound)
    contexts = (rec.prompt_len or 0) + np.arange(1, out + 1)
    if rec.measures in ("prefill", "prefill_throughput"):
        return [(prefill(m, batch, rec.prompt_len, **dtypes), 1.0)]
    if rec.phase == "decode" and rec.measures == "throughput":  # a decode pool: no prefill in its bound
        return [(decode_step(m, batch, contexts, **dtypes), 1.0)]
    if rec.measures == "decode_step" or rec.prompt_len is None:
        return [(decode_step(m, batch, contexts, **dtypes), 1 / out)]  # the mean step of the generation
    return [(prefill(m, batch, rec.prompt_len, **dtypes), 1.0), (decode_step(m, batch, contexts, **dtypes), 1.0)]


def _largest_batch(rec):
    """The largest batch of the record's sequences that fits on one replica: ``llm.max_batch`` at its default,
    the whole memory the driver reports (a bound: an engine that keeps some back runs a smaller batch)."""
    batch = max_batch(rec.model, rec.chip, (rec.prompt_len or 0) + (rec.output_len or 1), n_chips=rec.replica_chips,
                      weight_dtype=rec.weight_dtype, kv_dtype=rec.kv_dtype)
    if batch < 1:
        raise ValueError(f"record {rec.id!r}: {rec.model} does not fit on {rec.n_chips} x {rec.chip}")
    return batch


def compare(rec):
    """One record against the course's lower bound for the same work (see the module docstring).

    Taught in chapter 11 (notebooks/11_serving.ipynb); also used in chapter 14."""
    chip = get_accelerator(rec.chip)
    # Where the engine picked the batch: for throughput (output or input tokens) the largest batch that fits
    # (within the engine's published limit) gives the lowest time per token, and for a latency (TTFT, time per
    # token) batch 1 gives the lowest: either way still a bound.
    batch = rec.batch
    if batch == "max" and rec.measures in ("throughput", "prefill_throughput"):
        batch = min(_largest_batch(rec), rec.batch_limit or math.inf)
    elif batch == "max":
        batch = 1
    measured = rec.measured_seconds(batch)
    t_math = t_mem = lower = at_achieved = 0.0
    achieved = calibrated(chip)
    steps = _steps(rec, batch)
    for work, weight in steps:
        e = estimate(work, chip)
        t_math += weight * float(np.sum(e.t_math))
        t_mem += weight * float(np.sum(e.t_mem))
        lower += weight * float(np.sum(e.lower))
        at_achieved += weight * float(np.sum(estimate(work, achieved).lower))
    n = rec.replica_chips
    in_flight = _in_flight(rec, measured, batch)
    if in_flight != batch:
        steps = _steps(rec, in_flight)
    return Comparison(
        record=rec, batch=batch, measured_s=measured, predicted_lower_s=lower / n,
        calibrated_s=at_achieved / n, mbu=t_mem / (n * measured), mfu=t_math / (n * measured),
        bound="compute" if t_math >= t_mem else "memory", estimate_terms=estimate_terms(rec, steps, in_flight),
        estimate_batch=in_flight,
    )


def _in_flight(rec, measured, batch):
    """Sequences a replica runs at once, for the estimate. A server's time per output token with the
    system's token rate from the same run gives it by Little's law: in flight = rate per replica x time per
    token (within the engine's limit). Otherwise the bound's ``batch``."""
    if rec.batch == "max" and rec.measures == "decode_step" and rec.system_tokens_per_s:
        sequences = round(rec.system_tokens_per_s / rec.replicas * measured)
        return max(1, min(sequences, rec.batch_limit or sequences))
    return batch


def measured_vs_predicted(records=None):
    """One Comparison per published record (default: every file in ``data/measurements/``).

    Taught in chapter 05 (notebooks/05_llm_inference.ipynb); also used in chapters 06, 09, 10."""
    return [compare(rec) for rec in (published_measurements() if records is None else records)]


__all__ = [
    "ACCEPTED_UNITS", "achieved_fractions", "calibrated", "compare", "Comparison", "load_measurements",
    "measured_vs_predicted", "MEASUREMENT_DIR", "MEASURES", "PER", "PHASES", "POOL_DIR", "published_measurements",
    "Record", "TIME_UNITS",
]
