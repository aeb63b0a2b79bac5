"""The roofline: workloads (FLOPs and bytes), the time bounds a chip's peaks give them, the one rule
for which bottleneck a measured kernel responds to, and (``roofline.symbolic``, loaded on first use: it imports
sympy) the derivations in sympy.
"""

from .bounds import Estimate, attainable_flops, bound_at, estimate, mbu, mfu
from .diagnosis import FLAT, MARGIN, RESPONDS, VERDICTS, classify_response, diagnose, response
from .workloads import Workload, attention, causal_pairs, dot, elementwise, matmul, vector_add


def __getattr__(name):
    # sympy is heavy: the derivations load only when asked for
    if name == "symbolic":
        import importlib

        return importlib.import_module(".symbolic", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "attainable_flops", "attention", "bound_at", "causal_pairs", "classify_response", "diagnose", "dot",
    "elementwise", "Estimate", "estimate", "FLAT", "MARGIN", "matmul", "mbu", "mfu", "RESPONDS", "response",
    "vector_add", "VERDICTS", "Workload"
]
