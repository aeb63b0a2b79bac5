"""Chapter 04: arithmetic intensity of attention (prefill, decode, MHA / GQA / MQA)."""

import roofline_lib as rl

from .core import Question

# Llama-3-8B attention: 32 query heads, 8 kv heads (G = 4), head dim 128
HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128


def _llama3_8b(batch, q_len, kv_len, causal=False):
    return rl.attention(batch, HEADS, KV_HEADS, q_len, kv_len, HEAD_DIM, causal=causal)


def _tokens_per_step_to_ridge(chip="H200", context=8192):
    # the fewest tokens verified per step for which decode attention reaches the chip's bf16 ridge
    ridge = rl.get_accelerator(chip).ridge_point("bf16")
    t = 1
    while _llama3_8b(1, t, context).intensity < ridge:
        t += 1
    return t


def _why_batch_does_not_help():
    one, many = _llama3_8b(1, 1, 4096), _llama3_8b(64, 1, 4096)
    same_intensity = abs(many.intensity / one.intensity - 1) < 1e-12
    return "own" if same_intensity and abs(many.bytes / one.bytes - 64) < 1e-9 else "shared"


def _exp_share(head_dim, chip="H100"):
    hw = rl.get_accelerator(chip)
    attn = rl.attention(1, 32, 32, 4096, 4096, head_dim)
    return hw.exp_time(32 * 4096 * 4096) / rl.estimate(attn, hw).t_math


QUESTIONS = [
    Question(
        id="04.decode_time_h200",
        prompt="Multi-step: time (lower bound) of one Llama-3-8B layer's decode attention at batch 16, context 8192, "
               "bf16, on the H200 SXM. Count the bytes of K and V first.",
        expected=lambda: float(rl.estimate(_llama3_8b(16, 1, 8192), "H200").lower),
        unit="s",
        hints=("it is memory-bound: bytes / bandwidth.",
               "K and V: 2 x 16 x 8192 x 8 x 128 x 2 bytes, plus Q and O: 2 x 16 x 32 x 128 x 2; over the H200's "
               "mem_bandwidth."),
    ),
    Question(
        id="04.prefill_slip_g4",
        prompt="Find the mistake: for Llama-3-8B prefill (G = 4) at T = S = 512 a colleague takes the source's "
               "2T/(1+G) = 205 FLOP per element, halves it to 102 FLOP/B and calls it memory-bound on the H200. "
               "What is the right intensity, in FLOP per bf16 byte?",
        expected=lambda: _llama3_8b(1, 512, 512).intensity,
        unit="FLOP/B",
        hints=("two slips in one line of algebra? Redo 2T / (T/S + H_kv/H) at T = S yourself.",
               "2T / (1 + 1/G) = 2GT / (G + 1) per element; halve it for bf16 bytes: 4 x 512 / 5."),
    ),
    Question(
        id="04.spec_tokens_h200",
        prompt="Design: speculative decoding verifies T tokens per step. For Llama-3-8B decode attention (H = 32, "
               "H_kv = 8) at S = 8192 in bf16, what is the smallest T that makes it compute-bound on the H200 SXM?",
        expected=_tokens_per_step_to_ridge,
        unit="tokens",
        rounding="up",
        hints=("the decode limit is about T G FLOP per bf16 byte: how many tokens reach 206?",
               "solve 32 T 8192 / (32 T + 8 x 8192) = 989.4 / 4.8 for T and round up."),
    ),
    Question(
        id="04.why_batch",
        prompt="Explain: batching 64 sequences raises a weight matmul's intensity about 64-fold but leaves decode "
               "attention's unchanged. Why? 'own' (each sequence reads its own K and V), 'shared' (K and V are shared "
               "by the batch), 'softmax' (softmax limits it) or 'heads' (the heads do not batch)?",
        expected=_why_batch_does_not_help,
        kind="choice",
        choices=("own", "shared", "softmax", "heads"),
        aliases={"own kv": "own", "own k and v": "own", "kv cache": "own"},
        why={"shared": "if the batch shared K and V, batching would raise the intensity, as it does for weights.",
             "softmax": "softmax adds about 1 % of the FLOPs and no bytes worth counting: it does not decide.",
             "heads": "the group size G is fixed by the model; the batch multiplies FLOPs and bytes alike."},
        hints=(
            "what is read once for the whole batch in a weight matmul, and what is read per sequence in attention?",
            "write FLOPs and bytes at batch b: in attention both carry the factor b, so their ratio does not; a "
            "weight's bytes do not grow with b."),
    ),
    Question(
        id="04.predict_exp_d96",
        prompt="Predict: at head dim 96 in bf16 on the H100 SXM5, what fraction of the matmul time do attention's "
               "exponentials take (T_exp / T_matmul)?",
        expected=lambda: _exp_share(96),
        unit="",
        hints=("the table gives 1.00, 0.50 and 0.25 at head dims 64, 128 and 256: how does it scale with d?",
               "256 / (2 x (96 + 96))."),
    ),
]


__all__ = ["HEAD_DIM", "HEADS", "KV_HEADS", "QUESTIONS"]
