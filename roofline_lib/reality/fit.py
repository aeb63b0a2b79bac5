"""How good the best estimate is: its error by kind of record, on the records its fitted constants saw and on
the ones they did not; and the fit itself (run once, by hand, when records or terms change):

    python -m roofline_lib.reality.fit          # refits on half the records, prints constants and errors

The fit is coordinate descent over a grid for each fitted constant of ``reality.estimate``, minimising the
median |log(estimate / measured)| over the fitting half only. The half is every other record by a fixed hash of
its id; the ids it used are then frozen in ``estimate.FITTED_ON``, so a record added later is always held out.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from . import estimate as E

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


def error_table(comparisons, fitted_on=None):
    """Rows (kind, n fitted, median |error| fitted, n held out, median |error| held out), and an 'all' row; the
    exercises' records are left out of both. A median is None where a group is empty.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb)."""
    fitted_on = set(E.FITTED_ON if fitted_on is None else fitted_on)
    comparisons = [c for c in comparisons if c.id not in RESERVED_FOR_EXERCISES]
    rows = []
    for kind in (*KINDS, "all"):
        group = [c for c in comparisons if kind in ("all", kind_of(c))]
        inside = [abs(c.estimate_error) for c in group if c.id in fitted_on]
        outside = [abs(c.estimate_error) for c in group if c.id not in fitted_on]
        rows.append((kind, len(inside), float(np.median(inside)) if inside else None,
                     len(outside), float(np.median(outside)) if outside else None))
    return rows


def fitting_half(ids):
    """Every other record by a fixed hash of its id (crc32 even), less the exercises' records: the records the
    fit may see."""
    return tuple(sorted(i for i in ids if zlib.crc32(i.encode()) % 2 == 0 and i not in RESERVED_FOR_EXERCISES))


# name -> (grid of values, how to set it)
def _set_kernel_class(key):
    def put(v):
        E.KERNEL_CLASSES[key] = dataclasses.replace(E.KERNEL_CLASSES[key], weight_read_share=v)
    return put


def _set_engine(key, field):
    def put(v):
        E.ENGINES[key] = dataclasses.replace(E.ENGINES[key], **{field: v})
    return put


def _set_fp8_share(v):
    E.FP8_MATMUL_SHARE = v


FITTED = {
    "tinygemm weight_read_share": (np.linspace(0.3, 1.0, 15), _set_kernel_class("tinygemm")),
    "int8-mixed-mm weight_read_share": (np.linspace(0.5, 1.0, 11), _set_kernel_class("int8-mixed-mm")),
    "gpt-fast allreduce_latency_s": (np.arange(5, 31, 1) * 1e-6, _set_engine("gpt-fast", "allreduce_latency_s")),
    "FP8_MATMUL_SHARE": (np.linspace(0.3, 0.9, 13), _set_fp8_share),
    "server host_step_s": (np.arange(0, 41) * 0.1e-3, _set_engine("TensorRT-LLM server", "host_step_s")),
    "server request_s": (np.arange(0, 31) * 1e-3, _set_engine("TensorRT-LLM server", "request_s")),
}


def fit(rounds=3):
    """Refit the ``FITTED`` constants on ``fitting_half`` of today's records; return (values, half)."""
    from .records import _steps, measured_vs_predicted

    comparisons = measured_vs_predicted()
    half = fitting_half([c.id for c in comparisons])
    cases = [(c.record, _steps(c.record, c.estimate_batch), c.estimate_batch, c.measured_s)
             for c in comparisons if c.id in half]

    def loss():
        return float(np.median([abs(np.log(E.estimate_terms(r, s, b).total / m)) for r, s, b, m in cases]))

    values = {}
    for _ in range(rounds):
        for name, (grid, put) in FITTED.items():
            scores = []
            for v in grid:
                put(float(v))
                scores.append(loss())
            values[name] = float(grid[int(np.argmin(scores))])
            put(values[name])
    return values, half


if __name__ == "__main__":
    from .records import measured_vs_predicted

    values, half = fit()
    for name, v in values.items():
        print(f"{name:36s} {v:.6g}")
    print("FITTED_ON =", half)
    for row in error_table(measured_vs_predicted(), half):
        print(row)
