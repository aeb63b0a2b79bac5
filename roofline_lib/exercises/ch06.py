"""Chapter 06: optimisations as moves on the roofline."""

from .. import llm
from ..roofline.bounds import estimate
from .core import Question


def _int4_speedup():
    base = estimate(llm.decode_step("llama-2-7b", 1, 4096), "A100").lower
    int4 = estimate(llm.decode_step("llama-2-7b", 1, 4096, weight_dtype="int4"), "A100").lower
    return base / int4


def _fusion_saving_8b():
    unfused = llm.gated_mlp_chain(4096, 4096, 14336, "bf16")
    fused = llm.gated_mlp_chain(4096, 4096, 14336, "bf16", fused=True)
    return (unfused.bytes - fused.bytes) / 1e6


def _flash_decoding_13b():
    splits = llm.flash_decoding_splits("llama-2-13b", "H100", 1, 32768)
    return (llm.decode_attention_time("llama-2-13b", "H100", 1, 32768)
            / llm.decode_attention_time("llama-2-13b", "H100", 1, 32768, splits=splits))


def _fp8_kv_speedup():
    base = estimate(llm.decode_step("llama-3-8b", 8, 32768), "H100").lower
    return base / estimate(llm.decode_step("llama-3-8b", 8, 32768, kv_dtype="fp8"), "H100").lower


def _one_change_under_4ms():
    """The one change (weights or KV cache) that brings the batch-8, 8K-context step under 4 ms on an H100."""
    changes = {"int8 weights": dict(weight_dtype="int8"), "int4 weights": dict(weight_dtype="int4"),
               "fp8 kv": dict(kv_dtype="fp8")}
    ok = [k for k, kw in changes.items()
          if estimate(llm.decode_step("llama-3-8b", 8, 8192, **kw), "H100").lower <= 4e-3]
    return ok[0] if len(ok) == 1 else "none"


def _fp8_on_a100():
    from ..specs.hardware import get_accelerator

    return "no fp8 peak" if "fp8" not in get_accelerator("A100").peak_flops_by_dtype else "nothing"


