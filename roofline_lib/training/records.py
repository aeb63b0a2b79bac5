"""Published training measurements (``data/training/``) beside the course's bound and estimate for each.

Each file holds one source's records: the configuration (chips, model, sequence length, parallelism, precision),
the figure exactly as published (``measures``: ``tokens_per_s_per_chip``, ``model_tflops_per_chip``, ``mfu`` or
``step_time_s``), the source's FLOP convention (``flops.CONVENTIONS``) and the verbatim row. A model is a name of
``data/models/`` or, for the papers' own GPTs, a ``[record.shape]`` table.

Every figure becomes tokens/s per chip: a FLOP/s through the source's own FLOPs per token, an MFU through the
source's own peak (``peak_tflops_per_chip``) first, a step time through the tokens of one step. The bound beside
it: the chip's dense peak for the run's precision (FP8 runs: the FP8 peak) divided by the fewest FLOPs a token
can cost (the ``"causal"`` count: 6 N for the multiplying weights and half of attention's 12 L H d T); no record
can beat it, a test holds every record to it. The estimate: ``step.train_step`` for the published
configuration, where the chip has a topology (where the source does not say what it recomputes, the least
recomputation that fits the chip).
"""

from __future__ import annotations

import dataclasses
import pathlib

from ..core.catalog import DATA_DIR, Entry, read_records, read_toml
from ..core.units import SECONDS_PER_HOUR
from ..specs.hardware import get_accelerator
from ..specs.models import Model, get_model
from .flops import CONVENTIONS, _convention, _course, mixed_peak_flops
from .step import PRECISIONS, TOPOLOGY_FOR_CHIP, train_step

TRAINING_DIR = DATA_DIR / "training"
MEASURES = ("tokens_per_s_per_chip", "model_tflops_per_chip", "mfu", "step_time_s")
RECOMPUTES = ("none", "selective", "full", "unknown")
_REQUIRED = ("id", "system", "chip", "n_chips", "model", "seq_len", "global_batch_tokens", "tp", "pp", "cp", "dp",
             "zero_stage", "recompute", "precision", "measures", "value", "unit", "flop_convention", "quote")
_SHAPE = ("hidden_size", "num_layers", "num_heads", "intermediate_size", "vocab_size")


@dataclasses.dataclass(frozen=True)
class TrainingRecord:
    """One published training figure, in the source's units, with its configuration."""

    id: str
    system: str
    chip: str
    n_chips: int
    model: Model
    seq_len: int
    global_batch_tokens: int  # 0: not published
    tp: int
    pp: int
    cp: int
    dp: int
    zero_stage: int
    recompute: str
    precision: str
    measures: str
    value: float
    unit: str
    flop_convention: str
    quote: str
    source: str
    micro_batch: int = 0  # 0: not published
    ep: int = 1
    virtual_stages: int = 1  # interleaved chunks per GPU; 0: interleaved, depth not published
    peak_tflops_per_chip: float = 0.0
    notes: str = ""
    source_file: str = ""

    @property
    def published_memory_gib(self):
        """The peak memory per GPU the quoted table prints (its "Memory(GiB)" column, torchtitan's
        max_reserved_gib), or None where the quote has none."""
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in self.quote.splitlines()
                if line.strip().startswith("|") and "---" not in line]
        if len(rows) < 2 or not any(c.startswith("Memory") for c in rows[0]):
            return None
        column = next(i for i, c in enumerate(rows[0]) if c.startswith("Memory"))
        return float(rows[-1][column].replace(",", ""))

    @property
    def measured_tokens_per_s_per_chip(self):
        """The published figure as tokens/s per chip (module docstring)."""
        if self.measures == "tokens_per_s_per_chip":
            return self.value
        if self.measures == "step_time_s":  # needs no FLOP count: its convention may be "none"
            return self.global_batch_tokens / (self.value * self.n_chips)
        per_token = _convention(self.flop_convention)(self.model, self.seq_len)
        if self.measures == "model_tflops_per_chip":
            return self.value * 1e12 / per_token
        if self.measures == "mfu":
            return self.value / 100 * self.peak_tflops_per_chip * 1e12 / per_token
        raise ValueError(f"measures must be one of {', '.join(MEASURES)}; got {self.measures!r}")


def _shape_model(entry, r):
    shape = r.get("shape")
    if not isinstance(shape, dict):
        entry.fail("shape", "is missing: model = 'custom' needs a [record.shape] table with " + ", ".join(_SHAPE))
    for f in _SHAPE:
        if f not in shape:
            entry.fail(f"shape.{f}", "is missing")
    heads = shape["num_heads"]
    mlp = shape.get("mlp", "plain")
    return Model(name=f"{r['id']} model", hidden_size=shape["hidden_size"],
                 intermediate_size=shape["intermediate_size"], num_layers=shape["num_layers"], num_heads=heads,
                 num_kv_heads=shape.get("num_kv_heads", heads), head_dim=shape["hidden_size"] // heads,
                 vocab_size=shape["vocab_size"], tie_word_embeddings=bool(shape.get("tie_word_embeddings", True)),
                 norm="layernorm" if mlp == "plain" else "rmsnorm", mlp=mlp, linear_bias=mlp == "plain")


