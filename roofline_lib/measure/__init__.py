"""Measuring the machine the notebook runs on: what the operating system says about it (``system``),
timed kernels (``microbench``), the empirical roofline (``profile``), the launch queue that leaves a
device idle (``launch``), and the learner's own GPU through PyTorch, an optional extra (``device``), with a
real model's decode step on it (``decode``) and the course's own measurements kept as data (``record``).
"""

from .device import DeviceProfile, measure_device
from .launch import KEPT_BY_FUSION, ONCE_PER_STEP, Trace, decode_kernel_count, decode_kernel_times, simulate_queue
from .microbench import (
    NotEnoughMemoryError,
    StreamKernels,
    Timing,
    check_allocation,
    horner,
    horner_flops,
    random_fill,
    stream_bytes,
    strided_bytes,
    time_kernel,
)
from .profile import (
    OVERHEAD_PERCENTILE,
    MachineProfile,
    agreement,
    has_simd,
    measure_cache_bandwidth,
    measure_machine,
    measure_matmul_peak,
    measure_matmul_peaks,
    measure_overhead,
    memory_roof,
)


def __getattr__(name):
    # record is also a command (python -m roofline_lib.measure.record): importing it here would load it twice
    if name in ("DeviceRecord", "own_measurements"):
        from . import record
        return getattr(record, name)
    raise AttributeError(f"module 'roofline_lib.measure' has no attribute {name!r}")


__all__ = [
    "DeviceProfile", "DeviceRecord", "measure_device", "own_measurements", "agreement", "check_allocation",
    "random_fill", "decode_kernel_count", "decode_kernel_times", "has_simd", "horner", "horner_flops",
    "KEPT_BY_FUSION", "MachineProfile", "measure_cache_bandwidth", "measure_machine", "measure_matmul_peak",
    "measure_matmul_peaks", "measure_overhead", "memory_roof", "NotEnoughMemoryError", "ONCE_PER_STEP",
    "OVERHEAD_PERCENTILE", "simulate_queue", "stream_bytes", "StreamKernels", "strided_bytes", "time_kernel",
    "Timing", "Trace"
]
