"""How good the best estimate is: its error by kind of record, on the records its fitted constants saw and on
the ones they did not; and the fit itself (run once, by hand, when records or terms change):

    python -m roofline_lib.reality.fit          # refits on half the records, prints constants and errors

The fit is coordinate descent over a grid for each fitted constant of ``reality.estimate``, minimising the
median |log(estimate / measured)| over the fitting half only. The half is every other record by a fixed hash of
its id; the ids it used are then frozen in ``estimate.FITTED_ON``, so a record added later is always held out.

One split can flatter: ``family_table`` gives the errors by the family of the record's source (records of one
family share an engine and often a machine), and ``split_study`` refits on several random halves and reports the
held-out error and every fitted constant over them.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from . import estimate as E

FAMILIES = ("gpt-fast/torchao", "TensorRT-LLM", "MLPerf", "vLLM/SGLang")
KINDS = ("batch-1 decode", "server decode (Little's law)", "throughput", "prefill (TTFT)")
# Records chapter 10's exercises ask the reader to predict: never fitted on, never in the error table's rows.
RESERVED_FOR_EXERCISES = ("gpt-fast-llama-2-70b-bf16-a100-tp4", "torchao-llama-3-8b-int4-a100")


def kind_of(comparison):
    """Which of ``KINDS`` a Comparison is."""
    rec = comparison.record
    if rec.measures in ("prefill", "prefill_throughput"):
        return KINDS[3]
    if rec.measures == "decode_step":
        return KINDS[0] if comparison.estimate_batch == 1 else KINDS[1]
    return KINDS[2]


def family_of(record):
    """Which of ``FAMILIES`` published a record (by its ``system``), or "other".

    Taught in chapter 10 (notebooks/10_reality_check.ipynb)."""
    text = record.system.lower()
    # MLPerf first: its submissions run TensorRT-LLM, but they are a family of their own (rules, harness, no lengths)
    for family, keys in (("MLPerf", ("mlperf",)), ("gpt-fast/torchao", ("gpt-fast", "torchao")),
                         ("TensorRT-LLM", ("tensorrt-llm",)), ("vLLM/SGLang", ("vllm", "sglang"))):
        if any(k in text for k in keys):
            return family
    return "other"


def _table(comparisons, fitted_on, groups, group_of):
    fitted_on = set(E.FITTED_ON if fitted_on is None else fitted_on)
    comparisons = [c for c in comparisons if c.id not in RESERVED_FOR_EXERCISES]
    rows = []
    for group in (*groups, "all"):
        members = [c for c in comparisons if group in ("all", group_of(c))]
        inside = [abs(c.estimate_error) for c in members if c.id in fitted_on]
        outside = [abs(c.estimate_error) for c in members if c.id not in fitted_on]
        rows.append((group, len(inside), float(np.median(inside)) if inside else None,
                     len(outside), float(np.median(outside)) if outside else None))
    return rows


def family_table(comparisons, fitted_on=None):
    """Rows (family, n fitted, median |error| fitted, n held out, median |error| held out), and an 'all' row,
    as ``error_table`` but by the family of the record's source (``FAMILIES``).

    Taught in chapter 10 (notebooks/10_reality_check.ipynb)."""
    return _table(comparisons, fitted_on, FAMILIES, lambda c: family_of(c.record))


def error_table(comparisons, fitted_on=None):
    """Rows (kind, n fitted, median |error| fitted, n held out, median |error| held out), and an 'all' row; the
    exercises' records are left out of both. A median is None where a group is empty.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb)."""
    return _table(comparisons, fitted_on, KINDS, kind_of)


def fitting_half(ids):
    """Every other record by a fixed hash of its id (crc32 even), less the exercises' records: the records the
    fit may see."""
    return tuple(sorted(i for i in ids if zlib.crc32(i.encode()) % 2 == 0 and i not in RESERVED_FOR_EXERCISES))


