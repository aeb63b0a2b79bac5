"""The roofline: attainable FLOP/s, and the times of a workload on a chip at peak rates."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..core.checks import positive
from ..core.units import seconds
from ..specs.hardware import Accelerator, get_accelerator
from .workloads import Workload


def attainable_flops(intensity, hw, dtype="bf16"):
    """min(peak FLOP/s, bandwidth x intensity): the roof at that intensity. Vectorised.

    >>> import roofline_lib as rl
    >>> rl.attainable_flops([100, 1000], "H200") / 1e12   # 4.8 TB/s x 100 FLOP/byte; then the 989.4 TFLOP/s peak
    array([480. , 989.4])

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapters 02, 07.
    """
    hw = get_accelerator(hw)
    intensity = positive("intensity", intensity)
    return np.minimum(hw.peak_flops(dtype), hw.mem_bandwidth * intensity)


def _which_bound(t_math, t_mem):
    result = np.where(np.asarray(t_math) >= np.asarray(t_mem), "compute", "memory")
    return str(result) if result.ndim == 0 else result


def bound_at(intensity, hw, dtype="bf16"):
    """'compute' at or above the chip's ridge point, 'memory' below it: ``Estimate.bound`` of any
    workload of that intensity (t_math >= t_mem per byte moved). Vectorised."""
    hw = get_accelerator(hw)
    intensity = positive("intensity", intensity)
    return _which_bound(intensity / hw.peak_flops(dtype), 1 / hw.mem_bandwidth)


@dataclasses.dataclass(frozen=True)
class Estimate:
    """Times of a workload on one chip at the datasheet's peak rates, in seconds.

    lower = max(t_math, t_mem): compute and memory traffic fully overlapped. With
    the workload's bytes being the minimum traffic, no kernel can beat it: a
    lower bound.
    no_overlap = t_math + t_mem: the same peak rates with no overlap at all.
    It is *not* a bound on a real kernel, which can be slower still (it may
    reach less than the peak rates, move more than the minimum bytes, or wait
    on launches). no_overlap <= 2 * lower always. (``upper``, its older name, still works
    for one release and warns.)
    """

    workload: Workload
    hw: Accelerator
    t_math: object
    t_mem: object

    @property
    def lower(self):
        """max(t_math, t_mem): compute and memory traffic fully overlapped, a lower bound on the time."""
        return np.maximum(self.t_math, self.t_mem)

    @property
    def no_overlap(self):
        """t_math + t_mem: the time at peak rates if compute and memory never overlap."""
        return self.t_math + self.t_mem

    @property
    def upper(self):
        """Deprecated: the older name of ``no_overlap`` (not a bound on a real kernel's time)."""
        warnings.warn("Estimate.upper is deprecated; use Estimate.no_overlap (t_math + t_mem)", DeprecationWarning,
                      stacklevel=2)
        return self.no_overlap

    @property
    def bound(self):
        """'compute' where t_math >= t_mem, else 'memory' (an array for array inputs)."""
        return _which_bound(self.t_math, self.t_mem)

    @property
    def achieved_flops(self):
        """FLOP/s if the workload ran at its lower bound."""
        return self.workload.flops / self.lower

    @property
    def parts(self):
        """One Estimate per leaf operation, to see where the time goes."""
        return [estimate(p, self.hw) for p in self.workload.leaves()]

    def __repr__(self):
        if np.ndim(self.t_math) or np.ndim(self.t_mem):
            return f"Estimate({self.workload.name!r} on {self.hw.name}, array)"
        return (f"Estimate({self.workload.name!r} on {self.hw.name}: t_math={seconds(self.t_math)}, "
                f"t_mem={seconds(self.t_mem)}, lower={seconds(self.lower)}, no_overlap={seconds(self.no_overlap)}, "
                f"{self.bound}-bound)")


def estimate(workload, hw, dtype=None):
    """Times of ``workload`` on ``hw`` at peak rates: ``lower`` (fully overlapped, a lower bound)
    and ``no_overlap`` (t_math + t_mem; a real kernel can take longer still).

    Each part runs at the peak of its own compute dtype (``dtype`` overrides it
    for every part); all bytes move at the chip's memory bandwidth.

    >>> import roofline_lib as rl
    >>> rl.estimate(rl.matmul(4096, 4096, 4096), "H200")
    Estimate('matmul' on H200 SXM: t_math=138.911 µs, t_mem=20.972 µs, lower=138.911 µs, no_overlap=159.883 µs,
    compute-bound)

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapters 02, 03, 04, 05, 06,
    07, 08, 09, 10, 11, 13, 15.
    """
    if not isinstance(workload, Workload):
        raise ValueError("estimate() needs a Workload (from rl.matmul, rl.attention, ...), "
                         f"got {type(workload).__name__}")
    hw = get_accelerator(hw)
    t_math = sum(p.flops / hw.peak_flops(dtype or p.dtype) for p in workload.leaves())
    t_mem = workload.bytes / hw.mem_bandwidth
    return Estimate(workload, hw, t_math, t_mem)


def _measured(workload, seconds, hw, n_chips):
    if not isinstance(workload, Workload):
        raise ValueError(f"needs a Workload (from rl.matmul, rl.decode_step, ...), got {type(workload).__name__}")
    seconds = positive("seconds (the measured time)", seconds)
    n_chips = positive("n_chips", n_chips, integer=True)
    return get_accelerator(hw), seconds, n_chips


def mbu(workload, seconds, hw, *, n_chips=1):
    """Memory-bandwidth utilisation: the workload's bytes / measured seconds / (n_chips x memory bandwidth).

    The share of the bandwidth roof a measured run used. Above 1 would mean the run moved its bytes
    faster than the chips can: a wrong byte count or a wrong measurement. Vectorised over ``seconds``.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb).
    """
    hw, seconds, n_chips = _measured(workload, seconds, hw, n_chips)
    return workload.bytes / seconds / (n_chips * hw.mem_bandwidth)


def mfu(workload, seconds, hw, dtype=None, *, n_chips=1):
    """Model FLOP utilisation: the workload's FLOPs / measured seconds / (n_chips x peak FLOP/s).

    Each part counts at the peak of its own compute dtype (``dtype`` overrides it for every part),
    so mfu <= 1 exactly when the measured time is at least ``estimate(...).t_math``. Vectorised.

    Use it for work you have as a Workload and a measured time (a kernel, an inference step).
    ``rl.training.mfu(model, hw, tokens_per_s_per_chip, seq_len)`` is the same quantity from what a training
    log reports: a token rate, with the model's FLOPs per token counted in a named convention.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb).
    """
    hw, seconds, n_chips = _measured(workload, seconds, hw, n_chips)
    return estimate(workload, hw, dtype).t_math / (seconds * n_chips)


__all__ = ["attainable_flops", "bound_at", "Estimate", "estimate", "mbu", "mfu"]
