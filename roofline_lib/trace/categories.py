"""What a GPU kernel is, from its name: GEMM, attention, communication, elementwise/normalisation, memory
copies, other. Names are all a trace has; the patterns below are the libraries' naming habits, matched
case-insensitively, first category first (an attention kernel built on CUTLASS names "cutlass" too, so
attention is tried before GEMM; a collective is tried before everything).
"""

import functools
import re

COMMUNICATION, ATTENTION, GEMM, ELEMENTWISE, MEMORY, OTHER = (
    "communication", "attention", "GEMM", "elementwise/normalisation", "memory copies", "other")
CATEGORIES = (GEMM, ATTENTION, COMMUNICATION, ELEMENTWISE, MEMORY, OTHER)

PATTERNS = {
    # NCCL/RCCL kernels, PyTorch's and vLLM's own all-reduces (multimem on NVLink SHARP, custom one-shot)
    COMMUNICATION: (r"nccl", r"rccl", r"all_?reduce", r"all_?gather", r"reduce_?scatter", r"all_?to_?all",
                    r"multimem", r"cross_device_reduce", r"sendrecv"),
    ATTENTION: (r"flash", r"fmha", r"attention", r"attn", r"sdpa", r"mha_"),
    # cuBLAS (sm90_xmma_gemm, volta_sgemm, nvjet), CUTLASS, hipBLASLt/Tensile (Cijk_), Triton matmuls,
    # cuDNN's implicit-GEMM convolutions
    GEMM: (r"gemm", r"nvjet", r"cutlass", r"^cijk_", r"matmul", r"xmma", r"wgmma", r"_mm_", r"convolve", r"convolution",
           r"fprop", r"dgrad", r"wgrad"),
    ELEMENTWISE: (r"elementwise", r"vectorized", r"unrolled", r"norm", r"softmax", r"reduce", r"act_and_mul",
                  r"silu", r"gelu", r"rotary", r"fill", r"copy", r"cat", r"index", r"scatter", r"gather", r"quant",
                  r"bn_", r"sigmoid", r"relu", r"add", r"mul"),
}
_COMPILED = {c: re.compile("|".join(p), re.IGNORECASE) for c, p in PATTERNS.items()}


@functools.lru_cache(maxsize=2**16)  # a trace names a few hundred kernels, each thousands of times, some 2 kB long
def category(name, kind="kernel"):
    """The category of a GPU activity: ``kind`` "memcpy" or "memset" is a memory copy whatever its name;
    a kernel goes by its name's first matching pattern (``PATTERNS``), else "other".

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    if kind in ("memcpy", "memset"):
        return MEMORY
    for cat, pattern in _COMPILED.items():
        if pattern.search(name):
            return cat
    return OTHER


__all__ = ["ATTENTION", "CATEGORIES", "COMMUNICATION", "ELEMENTWISE", "GEMM", "MEMORY", "OTHER", "PATTERNS",
           "category"]
