"""Chapter 05: LLM inference, prefill vs decode."""

import numpy as np

from .. import llm
from ..hardware import get_accelerator
from ..roofline import estimate
from .core import Question


def _kv_llama3_70b():
    return llm.get_model("llama-3-70b").kv_cache_bytes(16, 8192, "bf16") / 1e9


def _decode_latency_13b():
    return estimate(llm.decode_step("llama-2-13b", 1, 1024), "A100").lower * 1e3


def _critical_batch_70b_h200():
    """Smallest batch at which Llama-2-70B's MLP down projection reaches the H200's bf16 ridge."""
    batches = np.arange(1, 2049)
    step = llm.decode_step("llama-2-70b", batches, 1)
    down = next(p for p in step.leaves() if p.name == "MLP down projection")
    return int(batches[np.argmax(down.intensity >= get_accelerator("H200").ridge_point("bf16"))])


def _max_batch_fp8():
    return llm.max_batch("llama-3-70b", "H200", 8192, weight_dtype="fp8", kv_dtype="bf16",
                         usable_fraction=llm.VLLM_GPU_MEMORY_UTILIZATION)


def _prefill_bound():
    return estimate(llm.prefill("llama-3-8b", 1, 4096), "A100").bound


QUESTIONS = [
    Question("05.kv_llama3_70b", "KV cache of Llama-3-70B for 16 sequences of 8,192 positions, bf16, in GB "
             "(1 GB = 1e9 bytes).", lambda: _kv_llama3_70b(), unit="GB",
             hint="2 (K and V) x layers x kv_heads x head_dim x positions x sequences x 2 bytes; GQA has 8 KV heads."),
    Question("05.decode_latency_13b", "Lower bound of one decode step (ms) of Llama-2-13B, batch 1, context 1,024, "
             "bf16, on an A100 80GB SXM4.", lambda: _decode_latency_13b(), unit="ms",
             hint="Almost all of it is reading the weights once: bytes / bandwidth."),
    Question("05.critical_batch_70b_h200", "Smallest batch at which Llama-2-70B's MLP down projection "
             "(bf16 weights, one token per sequence) reaches the H200's bf16 ridge point. Multi-step: write the "
             "intensity of [B, 28672] x [28672, 8192], then solve intensity >= ridge.",
             lambda: _critical_batch_70b_h200(), rtol=0.01, unit="sequences",
             hint="Intensity is about B for B much smaller than the matrix sides, but not exactly: keep every term."),
    Question("05.max_batch_fp8", "Largest batch of 8,192-position sequences Llama-3-70B can serve on one H200 "
             "(nvidia-smi reports 143,771 MiB) with fp8 weights and a bf16 KV cache, when the serving engine "
             "takes 90 % of that memory for weights + KV cache (vLLM's default).", lambda: _max_batch_fp8(),
             rtol=0.0, unit="sequences",
             hint="0.9 x 143,771 x 2^20 bytes, minus 1 byte per parameter, over the KV bytes of one sequence, "
                  "rounded down. A MiB is 2^20 bytes, not 1e6."),
    Question("05.prefill_bound", "Is prefill of a 4,096-token prompt of Llama-3-8B (batch 1) on an A100 "
             "compute-bound or memory-bound?", lambda: _prefill_bound(), kind="choice",
             choices=("compute", "memory"),
             hint="Each weight is used by 4,096 tokens in one pass."),
]
