"""Chapter 06: optimisations as moves on the roofline."""

from .. import llm
from ..roofline import estimate
from .core import Question


def _int4_speedup():
    base = estimate(llm.decode_step("llama-2-7b", 1, 2048), "A100").lower
    int4 = estimate(llm.decode_step("llama-2-7b", 1, 2048, weight_dtype="int4"), "A100").lower
    return base / int4


def _fusion_saving():
    unfused = llm.gated_mlp_chain(2048, 4096, 11008, "bf16")
    fused = llm.gated_mlp_chain(2048, 4096, 11008, "bf16", fused=True)
    return (unfused.bytes - fused.bytes) / 1e6


def _flash_decoding():
    splits = llm.flash_decoding_splits("llama-2-7b", "H100", 1, 32768)
    return (llm.decode_attention_time("llama-2-7b", "H100", 1, 32768)
            / llm.decode_attention_time("llama-2-7b", "H100", 1, 32768, splits=splits))


def _h200_vs_h100():
    step = llm.decode_step("llama-3-8b", 32, 4096)
    return estimate(step, "H100").lower / estimate(step, "H200").lower


def _prefill_int4():
    base = estimate(llm.prefill("llama-3-8b", 1, 4096), "H100").lower
    int4 = estimate(llm.prefill("llama-3-8b", 1, 4096, weight_dtype="int4"), "H100").lower
    return base / int4


QUESTIONS = [
    Question("06.int4_speedup", "Speed-up of the decode-step lower bound of Llama-2-7B (batch 1, context 2,048) "
             "on an A100 when weights go from bf16 to int4 (compute stays bf16): the lower bound's gain, what a "
             "kernel streaming its bytes at full bandwidth would give.", lambda: _int4_speedup(),
             unit="x", hint="Weights dominate the bytes, but the KV cache and activations do not shrink."),
    Question("06.fused_mlp_bytes", "Bytes (MB, 1e6) that fusing Llama-2-7B's gated MLP saves for 2,048 tokens in "
             "bf16: count the intermediates of gate, up, SiLU, multiply and down, unfused vs fused.",
             lambda: _fusion_saving(), unit="MB",
             hint="Unfused, x is read twice and four [tokens, 11008] arrays cross memory 8 times; fused, only P "
                  "is written and read."),
    Question("06.flash_decoding", "Llama-2-7B, batch 1, context 32,768 on an H100 SXM (132 SMs): by how much does "
             "FlashDecoding's KV split speed up one layer's decode attention in the occupancy model? Multi-step: "
             "blocks without split, splits needed, SM utilisation of each.", lambda: _flash_decoding(), unit="x",
             hint="Utilisation = blocks / (SMs x waves); take the fewest splits within 85 % of the best utilisation; "
                  "the bytes are the same in both cases."),
    Question("06.h200_vs_h100", "Decode step of Llama-3-8B at batch 32, context 4,096: H100 SXM time / H200 time "
             "(lower bounds).", lambda: _h200_vs_h100(), unit="x",
             hint="Same compute, 4.8 vs 3.35 TB/s; the step is memory-bound on both."),
    Question("06.prefill_int4", "Prefill of a 4,096-token prompt of Llama-3-8B on an H100: speed-up of the lower "
             "bound from weight-only int4 (bf16 compute).", lambda: _prefill_int4(), unit="x",
             hint="Is prefill limited by bytes at all?"),
]
