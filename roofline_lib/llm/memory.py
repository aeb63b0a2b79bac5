"""Memory of serving an LLM on one chip: weights plus KV cache, what a chip leaves for them, and the
largest batch that fits."""

from __future__ import annotations

import numpy as np

from ..core.checks import positive
from ..specs.hardware import get_accelerator
from ..specs.models import get_model


def memory_required(model, batch, context, weight_dtype="bf16", kv_dtype="bf16"):
    """Bytes of weights plus the KV cache of ``batch`` sequences of ``context`` positions.
    Activations and the runtime's own memory are not included (see ``usable_memory``)."""
    m = get_model(model)
    return m.weight_bytes(weight_dtype) + m.kv_cache_bytes(batch, context, kv_dtype)


# vLLM's default share of GPU memory the engine may take (its --gpu-memory-utilization flag,
# default 0.9 in vllm/engine/arg_utils.py): the rest is left for other processes and headroom.
VLLM_GPU_MEMORY_UTILIZATION = 0.9
# A CUDA context alone takes roughly 0.3-0.5 GiB on a datacenter GPU before any tensor exists.
CUDA_CONTEXT_BYTES = 0.5 * 2**30


def usable_memory(hw, usable_fraction=1.0, reserved_bytes=0.0):
    """Bytes left for weights + KV cache on one chip.

    ``hw.mem_capacity`` is what the driver reports (nvidia-smi memory.total). A serving engine
    takes ``usable_fraction`` of it (vLLM: ``VLLM_GPU_MEMORY_UTILIZATION`` = 0.9) and, inside that,
    ``reserved_bytes`` go to the CUDA context, activations and workspace
    (``CUDA_CONTEXT_BYTES`` is the context alone). The defaults give the physical limit.
    """
    usable_fraction = positive("usable_fraction", usable_fraction)
    if np.any(np.asarray(usable_fraction) > 1):
        raise ValueError(f"usable_fraction is the share of the chip's memory for weights + KV cache, "
                         f"in (0, 1] (vLLM uses 0.9); got {usable_fraction}")
    if isinstance(reserved_bytes, bool) or not np.all(np.isfinite(reserved_bytes)) \
            or np.any(np.asarray(reserved_bytes) < 0):
        raise ValueError(f"reserved_bytes must be a finite number of bytes >= 0 "
                         f"(e.g. rl.llm.CUDA_CONTEXT_BYTES); got {reserved_bytes!r}")
    usable = get_accelerator(hw).mem_capacity * usable_fraction - reserved_bytes
    if np.any(np.asarray(usable) <= 0):
        raise ValueError(f"reserved_bytes ({reserved_bytes!r}) leaves no memory of "
                         f"{get_accelerator(hw).name} for weights and KV cache")
    return usable


def fits(model, hw, batch, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """Whether weights + KV cache fit in the usable memory of one chip (see ``usable_memory``). Vectorised."""
    need = memory_required(model, batch, context, weight_dtype, kv_dtype)
    return np.asarray(need) <= usable_memory(hw, usable_fraction, reserved_bytes)


def max_batch(model, hw, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """The most sequences of ``context`` positions whose KV cache fits beside the weights in the usable
    memory of one chip (0 where the weights alone do not fit; see ``usable_memory``). Vectorised over context."""
    m = get_model(model)
    free = usable_memory(hw, usable_fraction, reserved_bytes) - m.weight_bytes(weight_dtype)
    per_sequence = m.kv_cache_bytes(1, context, kv_dtype)
    result = np.floor(np.maximum(free, 0) / per_sequence).astype(int)
    return int(result) if result.ndim == 0 else result


__all__ = ["CUDA_CONTEXT_BYTES", "fits", "max_batch", "memory_required", "usable_memory", "VLLM_GPU_MEMORY_UTILIZATION"]
