"""roofline_lib: the numbers behind the Roofline course.

Light to import: sympy, matplotlib and ipywidgets load only with the
submodules that need them (``rl.symbolic``, ``rl.plotting``, ``rl.widgets``).
"""

import importlib

from . import units
from .dtypes import BYTES_PER_ELEMENT, bytes_per_element
from .hardware import Accelerator, get_accelerator, list_accelerators, load_accelerator
from .roofline import Estimate, attainable_flops, estimate, mbu, mfu
from .units import eng
from .workloads import Workload, attention, dot, elementwise, matmul, vector_add

_LAZY = {"symbolic", "plotting", "widgets", "exercises", "measure", "llm", "comms", "measurements", "system",
         "launch", "parallel", "serving"}
# names reachable as rl.<name> that live in a lazy submodule (loaded on first use)
_LAZY_NAMES = {"get_model": "llm", "list_models": "llm", "prefill": "llm", "decode_step": "llm",
               "measured_vs_predicted": "measurements"}


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    raise AttributeError(f"module 'roofline_lib' has no attribute {name!r}")


def __dir__():
    # the lazy submodules and names too, so tab completion finds rl.prefill, rl.exercises ...
    return sorted(set(globals()) | _LAZY | set(_LAZY_NAMES))


__all__ = [
    "Accelerator", "BYTES_PER_ELEMENT", "Estimate", "Workload", "attainable_flops", "attention",
    "bytes_per_element", "dot", "elementwise", "eng", "estimate", "mbu", "mfu", "get_accelerator", "list_accelerators",
    "load_accelerator", "matmul", "units", "vector_add",
]
