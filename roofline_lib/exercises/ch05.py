"""Chapter 05: LLM inference, prefill vs decode."""

import numpy as np

from .. import llm
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .core import Question


def _kv_llama3_70b():
    return get_model("llama-3-70b").kv_cache_bytes(16, 8192, "bf16") / 1e9


def _critical_batch_8b_a100():
    """Smallest batch at which Llama-3-8B's MLP down projection reaches the A100's bf16 ridge."""
    batches = np.arange(1, 2049)
    step = llm.decode_step("llama-3-8b", batches, 1)
    down = next(p for p in step.leaves() if p.name == "MLP down projection")
    return int(batches[np.argmax(down.intensity >= get_accelerator("A100").ridge_point("bf16"))])


def _step_batch64_ms():
    return estimate(llm.decode_step("llama-3-8b", 64, 4096), "H200").lower * 1e3


def _dtype_for_32k():
    """The widest weight dtype with which 8 sequences of 32,768 positions of Llama-3-70B fit vLLM's share."""
    for dtype in ("bf16", "fp8", "int4"):
        if llm.max_batch("llama-3-70b", "H200", 32768, weight_dtype=dtype,
                         usable_fraction=llm.VLLM_GPU_MEMORY_UTILIZATION,
                         reserved_bytes=llm.CUDA_CONTEXT_BYTES) >= 8:
            return dtype
    return "none"


def _prefill_turns_memory_bound():
    """Which one change turns the compute-bound prefill of 4,096 tokens (Llama-3-8B, A100) memory-bound."""
    changes = {"shorter prompt": (llm.prefill("llama-3-8b", 1, 64), "A100"),
               "int4 weights": (llm.prefill("llama-3-8b", 1, 4096, weight_dtype="int4"), "A100"),
               "more bandwidth": (llm.prefill("llama-3-8b", 1, 4096), "H200"),
               "larger batch": (llm.prefill("llama-3-8b", 8, 4096), "A100")}
    memory = [k for k, (w, chip) in changes.items() if estimate(w, chip).bound == "memory"]
    return memory[0] if len(memory) == 1 else "none"


def _kv_slip():
    """The step of the colleague's KV sum that is wrong: the one whose correction gives the right bytes."""
    m = get_model("llama-3-70b")
    right = m.kv_cache_bytes(16, 8192, "bf16")
    per_token = {"kv heads": 2 * m.num_layers * m.num_kv_heads * m.head_dim * 2,   # the slip corrected
                 "k and v": 1 * m.num_layers * m.num_heads * m.head_dim * 2,
                 "bytes": 2 * m.num_layers * m.num_heads * m.head_dim * 1}
    return next(k for k, b in per_token.items() if b * 16 * 8192 == right)


def _max_batch_fp8():
    return llm.max_batch("llama-3-70b", "H200", 8192, weight_dtype="fp8", kv_dtype="bf16",
                         usable_fraction=llm.VLLM_GPU_MEMORY_UTILIZATION)