# name -> (grid of values, how to set it, what it reads)
def _set_kernel_class(key):
    def put(v):
        E.KERNEL_CLASSES[key] = dataclasses.replace(E.KERNEL_CLASSES[key], weight_read_share=v)
    return put


def _set_engine(key, field):
    def put(v):
        E.ENGINES[key] = dataclasses.replace(E.ENGINES[key], **{field: v})
    return put


def _set_fp8_share(v):
    E.FP8_RESIDUAL_SHARE = v


FITTED = {
    "tinygemm weight_read_share": (np.linspace(0.3, 1.0, 15), _set_kernel_class("tinygemm")),
    "int8-mixed-mm weight_read_share": (np.linspace(0.5, 1.0, 11), _set_kernel_class("int8-mixed-mm")),
    "gpt-fast allreduce_latency_s": (np.arange(5, 31, 1) * 1e-6, _set_engine("gpt-fast", "allreduce_latency_s")),
    "FP8_RESIDUAL_SHARE": (np.linspace(0.3, 0.9, 13), _set_fp8_share),
    "server host_step_s": (np.arange(0, 41) * 0.1e-3, _set_engine("TensorRT-LLM server", "host_step_s")),
    "server request_s": (np.arange(0, 31) * 1e-3, _set_engine("TensorRT-LLM server", "request_s")),
}
# the constants a kernel term reads (each changes kernels or dequant); the rest are engine costs, linear in counts
_KERNEL_CONSTANTS = {"tinygemm weight_read_share": "tinygemm", "int8-mixed-mm weight_read_share": "int8-mixed-mm"}


def current_values():
    """Today's value of every ``FITTED`` constant.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb)."""
    return {"tinygemm weight_read_share": E.KERNEL_CLASSES["tinygemm"].weight_read_share,
            "int8-mixed-mm weight_read_share": E.KERNEL_CLASSES["int8-mixed-mm"].weight_read_share,
            "gpt-fast allreduce_latency_s": E.ENGINES["gpt-fast"].allreduce_latency_s,
            "FP8_RESIDUAL_SHARE": E.FP8_RESIDUAL_SHARE,
            "server host_step_s": E.ENGINES["TensorRT-LLM server"].host_step_s,
            "server request_s": E.ENGINES["TensorRT-LLM server"].request_s}


def _set_all(values):
    for name, v in values.items():
        FITTED[name][1](v)


class _Cases:
    """The records as the fit sees them. An estimate is kernel terms (which read the fp8 share or a kernel class's
    share) plus engine costs times their counts (``estimate.cost_counts``); the kernel part is cached by the
    values it reads, so a refit costs little more than one pass over the records."""

    def __init__(self, comparisons):
        from .records import _steps

        self.ids = [c.id for c in comparisons]
        self.cases = [(c.record, _steps(c.record, c.estimate_batch), c.estimate_batch, c.measured_s)
                      for c in comparisons]
        self.counts = [E.cost_counts(r) for r, *_ in self.cases]
        self.engines = [next(k for k, e in E.ENGINES.items() if e == E.engine_for(r.system)) for r, *_ in self.cases]
        self.reads = [self._reads(i) for i in range(len(self.cases))]
        self._kernel_part = {}

    def _reads(self, i):
        record = self.cases[i][0]
        reads = [n for n, k in _KERNEL_CONSTANTS.items()
                 if E.kernel_class(record, E.engine_for(record.system)) == E.KERNEL_CLASSES[k]]
        saved = E.FP8_RESIDUAL_SHARE
        try:
            totals = set()
            for v in (0.3, 0.9):
                E.FP8_RESIDUAL_SHARE = v
                totals.add(self._kernels(i))
        finally:
            E.FP8_RESIDUAL_SHARE = saved
        return reads + (["FP8_RESIDUAL_SHARE"] if len(totals) > 1 else [])

    def _kernels(self, i):
        t = E.estimate_terms(*self.cases[i][:3])
        return t.total - self._engine_part(i, E.ENGINES[self.engines[i]])

    def _engine_part(self, i, engine):
        n = self.counts[i]
        return n.allreduces * engine.allreduce_latency_s + n.passes * engine.host_step_s + n.requests * engine.request_s

    def estimate(self, i, values):
        """The estimate of case ``i`` at the constants ``values`` (set in the module as well)."""
        key = (i, *(values[n] for n in self.reads[i]))
        if key not in self._kernel_part:
            self._kernel_part[key] = self._kernels(i)
        return self._kernel_part[key] + self._engine_part(i, E.ENGINES[self.engines[i]])

    def errors(self, values, ids):
        """{id: estimate / measured - 1} over ``ids`` at ``values``."""
        _set_all(values)
        return {self.ids[i]: self.estimate(i, values) / self.cases[i][3] - 1
                for i in range(len(self.cases)) if self.ids[i] in ids}


