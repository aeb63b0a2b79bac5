"""A real profiler trace, diagnosed: ``read`` a PyTorch profiler (Kineto) trace, measure how busy the GPU was
and with what, place its GEMMs on a roofline, and ``diagnose`` which of the four bottlenecks dominates.
``profile_decode`` and ``profile_matmuls`` record a trace of the course's own workloads on this machine
(they need PyTorch).
"""

from .categories import CATEGORIES, PATTERNS, category
from .chips import chip_for
from .diagnose import REGIMES, Diagnosis, diagnose
from .published import PUBLISHED, PublishedTrace
from .trace import SHORT_KERNEL_S, SPLIT_GAP_S, AttentionRow, GemmRow, LaunchStats, Placed, Trace, read


def __getattr__(name):
    # the profiling helpers import PyTorch only when called; loaded on first use all the same
    if name in ("profile_decode", "profile_matmuls"):
        from . import own
        return getattr(own, name)
    raise AttributeError(f"module 'roofline_lib.trace' has no attribute {name!r}")


__all__ = ["AttentionRow", "CATEGORIES", "Diagnosis", "GemmRow", "LaunchStats", "PATTERNS", "PUBLISHED", "Placed",
           "PublishedTrace", "REGIMES", "SHORT_KERNEL_S", "SPLIT_GAP_S", "Trace", "category", "chip_for", "diagnose",
           "profile_decode", "profile_matmuls", "read"]
