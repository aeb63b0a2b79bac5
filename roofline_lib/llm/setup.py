"""The setting of a serving question, checked once: model, chip, number formats, chips, memory.

Every public function of the serving and multichip rooms takes ``model, hw`` and the same keyword options
(``weight_dtype``, ``kv_dtype``, ``compute_dtype``, ``n_chips``, ``usable_fraction``, ``reserved_bytes``)
and turns them into one ``Setup`` here; the arithmetic below it takes the Setup and trusts it.
"""

from __future__ import annotations

import dataclasses

from ..core.checks import dtypes, positive
from ..core.dtypes import Dtypes
from ..specs.hardware import Accelerator, get_accelerator
from ..specs.models import Model, get_model
from .memory import memory_share, usable_memory_unchecked


@dataclasses.dataclass(frozen=True)
class Setup:
    model: Model
    hw: Accelerator
    dt: Dtypes
    n_chips: int
    usable: float  # bytes one chip has for weights + KV cache (llm.usable_memory)


def setup(model, hw, *, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16", n_chips=1, usable_fraction=1.0,
          reserved_bytes=0.0):
    """A ``Setup`` from a public call's arguments, each checked once."""
    hw = get_accelerator(hw)
    n = int(positive("n_chips", n_chips, integer=True))
    return Setup(get_model(model), hw, dtypes(weight_dtype, kv_dtype, compute_dtype), n,
                 usable_memory_unchecked(hw, *memory_share(usable_fraction, reserved_bytes)))


__all__ = ["Setup", "setup"]
