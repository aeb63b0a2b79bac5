"""Chapter 04: arithmetic intensity of attention (prefill, decode, MHA / GQA / MQA)."""

import roofline_lib as rl

from .core import Question

# Llama-3-8B attention: 32 query heads, 8 kv heads (G = 4), head dim 128
HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128


def _llama3_8b(batch, q_len, kv_len, causal=False):
    return rl.attention(batch, HEADS, KV_HEADS, q_len, kv_len, HEAD_DIM, causal=causal)


QUESTIONS = [
    Question(
        id="04.decode_llama3_8b",
        prompt="Decode attention of Llama-3-8B (H = 32, H_kv = 8), one new token against 8192 cached ones, bf16: "
               "intensity in FLOP per byte (erratum 6).",
        expected=lambda: _llama3_8b(1, 1, 8192).intensity,
        unit="FLOP/B",
        hint="T/S -> 0 leaves 2G FLOP per element, and a bf16 element is 2 bytes.",
    ),
    Question(
        id="04.prefill_per_element_g8",
        prompt="Prefill (T = S = 1024) with G = 8 (H = 64, H_kv = 8): intensity in FLOP per ELEMENT moved (erratum 5).",
        expected=lambda: rl.attention(1, 64, 8, 1024, 1024, 128).intensity * rl.bytes_per_element("bf16"),
        unit="FLOP/element",
        hint="2GT / (G + 1), not 2T / (1 + G).",
    ),
    Question(
        id="04.decode_bound",
        prompt="Llama-3-8B decode attention at batch 256 and a 128k context: 'compute'- or 'memory'-bound on the "
               "H200 SXM?",
        expected=lambda: rl.estimate(_llama3_8b(256, 1, 131072), "H200").bound,
        kind="choice",
        choices=("compute", "memory"),
        hint="does the batch appear in the intensity of attention at all?",
    ),
    Question(
        id="04.batch_ratio",
        prompt="Intensity of Llama-3-8B decode attention at batch 64 divided by its intensity at batch 1 (S = 4096).",
        expected=lambda: _llama3_8b(64, 1, 4096).intensity / _llama3_8b(1, 1, 4096).intensity,
        unit="x",
        hint="each sequence reads its own K and V: batch multiplies FLOPs and bytes alike.",
    ),
    Question(
        id="04.critical_T_h200",
        prompt="Multi-step: derive prefill intensity per bf16 byte in terms of G and T, solve it = ridge for T, "
               "and evaluate for G = 4 on the H200 SXM (no causal mask). What prompt length crosses the ridge?",
        expected=lambda: float(rl.symbolic.critical_prefill_T(2).subs(
            {rl.symbolic.G: 4, rl.symbolic.R: rl.get_accelerator("H200").ridge_point("bf16")})),
        unit="tokens",
        hint="GT / (G + 1) = R gives T = R (G + 1) / G.",
    ),
    Question(
        id="04.decode_time_h200",
        prompt="Multi-step: time (lower bound) of one Llama-3-8B layer's decode attention at batch 16, context 8192, "
               "bf16, on the H200 SXM. Count the bytes of K and V first.",
        expected=lambda: float(rl.estimate(_llama3_8b(16, 1, 8192), "H200").lower),
        unit="s",
        hint="it is memory-bound: bytes / bandwidth.",
    ),
]
