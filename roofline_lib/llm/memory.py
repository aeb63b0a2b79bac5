"""Memory of serving an LLM: weights plus KV cache, what a chip leaves for them, and the largest batch
that fits (the one home of that formula: ``sequences_that_fit``)."""

from __future__ import annotations

import numpy as np

from ..core.checks import fraction, non_negative, positive
from ..core.dtypes import canonical_dtype
from ..specs.hardware import get_accelerator
from ..specs.models import get_model

# vLLM's default share of GPU memory the engine may take (its --gpu-memory-utilization flag,
# default 0.9 in vllm/engine/arg_utils.py and later vllm/config/cache.py; 0.92 in the current
# vllm/config/cache.py): the rest is left for other processes and headroom.
VLLM_GPU_MEMORY_UTILIZATION = 0.9
# A CUDA context alone takes roughly 0.3-0.5 GiB on a datacenter GPU before any tensor exists.
CUDA_CONTEXT_BYTES = 0.5 * 2**30


def memory_required(model, batch, context, *, weight_dtype="bf16", kv_dtype="bf16"):
    """Bytes of weights plus the KV cache of ``batch`` sequences of ``context`` positions.
    Activations and the runtime's own memory are not included (see ``usable_memory``)."""
    m = get_model(model)
    return m.weight_bytes(weight_dtype) + m.kv_cache_bytes(batch, context, kv_dtype)


def memory_required_unchecked(m, batch, context, weight_dtype, kv_dtype):
    """``memory_required`` for a Model and checked sizes (canonical dtype names)."""
    return m.weight_bytes(weight_dtype) + m.kv_cache_bytes_unchecked(batch, context, kv_dtype)


def usable_memory(hw, *, usable_fraction=1.0, reserved_bytes=0.0):
    """Bytes left for weights + KV cache on one chip.

    ``hw.mem_capacity`` is what the driver reports (nvidia-smi memory.total). A serving engine
    takes ``usable_fraction`` of it (vLLM: ``VLLM_GPU_MEMORY_UTILIZATION`` = 0.9) and, inside that,
    ``reserved_bytes`` go to the CUDA context, activations and workspace
    (``CUDA_CONTEXT_BYTES`` is the context alone). The defaults give the physical limit.
    """
    return usable_memory_unchecked(get_accelerator(hw), *memory_share(usable_fraction, reserved_bytes))


def memory_share(usable_fraction, reserved_bytes):
    """The two memory options of every serving function, checked: (fraction in (0, 1], bytes >= 0)."""
    return (fraction("usable_fraction",
                     usable_fraction, zero_ok=False),
            non_negative("reserved_bytes", reserved_bytes))


def usable_memory_unchecked(hw, usable_fraction, reserved_bytes):
    """``usable_memory`` for an Accelerator and options ``memory_share`` has checked."""
    usable = hw.mem_capacity * usable_fraction - reserved_bytes
    if np.any(np.asarray(usable) <= 0):
        raise ValueError(f"reserved_bytes ({reserved_bytes!r}) leaves no memory of {hw.name} for weights "
                         "and KV cache")
    return usable


def sequences_that_fit(free_bytes, bytes_per_sequence):
    """The most whole sequences of ``bytes_per_sequence`` in ``free_bytes`` (0 where nothing is free): the
    one formula behind every "largest batch" of the library. Vectorised; an int for scalars."""
    result = np.floor(np.maximum(free_bytes, 0) / bytes_per_sequence).astype(int)
    return int(result) if result.ndim == 0 else result


def fits(model, hw, batch, context, *, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0,
         reserved_bytes=0.0):
    """Whether weights + KV cache fit in the usable memory of one chip (see ``usable_memory``). Vectorised."""
    need = memory_required(model, batch, context, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    return np.asarray(need) <= usable_memory(hw, usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)


def max_batch(model, hw, context, *, n_chips=1, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0,
              reserved_bytes=0.0):
    """The most sequences of ``context`` positions whose KV cache fits beside the weights in the usable memory
    of ``n_chips`` chips, weights and cache split evenly (0 where the weights alone do not fit; see
    ``usable_memory``; ``rl.parallel.tp_max_batch`` for a cache that splits only by KV head). Vectorised
    over context.

    Taught in chapter 05 (notebooks/05_llm_inference.ipynb); also used in chapter 11."""
    m, hw = get_model(model), get_accelerator(hw)
    n = positive("n_chips", n_chips, integer=True)
    usable = usable_memory_unchecked(hw, *memory_share(usable_fraction, reserved_bytes))
    return max_batch_unchecked(m, usable, positive("context", context, integer=True), n, canonical_dtype(weight_dtype),
                               canonical_dtype(kv_dtype))


def max_batch_unchecked(m, usable, context, n_chips, weight_dtype, kv_dtype):
    """``max_batch`` for a Model, one chip's usable bytes and checked sizes."""
    return sequences_that_fit(n_chips * usable - m.weight_bytes(weight_dtype),
                              m.kv_cache_bytes_unchecked(1, context, kv_dtype))


__all__ = [
    "CUDA_CONTEXT_BYTES", "VLLM_GPU_MEMORY_UTILIZATION", "fits", "max_batch", "memory_required", "memory_share",
    "sequences_that_fit", "usable_memory",
]