def _fit_cases(cases, half, rounds=3):
    values = current_values()
    chosen = [i for i, rid in enumerate(cases.ids) if rid in half]

    def loss():
        return float(np.median([abs(np.log(cases.estimate(i, values) / cases.cases[i][3])) for i in chosen]))

    for _ in range(rounds):
        for name, (grid, put) in FITTED.items():
            scores = []
            for v in grid:
                values[name] = float(v)
                put(values[name])
                scores.append(loss())
            values[name] = float(grid[int(np.argmin(scores))])
            put(values[name])
    return values


def fit(rounds=3, half=None, comparisons=None):
    """Refit the ``FITTED`` constants on ``half`` (default: ``fitting_half`` of today's records); return (values,
    half). The constants are left at the fitted values."""
    from .records import measured_vs_predicted

    comparisons = measured_vs_predicted() if comparisons is None else comparisons
    half = fitting_half([c.id for c in comparisons]) if half is None else tuple(half)
    return _fit_cases(_Cases(comparisons), set(half), rounds), half


@dataclasses.dataclass(frozen=True)
class Split:
    """One random half-split: the constants fitted on one half, and the other half's median |error|."""

    values: dict
    held_out: float  # median |estimate / measured - 1| over the held-out half
    by_family: dict  # family -> (n held out, median |error|)


def split_study(comparisons, n_splits=8, seed=0, rounds=3):
    """Refit on ``n_splits`` random halves of ``comparisons`` (less the exercises' records) and hold out the
    other half each time; the module's constants are restored afterwards. Returns a list of ``Split``.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb)."""
    comparisons = [c for c in comparisons if c.id not in RESERVED_FOR_EXERCISES]
    cases = _Cases(comparisons)
    family = {c.id: family_of(c.record) for c in comparisons}
    saved = (current_values(), dict(E.KERNEL_CLASSES), dict(E.ENGINES))
    rng = np.random.default_rng(seed)
    splits = []
    try:
        for _ in range(n_splits):
            _set_all(saved[0])  # every split starts from the same values
            order = rng.permutation(len(comparisons))
            half = {comparisons[i].id for i in order[: len(order) // 2]}
            values = _fit_cases(cases, half, rounds)
            errors = cases.errors(values, {c.id for c in comparisons} - half)
            by_family = {}
            for f in FAMILIES:
                e = [abs(v) for k, v in errors.items() if family[k] == f]
                by_family[f] = (len(e), float(np.median(e)) if e else None)
            splits.append(Split(values, float(np.median(np.abs(list(errors.values())))), by_family))
    finally:
        _set_all(saved[0])
        E.KERNEL_CLASSES.update(saved[1])
        E.ENGINES.update(saved[2])
    return splits


if __name__ == "__main__":
    from .records import measured_vs_predicted

    values, half = fit()
    for name, v in values.items():
        print(f"{name:36s} {v:.6g}")
    print("FITTED_ON =", half)
    for row in error_table(measured_vs_predicted(), half):
        print(row)