QUESTIONS = [
    Question("05.kv_llama3_70b", "KV cache of Llama-3-70B for 16 sequences of 8,192 positions, bf16, in GB "
             "(1 GB = 1e9 bytes).", lambda: _kv_llama3_70b(), unit="GB",
             hints=(
                 "2 (K and V) x layers x kv_heads x head_dim x positions x sequences x 2 bytes; GQA has 8 KV heads.",
                 "rl.get_model('llama-3-70b').kv_cache_bytes(16, 8192, 'bf16') gives the bytes; divide by 1e9 "
                 "for GB.")),
    Question("05.critical_batch_8b_a100", "Smallest batch at which Llama-3-8B's MLP down projection "
             "(bf16 weights, one token per sequence) reaches the A100's bf16 ridge point. Multi-step: write the "
             "intensity of [b, 14336] x [14336, 4096], then solve intensity >= ridge.",
             lambda: _critical_batch_8b_a100(), rtol=0.01, unit="sequences", rounding="up",
             hints=(
                 "Intensity is about b for b much smaller than the matrix sides, but not exactly: keep every term.",
                 "bKN / (bK + KN + bN) = R gives b* = R K N / (K N - R (K + N)), R the A100's bf16 ridge: round up.")),
    Question("05.predict_step_batch64", "Predict, then check: the lower bound (ms) of one decode step of Llama-3-8B "
             "at batch 64, context 4,096, bf16, on an H200 (batch 1 takes 3.24 ms). Within 10 % counts.",
             lambda: _step_batch64_ms(), rtol=0.10, unit="ms",
             hints=("The weights are read once for all 64 sequences; each sequence reads its own KV cache "
                    "(131 kB per position).",
                    "(2 x (8.03e9 - 128256 x 4096) weight bytes + 64 x 4096 x kv_cache_bytes(1, 1)) / 4.8e12 s, "
                    "x 1e3 for ms.")),
    Question("05.design_dtype_32k", "Design: the widest weight dtype ('bf16', 'fp8', 'int4' or 'none') with which "
             "one H200 serves Llama-3-70B to 8 sequences of 32,768 positions (bf16 KV cache) inside vLLM's default "
             "share (0.9 of the memory, less the CUDA context).", lambda: _dtype_for_32k(), kind="choice",
             choices=("bf16", "fp8", "int4", "none"),
             hints=("the weights and 8 KV caches of 32,768 positions must share the usable memory: how big is each?",
                    "llm.max_batch('llama-3-70b', 'H200', 32768, weight_dtype=d, usable_fraction=0.9, "
                    "reserved_bytes=llm.CUDA_CONTEXT_BYTES) >= 8, widest d first."),
             why={"bf16": "bf16 weights alone (141e9 bytes) exceed 0.9 x 150.75e9 bytes: no room for a "
                               "KV cache.",
                       "fp8": "fp8 weights leave room for 6 sequences of 32,768 positions (the table above), not 8.",
                       "none": "int4 weights are 35e9 bytes; count what that leaves for 8 KV caches of 10.7e9 bytes."}),
    Question("05.explain_prefill_memory", "Explain: prefill of 4,096 tokens of Llama-3-8B on an A100 is "
             "compute-bound. Which one change makes a prefill memory-bound: 'shorter prompt' (64 tokens), "
             "'int4 weights', 'more bandwidth' (an H200) or 'larger batch' (8 prompts)?",
             lambda: _prefill_turns_memory_bound(), kind="choice",
             choices=("shorter prompt", "int4 weights", "more bandwidth", "larger batch"),
             hints=("reason with the intensity: what sets it in a prefill, and which change moves it below the ridge?",
                    "each weight serves batch x prompt tokens: intensity ~ b T FLOP/B against the ridge; "
                    "rl.estimate(rl.prefill(model, b, T), chip).bound."),
             why={"int4 weights": "fewer weight bytes for the same FLOPs raise the intensity: more compute-bound.",
                       "more bandwidth": "more bandwidth lowers the ridge point (206 on an H200): more compute-bound.",
                       "larger batch": "8 prompts use each weight 8 x 4,096 times: the intensity rises."}),
    Question("05.mistake_kv_heads", "Find the mistake: 'KV cache of Llama-3-70B per token = 2 (K and V) x 80 "
             "layers x 64 heads x 128 x 2 bytes = 2.6 MB, so 16 sequences of 8,192 positions need 344 GB.' Which "
             "factor is wrong: 'k and v', 'kv heads' or 'bytes'?", lambda: _kv_slip(), kind="choice",
             choices=("k and v", "kv heads", "bytes"),
             hints=("check each factor of the product against the model's config, rl.get_model('llama-3-70b').",
                    "K and V are cached per KV head: compare 64 with num_heads and num_kv_heads (GQA); "
                    "kv_cache_bytes(16, 8192) checks the total."),
             why={"k and v": "keys and values are both cached: the factor 2 is right.",
                       "bytes": "bf16 is 2 bytes per element: that factor is right."}),
    Question("05.max_batch_fp8", "Largest batch of 8,192-position sequences Llama-3-70B can serve on one H200 "
             "(nvidia-smi reports 143,771 MiB) with fp8 weights and a bf16 KV cache, when the serving engine "
             "takes 90 % of that memory for weights + KV cache (vLLM's default).", lambda: _max_batch_fp8(),
             rtol=0.0, unit="sequences", rounding="down",
             hints=("the engine's 90 % must hold the fp8 weights once, then one KV cache per sequence; mind the MiB.",
                    "0.9 x 143,771 x 2^20 bytes, minus 1 byte per parameter, over the KV bytes of one sequence, "
                    "rounded down. A MiB is 2^20 bytes, not 1e6.")),
]


__all__ = ["QUESTIONS"]
