"""A matmul X[M,K] @ Y[K,N] on two chips' rooflines: M, N, K and the dtypes move the point."""

from __future__ import annotations

import ipywidgets
import numpy as np

from ..roofline.bounds import attainable_flops, estimate
from ..roofline.workloads import matmul
from ..specs.hardware import get_accelerator
from .base import Explorer, eng, invalidate_background, moving
from .controls import int_log_slider, plain
from .roofline_explorer import RoofAxes

# label -> (dtype of X, dtype of Y, dtype of Z); the compute dtype is X's
MATMUL_DTYPES = {
    "bf16": ("bf16", "bf16", "bf16"),
    "fp16": ("fp16", "fp16", "fp16"),
    "fp8 in, fp8 out": ("fp8", "fp8", "fp8"),
    "fp8 in, bf16 out": ("fp8", "fp8", "bf16"),
    "bf16 x int8 weights": ("bf16", "int8", "bf16"),
    "fp32": ("fp32", "fp32", "fp32"),
}
SIZE_RANGE = (1, 65536)


def _size(name, value):
    """A slider gives a float; a matrix side is a whole number >= 1."""
    value = float(value)
    if not (np.isfinite(value) and value >= 0.5):
        raise ValueError(f"{name} must be a finite number >= 1, got {value!r}")
    return int(round(value))


class MatmulExplorer(Explorer):
    """Move M, N, K (whole numbers on log sliders, about four steps per doubling) and the dtypes of a matmul.

    The readout gives FLOPs, bytes, intensity, its M -> infinity limit, and on each
    chip the predicted time (lower bound), which bound applies and the critical M
    where the matmul crosses that chip's ridge (solved in ``rl.symbolic``).

    Taught in chapter 03 (notebooks/03_matmul_intensity.ipynb).
    """

    def __init__(self, chips=("A100", "H200"), M=128, N=4096, K=4096, dtype="bf16"):
        if dtype not in MATMUL_DTYPES:
            raise ValueError(f"unknown matmul dtype choice {dtype!r}; choose one of {', '.join(MATMUL_DTYPES)}")
        self.chips = [get_accelerator(c) for c in chips]
        self._critical = {}  # dtype label -> numeric function of (R, N, K), from the sympy solution
        self._drawn = None
        self._limit = None  # the M -> infinity intensity the ridge labels were last placed around
        lo, hi = SIZE_RANGE
        controls = {
            "M": int_log_slider("M (tokens)", lo, hi, M),
            "N": int_log_slider("N", lo, hi, N),
            "K": int_log_slider("K", lo, hi, K),
            "dtype": ipywidgets.Dropdown(options=list(MATMUL_DTYPES), value=dtype, description="dtype"),
        }
        super().__init__(controls)

    def build(self):
        """One panel: the chips' roofs, each chip's matmul point, and the line where M x N x K turns compute-bound."""
        ax = self.fig.add_subplot()
        ax.set_title("matmul X[M,K] @ Y[K,N] -> Z[M,N]", fontsize=10)
        self.roof = RoofAxes(ax, len(self.chips))
        self.limit_line = ax.axvline(1, color="0.5", ls="--", lw=1, zorder=4)
        self.limit_label = ax.annotate("", (1, 0.02), xycoords=("data", "axes fraction"), rotation=90,
                                       fontsize=8, color="0.4", xytext=(3, 0), textcoords="offset points", zorder=4)
        moving(self.fig, self.limit_line, self.limit_label)

    def laid_out(self):
        """Place the ridge labels clear of the roofs and the limit line."""
        self.roof.place_labels([self.limit_line])

    def critical_M(self, label, hw, N, K):
        """M at which this matmul reaches ``hw``'s ridge, or None if no M does."""
        if label not in self._critical:
            import sympy as sp

            from ..roofline import symbolic as sym

            x, y, z = MATMUL_DTYPES[label]
            solution = sym.critical_M(x, y, z)
            limit = sym.large_M_limit(sym.matmul_intensity_for(x, y, z))
            self._critical[label] = (sp.lambdify((sym.R, sym.N, sym.K), solution),
                                     sp.lambdify((sym.N, sym.K), limit))
        solution, limit = self._critical[label]
        ridge = hw.ridge_point(MATMUL_DTYPES[label][0])
        return float(solution(ridge, N, K)) if limit(N, K) > ridge else None

    def update(self, M, N, K, dtype):
        """An M x K by K x N matmul in ``dtype`` (a choice of MATMUL_DTYPES): move the points, return the readout."""
        M, N, K = _size("M", M), _size("N", N), _size("K", K)
        if dtype not in MATMUL_DTYPES:
            raise ValueError(f"unknown matmul dtype choice {dtype!r}; choose one of {', '.join(MATMUL_DTYPES)}")
        x, y, z = MATMUL_DTYPES[dtype]
        if self._drawn != x:
            self.roof.set_chips(self.chips, x)
            self._drawn = x
        w = matmul(M, N, K, dtype=x, b_dtype=y, out_dtype=z)
        intensity = float(w.intensity)
        limit = float(matmul(1e12, N, K, dtype=x, b_dtype=y, out_dtype=z).intensity)  # M -> infinity, numerically
        self.roof.set_cursor(intensity)
        self.limit_line.set_xdata([limit, limit])
        self.limit_label.xy = (limit, 0.02)
        self.limit_label.set_text(f"M→∞: {limit:.0f}")
        if limit != self._limit:  # N, K or the dtype moved the limit: keep the ridge labels off its line
            self._limit = limit
            if self.roof.place_labels([self.limit_line]):
                invalidate_background(self.fig)
        readout = {
            "shape": f"[{M}, {K}] @ [{K}, {N}] ({dtype})",
            "FLOPs": eng(w.flops, "FLOP"),
            "bytes": eng(w.bytes, "B"),
            "intensity": f"{plain(intensity)} FLOP/B (M→∞ limit {plain(limit)})",
        }
        for slot, hw in enumerate(self.chips):
            if x not in hw.peak_flops_by_dtype:
                self.roof.set_point(slot, intensity, None)
                readout[hw.name] = f"no {x} peak on this chip"
                continue
            est = estimate(w, hw)
            self.roof.set_point(slot, intensity, float(attainable_flops(intensity, hw, x)))
            critical = self.critical_M(dtype, hw, N, K)
            cross = f"critical M {critical:.0f}" if critical is not None else "never compute-bound at these N, K"
            readout[hw.name] = f"{eng(float(est.lower), 's')}, {est.bound}-bound; {cross}"
        return readout


__all__ = ["MATMUL_DTYPES", "MatmulExplorer", "SIZE_RANGE"]