def _record(path, source, r):
    entry = Entry(r, f"{path.name} (record {r.get('id', '?')!r})")
    fail = entry.fail
    entry.require(_REQUIRED)

    def whole(field, zero_ok=False):
        return entry.figure(field, r[field], integer=True, zero_ok=zero_ok)

    def choice(field, allowed):
        if r[field] not in allowed:
            fail(field, f"must be one of {', '.join(map(repr, allowed))}; got {r[field]!r}")
        return r[field]

    try:
        chip = get_accelerator(r["chip"]).name
    except ValueError as exc:
        fail("chip", f"is not known: {exc}")
    try:
        model = _shape_model(entry, r) if r["model"] == "custom" else get_model(r["model"])
    except ValueError as exc:
        fail("model", f"is not known: {exc}")
    ints = {f: whole(f) for f in ("n_chips", "seq_len", "tp", "pp", "cp", "dp")}
    ints["global_batch_tokens"] = whole("global_batch_tokens", zero_ok=True)
    for optional, default in (("micro_batch", 0), ("ep", 1), ("virtual_stages", 1)):
        ints[optional] = entry.figure(optional, r.get(optional, default), integer=True, zero_ok=optional != "ep")
    if ints["tp"] * ints["pp"] * ints["cp"] * ints["dp"] != ints["n_chips"]:
        fail("dp", f"tp x pp x cp x dp ({ints['tp']} x {ints['pp']} x {ints['cp']} x {ints['dp']}) must equal "
                   f"n_chips ({ints['n_chips']})")
    zero = r["zero_stage"]
    if zero not in (0, 1, 2, 3):
        fail("zero_stage", f"must be 0, 1, 2 or 3 (3 = FSDP's full sharding); got {zero!r}")
    measures = choice("measures", MEASURES)
    convention = r["flop_convention"]
    if convention != "none" and convention not in CONVENTIONS:
        fail("flop_convention", f"must be 'none' or one of {', '.join(CONVENTIONS)}; got {convention!r}")
    if convention == "none" and measures in ("model_tflops_per_chip", "mfu"):
        fail("flop_convention", f"is 'none', but a {measures} figure needs the source's FLOP count to become "
                                "tokens/s")
    peak = float(r.get("peak_tflops_per_chip", 0) or 0)
    if measures == "mfu" and peak <= 0:
        fail("peak_tflops_per_chip", "is missing: an MFU figure needs the peak the source divided by")
    if measures == "step_time_s" and ints["global_batch_tokens"] == 0:
        fail("global_batch_tokens", "is 0: a step time needs the tokens of one step")
    if not str(r["quote"]).strip():
        fail("quote", "is empty: give the source's sentence or table row verbatim")
    return TrainingRecord(id=r["id"], system=r["system"], chip=chip, model=model,
                          zero_stage=zero, recompute=choice("recompute", RECOMPUTES),
                          precision=choice("precision", tuple(PRECISIONS)), measures=measures,
                          value=entry.figure("value", r["value"]), unit=str(r["unit"]), flop_convention=convention,
                          quote=r["quote"], source=str(r.get("source", source)), peak_tflops_per_chip=peak,
                          notes=r.get("notes", ""), source_file=str(path), **ints)


def load_measurements(path):
    """Read one source's TOML file of training records; raise ValueError naming the file, record and field."""
    path, source, records = read_records(path)
    return [_record(path, source, r) for r in records]


def published_measurements(directory=TRAINING_DIR):
    """Every record in ``directory`` (default ``data/training/``), ids unique across files.

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapter 14."""
    out, seen = [], {}
    for path in sorted(pathlib.Path(directory).glob("*.toml")):
        for rec in load_measurements(path):
            if rec.id in seen:
                raise ValueError(f"record id {rec.id!r} is in both {seen[rec.id]} and {path.name}")
            seen[rec.id] = path.name
            out.append(rec)
    return out


RUNS_DIR = TRAINING_DIR / "runs"


@dataclasses.dataclass(frozen=True)
class TrainingRun:
    """A whole pretraining run as a model card states it: chip-hours for a number of tokens."""

    id: str
    model: Model
    chip: str
    seq_len: int
    gpu_hours: float
    tokens_trained: float
    quote: str
    source: str
    notes: str = ""

    def implied_mfu(self, convention="causal"):
        """The average MFU the card's hours imply: tokens x FLOPs per token / (hours x 3600 x dense bf16 peak).
        A whole run (restarts, evaluation, warm-up included), so below any step's MFU."""
        per_token = _convention(convention)(self.model, self.seq_len)
        peak = get_accelerator(self.chip).peak_flops()
        return self.tokens_trained * per_token / (self.gpu_hours * SECONDS_PER_HOUR * peak)


