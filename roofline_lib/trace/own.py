"""A trace of the learner's own machine: a few decode steps of the course's model (``rl.measure.decode``) or a
sweep of matmuls, recorded with ``torch.profiler`` on whatever device is there (a GPU where present, else the
CPU through PyTorch's CPU build), written as a Kineto trace and read back with ``read``.

    t = rl.trace.profile_matmuls("matmuls.json", sizes=(64, 256, 1024))
    t = rl.trace.profile_decode("decode.json", batch=1, context=256, steps=3)   # a small Llama, TINY_LLAMA

The first steps of any workload are not like the rest: memory is allocated, libraries pick their kernels, and the
profiler starts itself up. ``torch.profiler.schedule(wait, warmup, active)`` keeps them out of the trace: it skips
``wait`` steps, runs the profiler through ``warmup`` steps and throws those away, then records ``active`` steps
(the loop calls ``prof.step()`` after each). Both helpers do that with ``warmup`` steps (default 1);
``warmup=0`` records from the first call, artefact included.

Without PyTorch they raise ModuleNotFoundError with the command that installs it
(``rl.measure.device.torch_status()`` says so without raising).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..core.checks import positive
from ..measure.decode import DecodeModel
from ..measure.device import _torch, pick_device
from .trace import read

TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
# a Llama-shaped model small enough to run a few steps on any CPU in well under a second (a Hugging Face
# config.json's fields); a real model's name works too where the device has the memory
TINY_LLAMA = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2,
              "intermediate_size": 1536, "num_hidden_layers": 4, "vocab_size": 8192, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "tie_word_embeddings": False}


@contextlib.contextmanager
def _quiet_native_stderr():
    """The profiler's C++ side writes a line to the process's stderr at each start and stop (Kineto's
    "profiler_start"): hide those two lines, where the file descriptors allow it."""
    try:
        saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except OSError:
        yield
        return
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _profile(torch, device, work, path, steps, warmup):
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.startswith("cuda"):
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    warmup = _warmup(warmup)
    # warm-up steps run under the profiler and are thrown away: first-call costs (allocation, kernel selection,
    # the profiler's own start) stay out of the recorded steps (with warmup=0 everything is recorded)
    schedule = torch.profiler.schedule(wait=0, warmup=warmup, active=steps, repeat=1) if warmup else None
    with _quiet_native_stderr(), torch.profiler.profile(activities=activities, record_shapes=True,
                                                        schedule=schedule) as prof:
        for _ in range(warmup + steps):
            work()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            prof.step()
    path = Path(path)
    prof.export_chrome_trace(str(path))
    return read(path)


def _warmup(warmup):
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number of steps >= 0 (0 records from the first call), got {warmup!r}")
    return warmup


def profile_matmuls(path, sizes=(64, 256, 1024), *, dtype="fp32", device=None, repeats=3, warmup=1):
    """Profile ``repeats`` rounds of square matmuls of each size in ``sizes`` on ``device`` (default: a GPU where
    there is one, else the CPU), after ``warmup`` rounds the profiler throws away (``torch.profiler.schedule``),
    and return the trace read back from ``path``.

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    torch = _torch()
    if dtype not in TORCH_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(TORCH_DTYPES)}, got {dtype!r}")
    sizes = [positive("size", n, integer=True) for n in sizes]
    device = pick_device(device, torch)
    t = getattr(torch, TORCH_DTYPES[dtype])
    pairs = [(torch.randn(n, n, dtype=t, device=device), torch.randn(n, n, dtype=t, device=device)) for n in sizes]

    def work():
        for a, b in pairs:
            torch.mm(a, b)

    return _profile(torch, device, work, path, positive("repeats", repeats, integer=True), warmup)


def profile_decode(path, model=None, *, batch=1, context=256, steps=3, device=None, dtype="fp32", warmup=1):
    """Profile ``steps`` decode steps of ``model`` (random weights in its shapes, ``rl.measure.DecodeModel``) on
    ``device``, after ``warmup`` steps the profiler throws away, and return the trace read back from ``path``.
    ``model``: a name, a config dict, or (None) ``TINY_LLAMA``."""
    m = DecodeModel(TINY_LLAMA if model is None else model, batch, context, device=device, dtype=dtype)
    return _profile(m.torch, m.device, m.step, path, positive("steps", steps, integer=True), warmup)


__all__ = ["TINY_LLAMA", "profile_decode", "profile_matmuls"]
