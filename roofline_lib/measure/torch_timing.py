"""PyTorch for the device measurement, loaded only when asked for (or a message saying what to install), and a
call timed on a device: between CUDA events on a GPU, between synchronisations on the host's clock elsewhere,
after warm-up calls and a cache flush each time (``time_on_device``). ``device`` and ``decode`` build on it.
"""

from __future__ import annotations

import time

import numpy as np

from .microbench import Timing

INSTALL = ('measure_device needs PyTorch, an optional extra of the course: from the course\'s folder run '
           'pip install ".[gpu]" (or pip install torch; on a Linux machine without an NVIDIA GPU the CPU build, '
           'pip install torch --index-url https://download.pytorch.org/whl/cpu, under 1 GB installed instead of '
           'several GB)')


def _torch():
    try:
        import torch
    except ImportError:
        raise ModuleNotFoundError(INSTALL) from None
    except Exception as exc:  # installed, but broken here (a build for another platform, a missing library)
        raise ModuleNotFoundError(f"PyTorch is installed but does not import here ({type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0][:160]}); reinstall it: {INSTALL}") from None
    return torch


def torch_status():
    """None where PyTorch imports, else the reason it does not and what to install (for a notebook to print).

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb); also used in chapters 08, 15."""
    try:
        _torch()
    except ModuleNotFoundError as exc:
        return str(exc)
    return None


class EventTimer:
    """Times a call between two CUDA events on the device's stream: the kernel's time, not the launch's."""

    def __init__(self, event_factory, synchronize):
        self.event, self.synchronize = event_factory, synchronize

    def __call__(self, fn):
        start, end = self.event(), self.event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3  # events report milliseconds


class SyncTimer:
    """Times a call between two synchronisations on the host's clock (mps, cpu)."""

    def __init__(self, synchronize, clock=time.perf_counter):
        self.synchronize, self.clock = synchronize, clock

    def __call__(self, fn):
        self.synchronize()
        start = self.clock()
        fn()
        self.synchronize()
        return self.clock() - start


def time_on_device(fn, timer, *, repeats=7, warmup=2, flush=None):
    """A ``Timing`` of ``fn``: ``warmup`` untimed calls, then ``repeats`` timed ones, each after ``flush()``
    (outside the timed region). Raises ValueError if the timer gives a non-positive time.

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        if flush is not None:
            flush()
        samples.append(timer(fn))
    samples = np.array(samples, dtype=float)
    if not np.all(np.isfinite(samples)) or np.any(samples <= 0):
        raise ValueError(f"the timer gave non-positive or non-finite times ({samples}): the call is shorter than "
                         "the clock's resolution; time a larger one")
    return Timing(samples)


def timer_for(device, torch=None):
    """The timer ``measure_device`` uses on ``device``: CUDA events on a GPU, synchronize + perf_counter elsewhere.

    Taught in chapter 07 (notebooks/07_measure_your_machine.ipynb)."""
    return _timer(torch or _torch(), device)


def _timer(torch, device):
    kind = device.split(":")[0]
    if kind == "cuda":
        return EventTimer(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize)
    if kind == "mps":
        return SyncTimer(torch.mps.synchronize)
    return SyncTimer(lambda: None)


__all__ = ["EventTimer", "INSTALL", "SyncTimer", "time_on_device", "timer_for", "torch_status"]