def training_runs(directory=RUNS_DIR):
    """The whole-run records of ``data/training/runs/`` (GPU-hours of pretraining from model cards).

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapter 14."""
    out = []
    for path in sorted(pathlib.Path(directory).glob("*.toml")):
        raw = read_toml(path)
        for r in raw.get("record", []):
            entry = Entry(r, f"{path.name} (record {r.get('id', '?')!r})")
            entry.require(("id", "model", "chip", "seq_len", "value", "tokens_trained", "quote"))
            if r.get("measures", "gpu_hours") != "gpu_hours":
                entry.fail("measures", "must be 'gpu_hours' in a file of whole runs")
            out.append(TrainingRun(r["id"], get_model(r["model"]), get_accelerator(r["chip"]).name,
                                   entry.figure("seq_len", r["seq_len"], integer=True),
                                   entry.figure("value", r["value"]), entry.figure("tokens_trained",
                                                                                     r["tokens_trained"]),
                                   r["quote"], str(r.get("source", raw.get("source", ""))), r.get("notes", "")))
    return out


def bound_tokens_per_s_per_chip(rec):
    """The most tokens/s one chip could train: its dense peak for the run's precision over the causal count."""
    peak = get_accelerator(rec.chip).peak_flops(PRECISIONS[rec.precision])
    return peak / _course(rec.model, rec.seq_len, True, "none")


