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
    """A serving question's checked setting: the model, the chip, the three number formats, the chips and the
    bytes one chip has for weights and KV cache."""

    model: Model
    hw: Accelerator
    dt: Dtypes
    n_chips: int
    usable: float  # bytes one chip has for weights + KV cache (llm.usable_memory)
    share: tuple = (1.0, 0.0)  # (usable_fraction, reserved_bytes) behind ``usable``, checked

    def on(self, hw):
        """The same setting on another chip (a disaggregated decode pool): only the chip is looked up."""
        hw = get_accelerator(hw)
        return dataclasses.replace(self, hw=hw, usable=usable_memory_unchecked(hw, *self.share))


def setup(model, hw, *, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16", n_chips=1, usable_fraction=1.0,
          reserved_bytes=0.0):
    """A ``Setup`` from a public call's arguments, each checked once."""
    hw = get_accelerator(hw)
    n = int(positive("n_chips", n_chips, integer=True))
    share = memory_share(usable_fraction, reserved_bytes)
    return Setup(get_model(model), hw, dtypes(weight_dtype, kv_dtype, compute_dtype), n,
                 usable_memory_unchecked(hw, *share), share)


__all__ = ["Setup", "setup"]