QUESTIONS = [
    Question("06.int4_speedup", "Speed-up of the decode-step lower bound of Llama-2-7B (batch 1, context 4,096) "
             "on an A100 when weights go from bf16 to int4 (compute stays bf16): the lower bound's gain, what a "
             "kernel streaming its bytes at full bandwidth would give.", lambda: _int4_speedup(),
             unit="x", hints=("Weights dominate the bytes, but the KV cache and activations do not shrink.",
                              "rl.estimate(rl.decode_step('llama-2-7b', 1, 4096), 'A100').lower over the same "
                              "with weight_dtype='int4'.")),
    Question("06.fused_mlp_bytes_8b", "Bytes (MB, 1e6) that fusing Llama-3-8B's gated MLP (hidden 4,096, "
             "intermediate 14,336) saves for 4,096 tokens in bf16: count all the traffic the unfused chain "
             "adds (x read once more, and the intermediates of gate, up, SiLU, multiply and down), unfused vs "
             "fused.", lambda: _fusion_saving_8b(), unit="MB",
             hints=("Unfused, x is read twice and four [tokens, 14336] arrays cross memory 8 times; fused, only P "
                    "is written and read.",
                    "2 bytes x (tokens x 4096 for the extra read of x + 6 x tokens x 14336 for the crossings saved), "
                    "/ 1e6 for MB.")),
    Question("06.flash_decoding_13b", "Llama-2-13B (40 heads), batch 1, context 32,768 on an H100 SXM (132 SMs): by "
             "how much does FlashDecoding's KV split speed up one layer's decode attention in the occupancy model? "
             "Multi-step: blocks without split, splits needed, SM utilisation of each.",
             lambda: _flash_decoding_13b(), unit="x",
             hints=("Utilisation = blocks / (SMs x waves); take the fewest splits within 85 % of the best utilisation; "
                    "the bytes are the same in both cases.",
                    "blocks = batch x heads; util(b) = b / (132 x ceil(b / 132)); speed-up = util(blocks x splits) / "
                    "util(blocks).")),
    Question("06.predict_fp8_kv_32k", "Predict, then check: Llama-3-8B decode at batch 8, context 32,768 on an H100: "
             "the lower bound's speed-up from an fp8 KV cache alone (bf16 weights). Within 5 % counts.",
             lambda: _fp8_kv_speedup(), rtol=0.05, unit="x",
             hints=("Weights ~15 GB, KV cache 8 x 32,768 x 131 kB ~ 34 GB in bf16; fp8 halves only the second.",
                    "(weights + kv) / (weights + kv / 2), weights = 2 x (8.03e9 - 128256 x 4096) bytes, "
                    "kv = 8 x 32768 x kv_cache_bytes(1, 1).")),
    Question("06.design_one_change_4ms", "Design: Llama-3-8B decode, batch 8, context 8,192 on an H100 must take at "
             "most 4 ms per step (lower bound). Which ONE change does it: 'int8 weights', 'int4 weights', 'fp8 kv' or "
             "'none'?", lambda: _one_change_under_4ms(), kind="choice",
             choices=("int8 weights", "int4 weights", "fp8 kv", "none"),
             hints=("the step is memory-bound: add up the weight bytes and the KV-cache bytes under each change.",
                    "rl.estimate(rl.decode_step('llama-3-8b', 8, 8192, weight_dtype=... or kv_dtype='fp8'), "
                    "'H100').lower <= 4e-3 for each."),
             why={"int8 weights": "int8 saves 7.5 GB of weights; the 8.6 GB of KV cache stay: about 4.8 ms.",
                       "fp8 kv": "fp8 halves the 8.6 GB of KV cache, but 15 GB of bf16 weights still take 4.5 ms "
                                 "alone.",
                       "none": "int4 weights are 3.8 GB instead of 15 GB: count the step again."}),
    Question("06.explain_int4_gap", "Explain: gpt-fast's int4 Llama-2-7B moves under a third of the bf16 "
             "weight bytes (a quarter, plus its group-32 scales and zero points) but runs only 1.88x faster. "
             "The main reason: 'dequantisation', 'kv cache', 'compute-bound' or 'bandwidth'?",
             lambda: "dequantisation", kind="choice",
             choices=("dequantisation", "kv cache", "compute-bound", "bandwidth"),
             aliases={"dequantization": "dequantisation"},
             hints=("a third of the bytes but only 1.88x faster: what work does an int4 weight need that a bf16 one "
                    "does not?",
                    "before the bf16 multiply each 4-bit weight is unpacked and given its zero point and group scale: "
                    "on which cores, at what cost?"),
             why={"kv cache": "at batch 1 and ~100 positions the KV cache is a few MB against 4.1 GB of int4 "
                                   "weights with their scales and zero points.",
                       "compute-bound": "at batch 1 a weight does 2 FLOPs: the tensor cores are far from their roof; "
                                        "the extra work is on the ordinary cores.",
                       "bandwidth": "the A100's bandwidth does not depend on the dtype read; the kernel uses less "
                                    "of it (MBU 33 %)."}),
    Question("06.mistake_fp8_a100", "Find the mistake: 'W8A8 in fp8 halves a compute-bound prefill on an H100, so it "
             "will halve our 4,096-token prefill on our A100s too.' What is wrong: 'no fp8 peak' (the A100 has no "
             "fp8 tensor cores), 'memory-bound' (prefill is memory-bound), 'weights only' (W8A8 leaves activations "
             "in bf16) or 'nothing'?", lambda: _fp8_on_a100(), kind="choice",
             choices=("no fp8 peak", "memory-bound", "weights only", "nothing"),
             hints=("a compute-bound prefill speeds up only if the new dtype has a higher peak on the chip it runs on.",
                    "compare the keys of rl.get_accelerator('A100').peak_flops_by_dtype with the H100's."),
             why={"memory-bound": "a 4,096-token prefill is compute-bound on every chip (chapter 05).",
                       "weights only": "W8A8 quantises weights and activations: that is what lets the tensor cores "
                                       "run fp8.",
                       "nothing": "look up the A100's peaks: rl.get_accelerator('A100').peak_flops_by_dtype."}),
]


__all__ = ["QUESTIONS"]
