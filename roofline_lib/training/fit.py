"""How good the best training estimate is: its error by family of records (the source file), on the records its
fitted constants saw and on those they did not; and the fit itself (run by hand when records or terms change):

    python -m roofline_lib.training.fit        # refits on split 0, prints constants and errors; then splits 1-4

The fit is coordinate descent over a grid for each of ``FITTED``, minimising the median |log(estimate /
measured)| over the fitting half only. A split's half is every record whose crc32 of "<split>:<id>" is even; split
0's ids are frozen in ``estimate.FITTED_ON``, so a record added later is always held out. The other splits refit
from the same starting constants to show how much the held-out error moves with the choice of half; their last
run's figures are ``SPLITS`` (what chapter 13 prints).
"""

from __future__ import annotations

import zlib

import numpy as np

from . import estimate as E
from .records import _train_step, measured_vs_predicted

__all__ = ["FITTED", "SPLITS", "error_table", "family", "fit", "fitting_half"]


def family(comparison):
    """A record's family: the file of data/training/ it comes from (one source, one framework).

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    return comparison.record.source_file.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".toml")


def fitting_half(ids, split=0):
    """The ids a split may fit on: crc32 of "<split>:<id>" even (split 0: crc32 of the id, as chapter 10)."""
    key = (lambda i: i) if split == 0 else (lambda i: f"{split}:{i}")
    return tuple(sorted(i for i in ids if zlib.crc32(key(i).encode()) % 2 == 0))


# the last run of this module (python -m roofline_lib.training.fit): (split, median |error| of the records the
# split fitted on, of those it held out), over the 111 records the estimate can be set up for
SPLITS = (
    (0, 0.262, 0.284),
    (1, 0.259, 0.268),
    (2, 0.254, 0.268),
    (3, 0.321, 0.246),
    (4, 0.222, 0.263),
)


def _setter(name):
    def put(v):
        setattr(E, name, float(v))
    return put


FITTED = {
    "MATMUL_HALF_DIM": (np.array([0, 64, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]), _setter("MATMUL_HALF_DIM")),
    "FP8_MATMUL_SPEEDUP": (np.linspace(1.0, 2.0, 11), _setter("FP8_MATMUL_SPEEDUP")),
    "HOST_MICROBATCH_S": (np.arange(0, 81, 5) * 1e-3, _setter("HOST_MICROBATCH_S")),
}


def _cases():
    """(comparison, its TrainStep) for every record the estimate can be set up for."""
    out = []
    for c in measured_vs_predicted():
        st = _train_step(c.record)
        if st is not None:
            out.append((c, st))
    return out


def error_table(rows, fitted_on):
    """Rows (family, n fitted, median |error| fitted, n held out, median |error| held out) and an 'all' row, from
    (comparison, estimate tokens/s) pairs; a median is None where a group is empty.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    fitted_on = set(fitted_on)
    out = []
    for name in (*sorted({family(c) for c, _ in rows}), "all"):
        group = [(c, e) for c, e in rows if name in ("all", family(c))]
        errs = [(c.id in fitted_on, abs(e / c.measured_tokens_per_s_per_chip - 1)) for c, e in group]
        inside = [e for f, e in errs if f]
        outside = [e for f, e in errs if not f]
        out.append((name, len(inside), float(np.median(inside)) if inside else None,
                    len(outside), float(np.median(outside)) if outside else None))
    return out


def fit(split=0, rounds=2, cases=None):
    """Refit ``FITTED`` on ``fitting_half`` of split ``split``; return (values, half, rows of error_table input)."""
    cases = _cases() if cases is None else cases
    half = set(fitting_half([c.id for c, _ in cases], split))
    inside = [(c, st) for c, st in cases if c.id in half]

    def loss():
        return float(np.median([abs(np.log(float(st.estimate.tokens_per_s_per_chip)
                                            / c.measured_tokens_per_s_per_chip)) for c, st in inside]))

    values = {}
    for _ in range(rounds):
        for name, (grid, put) in FITTED.items():
            scores = []
            for v in grid:
                put(v)
                scores.append(loss())
            values[name] = float(grid[int(np.argmin(scores))])
            put(values[name])
    rows = [(c, float(st.estimate.tokens_per_s_per_chip)) for c, st in cases]
    return values, tuple(sorted(half)), rows


if __name__ == "__main__":
    cases = _cases()
    start = {name: getattr(E, name) for name in FITTED}
    for split in range(5):
        for name, v in start.items():
            setattr(E, name, v)
        values, half, rows = fit(split, cases=cases)
        print(f"split {split}:", {n: round(v, 6) for n, v in values.items()})
        for row in error_table(rows, half):
            print("   ", row[0], row[1], None if row[2] is None else round(row[2], 3), row[3],
                  None if row[4] is None else round(row[4], 3))
        table = error_table(rows, half)
        print(f"    SPLITS row: ({split}, {table[-1][2]:.3f}, {table[-1][4]:.3f}),")
        if split == 0:
            frozen = (values, half)
    print("FITTED_ON =", frozen[1])
    print("constants:", frozen[0])
