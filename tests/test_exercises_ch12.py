"""Chapter 12's questions (one training step) against hand computations from the model cards' config.json and
the datasheets: Llama-3-8B h 4096, 32 layers, 32 query / 8 KV heads of 128, MLP 14,336, vocabulary 128,256
(untied); GPT-3 175B h 12,288, 96 layers, 96 heads; A100 bf16 312 TFLOP/s dense, H100 SXM5 989.4."""

from exercise_hand import chapter_tests

from roofline_lib.exercises import check

H, L, HEADS, KV, D, FFN, V = 4096, 32, 32, 8, 128, 14336, 128256
WEIGHTS_8B = L * (H * HEADS * D + 2 * H * KV * D + HEADS * D * H + 3 * H * FFN) + V * H  # q, k, v, o, MLP; LM head
PARAMS_8B = WEIGHTS_8B + V * H + L * 2 * H + H  # + the embedding and the norms: 8,030,261,248
LLAMA2_7B = 32 * (4 * 4096**2 + 3 * 4096 * 11008) + 32000 * 4096
S = 2048  # GPT-3
# Qwen3-8B: h 4096, 36 layers, 32 query / 8 KV heads of 128, MLP 12,288, vocabulary 151,936 (untied)
QWEN3 = 36 * (4096 * 32 * 128 + 2 * 4096 * 8 * 128 + 32 * 128 * 4096 + 3 * 4096 * 12288) + 151936 * 4096
# Llama-3.1-70B: h 8192, 80 layers, 64 query / 8 KV heads of 128, MLP 28,672, vocabulary 128,256 (untied)
W70 = 80 * (8192 * 64 * 128 + 2 * 8192 * 8 * 128 + 64 * 128 * 8192 + 3 * 8192 * 28672) + 128256 * 8192
P70 = W70 + 128256 * 8192 + 80 * 2 * 8192 + 8192

HAND = {
    "12.flops_per_token_qwen3": 6 * QWEN3 + 6 * 36 * 32 * 128 * 4096,
    "12.attention_share_32k": 6 * 80 * 64 * 128 * 32768 / (6 * W70 + 6 * 80 * 64 * 128 * 32768),
    "12.model_states_70b": 18 * P70,
    "12.smallest_zero_stage": "1",  # test_design_question_by_hand
    # layers' weights 96 x 12 h^2 (+ the LM head 50257 h, not recomputed); attention 12 x 96 x h x s per token
    "12.hfu_over_mfu_full": (6 * (96 * 12 * 12288**2 + 50257 * 12288) + 12 * 96 * 12288 * S + 2 * 96 * 12 * 12288**2
                             + 4 * 96 * 12288 * S) / (6 * (96 * 12 * 12288**2 + 50257 * 12288) + 12 * 96 * 12288 * S),
    "12.gpt3_activations_tp8": S * 12288 * (10 + 24 / 8 + 5 * 96 * S / (12288 * 8)),
    "12.gpu_hours_7b": 2e12 * (6 * LLAMA2_7B + 6 * 32 * 32 * 128 * 4096) / (0.4 * 312e12) / 3600,
    "12.peak_slip": "the peak",
    "12.explain_h100_mfu": "ridge",
}

test_hand_values, test_every_question_has_a_hand_value = chapter_tests("12", HAND)


def test_design_question_by_hand():
    # 8 x H100 SXM5, 81,559 MiB each. Model states 16 x 8.03e9 = 128.5 GB unsharded; ZeRO-1 over 8: 2 + 2 + 12 / 8
    # = 5.5 bytes per parameter = 44.2 GB. Activations of one 4,096-token sequence, FlashAttention: per layer
    # 2sbh x 4 (norms, block inputs) + Q, K, V, O 2sb (32 + 8 + 8 + 32) 128 + log-sum-exp 4 x 32 s + MLP input and
    # 3 x 2 s i: 0.571 GB x 32 layers = 18.3 GB; fp32 logits 4 s V = 2.1 GB: 64.5 GB, 21 GB under the chip
    capacity = 81559 * 2**20
    s = 4096
    per_layer = 8 * s * H + 2 * s * (HEADS + 2 * KV + HEADS) * D + 4 * HEADS * s + 6 * s * FFN
    activations = L * per_layer + 4 * s * V
    assert 16 * PARAMS_8B + activations > capacity
    assert (2 + 2 + 12 / 8) * PARAMS_8B + activations < capacity - 20e9
    assert check("12.smallest_zero_stage", "1") and not check("12.smallest_zero_stage", "0")
