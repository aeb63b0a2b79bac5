"""roofline_lib: the numbers behind the Roofline course.

The library is a house of rooms, each a subpackage with one topic, importing only the rooms below it
(checked by import-linter, ``.importlinter``):

    core       units, input checks, number formats, data catalogs
    specs      accelerators and models, read from data/
    roofline   workloads, time bounds, the diagnosis rule, sympy derivations
    llm        a transformer step as kernels: prefill, decode, memory, fusion, occupancy
    multichip  collectives and parallelism
    training   a training step: FLOPs per token, memory, parallelism, published runs
    serving    whole requests, continuous batching, serving techniques
    measure    this machine: system facts, timed kernels, its roofline, the launch queue
    reality    published measurements beside the bound
    plotting   static figures
    trace      a real profiler trace: busy time, categories, GEMMs on the roofline, the diagnosis
    widgets, exercises, teach   live explorers, self-checks, the teacher's tools

Light to import: ``core``, ``specs`` and ``roofline`` load at once; every other room on first use
(``rl.llm``, ``rl.serving`` ...), and sympy, matplotlib and ipywidgets only with the rooms that need them.
"""

import importlib
import warnings

from .core import units
from .core.dtypes import BYTES_PER_ELEMENT, bytes_per_element
from .core.language import get_language, set_language
from .core.units import eng
from .roofline.bounds import Estimate, attainable_flops, estimate, mbu, mfu
from .roofline.workloads import Workload, attention, dot, elementwise, matmul, vector_add
from .specs.hardware import Accelerator, get_accelerator, list_accelerators, load_accelerator

# rooms loaded on first use
_ROOMS = {"core", "specs", "roofline", "llm", "multichip", "serving", "training", "measure", "reality", "plotting",
          "trace", "widgets", "exercises", "teach"}
# short names the chapters use for a module inside a room: rl.comms is rl.multichip.collectives
_SHORTCUTS = {
    "comms": "multichip.collectives", "parallel": "multichip.parallel", "symbolic": "roofline.symbolic",
    "diagnosis": "roofline.diagnosis", "fusion": "llm.fusion", "launch": "measure.launch",
    "system": "measure.system", "measurements": "reality.records",
}
# the flat modules of the first layout, one release more (each warns and names its new home)
_MOVED = {
    "hardware": "specs.hardware", "models": "specs.models", "workloads": "roofline.workloads",
    "validation": "core.checks", "dtypes": "core.dtypes", "catalog": "core.catalog", "llm_blocks": "llm.blocks",
    "llm_memory": "llm.memory", "occupancy": "llm.occupancy", "serving_techniques": "serving.techniques",
    "microbench": "measure.microbench",
}
# names reachable as rl.<name> that live in a room loaded on first use
_LAZY_NAMES = {"get_model": "specs.models", "list_models": "specs.models", "get_topology": "specs.topologies",
               "list_topologies": "specs.topologies", "prefill": "llm.steps",
               "decode_step": "llm.steps", "measured_vs_predicted": "reality.records"}


def __getattr__(name):
    if name in _ROOMS:
        return importlib.import_module(f".{name}", __name__)
    if name in _SHORTCUTS:
        return importlib.import_module(f".{_SHORTCUTS[name]}", __name__)
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    if name in _MOVED:
        warnings.warn(f"roofline_lib.{name} moved to roofline_lib.{_MOVED[name]}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(f".{_MOVED[name]}", __name__)
    raise AttributeError(f"module 'roofline_lib' has no attribute {name!r}")


def __dir__():
    # the lazy rooms, shortcuts and names too, so tab completion finds rl.prefill, rl.exercises ...
    return sorted(set(globals()) | _ROOMS | set(_SHORTCUTS) | set(_LAZY_NAMES))


__all__ = [
    "Accelerator", "BYTES_PER_ELEMENT", "Estimate", "Workload", "attainable_flops", "attention",
    "bytes_per_element", "dot", "elementwise", "eng", "estimate", "get_language", "mbu", "mfu", "get_accelerator",
    "list_accelerators", "load_accelerator", "matmul", "set_language", "units", "vector_add",
]