def _chunks(rec):
    """Interleaved chunks per GPU: the record's, or, where it is not published (0), the most the layers allow
    (one layer per chunk), which makes the bubble smallest: the estimate stays optimistic; 1 where the
    micro-batches per step are not a multiple of the stages, which interleaving needs."""
    if rec.pp == 1:
        return 1
    if rec.virtual_stages:
        return rec.virtual_stages
    micro_batches = rec.global_batch_tokens // rec.seq_len // (rec.dp * (rec.micro_batch or 1))
    return max(1, rec.model.num_layers // rec.pp) if micro_batches % rec.pp == 0 else 1


def framework_settings(rec):
    """(grad_reduce, tp_overlap) the record's framework runs with: gradients in bf16 on the wire for fms-fsdp
    (fms_fsdp/policies/mixed_precision.py, bfSixteen: reduce_dtype=torch.bfloat16) and DeepSpeed's 16-bit runs,
    fp32 elsewhere (Megatron-LM's arguments.py sets accumulate_allreduce_grads_in_fp32 for bf16; torchtitan's
    mixed_precision_reduce = "float32"); TP decomposed under the GEMMs for async-TP runs and NeMo/Megatron-Core's
    Transformer Engine overlap (tp_comm_overlap in their H100 recipes), exposed elsewhere."""
    system = rec.system.lower()
    grad = "bf16" if ("fms-fsdp" in system or "deepspeed" in system or rec.precision == "fp16") else "fp32"
    decomposed = ("async" in system or "asynctp" in rec.id or "async" in rec.quote.lower()
                  or "nemo" in system or "megatron-core" in system)
    return grad, ("decomposed" if decomposed and rec.tp > 1 else "none")


def framework_recompute(rec):
    """What the record's "selective" recomputation runs again in its framework: torchtitan's selective activation
    checkpointing is not Korthikanti's (torchtitan/models/llama3/infra/parallelize.py, _apply_ac_to_transformer_block:
    the "op" policy saves every other aten.mm output and the attention kernel's, so half the layers' matmuls run a
    second forward; the "layer" policy checkpoints every other block, the same FLOPs): ``"every_other"``. Any other
    record's recomputation as published."""
    if rec.recompute == "selective" and "torchtitan" in rec.system.lower():
        return "every_other"
    return rec.recompute


def _train_step(rec):
    """``train_step`` for the record's configuration, or None where it cannot be set up."""
    if rec.chip not in TOPOLOGY_FOR_CHIP or not rec.global_batch_tokens or rec.global_batch_tokens % rec.seq_len:
        return None
    sequences = rec.global_batch_tokens // rec.seq_len
    micro = rec.micro_batch or 1
    if sequences % (rec.dp * micro):
        return None
    grad, overlap = framework_settings(rec)
    # unpublished recomputation: the least of it with which the configuration fits the chip
    choices = ("none", "selective", "full") if rec.recompute == "unknown" else (framework_recompute(rec),)
    try:
        for recompute in choices:
            st = train_step(rec.model, rec.chip, n_chips=rec.n_chips, seq_len=rec.seq_len, global_batch=sequences,
                            micro_batch=micro, tp=rec.tp, pp=rec.pp, cp=rec.cp, zero_stage=rec.zero_stage,
                            recompute=recompute, virtual_stages=_chunks(rec),
                            precision=rec.precision, grad_reduce=grad, tp_overlap=overlap)
            if st.fits:
                break
    except ValueError:
        return None
    return st


def _estimate(rec):
    """tokens/s per chip of ``train_step`` for the record's configuration, or None where it cannot be set up."""
    st = _train_step(rec)
    return None if st is None else float(st.tokens_per_s_per_chip)


def best_estimate(rec):
    """tokens/s per chip of the best estimate (``TrainStep.estimate``) for the record, or None."""
    st = _train_step(rec)
    return None if st is None else float(st.estimate.tokens_per_s_per_chip)


@dataclasses.dataclass(frozen=True)
class TrainingComparison:
    """One record beside the course's bound and estimate (tokens/s per chip)."""

    record: TrainingRecord
    measured_tokens_per_s_per_chip: float
    bound_tokens_per_s_per_chip: float
    estimate_tokens_per_s_per_chip: float | None
    mfu: float  # measured x causal model FLOPs over the dense peak of the run's precision (= of_bound)
    mfu_full_attention: float  # the same with attention counted full (PaLM's 12 L H Q T)
    mfu_bf16_peak: float  # causal, over the bf16 peak (what an FP8 run's MFU is often quoted against)
    best_estimate_tokens_per_s_per_chip: float | None = None  # TrainStep.estimate (estimate.py)

    @property
    def best_estimate_error(self):
        """The best estimate over the measurement, less 1 (None where there is no estimate)."""
        if self.best_estimate_tokens_per_s_per_chip is None:
            return None
        return self.best_estimate_tokens_per_s_per_chip / self.measured_tokens_per_s_per_chip - 1

    def __repr__(self):
        estimate = ("" if self.estimate_tokens_per_s_per_chip is None
                    else f", estimate {self.estimate_tokens_per_s_per_chip:.4g}")
        return (f"TrainingComparison({self.id!r}: measured {self.measured_tokens_per_s_per_chip:.4g} tokens/s per "
                f"chip, bound {self.bound_tokens_per_s_per_chip:.4g}{estimate}, MFU {self.mfu:.1%})")

    @property
    def id(self):
        """The record's id in data/training/."""
        return self.record.id

    @property
    def mfu_mixed_peak(self):
        """MFU (causal) against the peak the run's formats allow: for an 8-bit run the FLOP-weighted mix of its
        8-bit peak (the layers' weight matmuls) and the bf16 peak (attention, the LM head), ``mixed_peak_flops``;
        for a 16-bit run, ``mfu``."""
        low = PRECISIONS[self.record.precision]
        if low != "fp8":
            return self.mfu
        rec = self.record
        causal = _course(rec.model, rec.seq_len, True, "none")
        return self.measured_tokens_per_s_per_chip * causal / mixed_peak_flops(rec.model, rec.chip, rec.seq_len,
                                                                                 matmul_dtype=low)

    @property
    def of_bound(self):
        """Measured / bound: the share of the compute roof the run reached with causal FLOPs (<= 1); the bound
        is the dense peak over the causal count, so this is ``mfu``."""
        return self.mfu


def compare(rec, best=False):
    """One published training record beside its bound and estimate: a ``TrainingComparison`` (MFU in the causal and full
    counts, and against the bf16 peak; with ``best``, the best estimate too)."""
    hw = get_accelerator(rec.chip)
    measured = float(rec.measured_tokens_per_s_per_chip)
    causal, full = (_course(rec.model, rec.seq_len, c, "none") for c in (True, False))
    peak = hw.peak_flops(PRECISIONS[rec.precision])
    return TrainingComparison(rec, measured, float(bound_tokens_per_s_per_chip(rec)), _estimate(rec),
                              measured * causal / peak, measured * full / peak,
                              measured * causal / hw.peak_flops("bf16"), best_estimate(rec) if best else None)


def measured_vs_predicted(records=None, best=False):
    """Each record (default: every file of ``data/training/``) beside its bound and estimate: a list of
    ``TrainingComparison`` (``.id .measured_tokens_per_s_per_chip .bound_tokens_per_s_per_chip .mfu`` ...); with
    ``best``, each with its best estimate (``.best_estimate_tokens_per_s_per_chip .best_estimate_error``).

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapters 13, 14."""
    records = published_measurements() if records is None else records
    return [compare(r, best) for r in records]


__all__ = ["MEASURES", "RUNS_DIR", "TRAINING_DIR", "TrainingComparison", "TrainingRecord", "TrainingRun",
           "best_estimate", "bound_tokens_per_s_per_chip", "compare",
           "framework_recompute", "framework_settings", "load_measurements", "measured_vs_predicted",
           "published_measurements", "training_runs"]
