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
# Llama-3.1-70B's FP8 run at 8,192 tokens: the layers' weights at the H100 SXM5's dense FP8 1,978.9 TFLOP/s, the LM
# head and causal attention (6 L H d s per token) at its dense bf16 989.4
FP8_PART, BF16_PART = 6 * (W70 - 128256 * 8192), 6 * 128256 * 8192 + 6 * 80 * 64 * 128 * 8192
MIXED_70B = (FP8_PART + BF16_PART) / (FP8_PART / 1978.9e12 + BF16_PART / 989.4e12)
# Llama-3-8B layer, FlashAttention, 16-bit, per token: norms' and blocks' inputs 8 h, Q K V O 2 (32 + 8 + 8 + 32) 128,
# log-sum-exp 4 x 32, the MLP's SiLU input, up projection and product 6 i; forward 2 x the layer's weights + 2 H d s
KEPT_PER_TOKEN = 8 * 4096 + 2 * 80 * 128 + 4 * 32 + 6 * 14336  # 139,392 B
LAYER_8B = 2 * 4096 * 32 * 128 + 2 * 4096 * 8 * 128 + 3 * 4096 * 14336  # 218,103,808 weights
HIDES_AT = (KEPT_PER_TOKEN * 795e12 / 64e9 - 2 * LAYER_8B) / (2 * 32 * 128)  # 158,118 tokens
# 32,768 GPUs at Llama 3's 419 unexpected interruptions per 54 days on 16,384: a failure every M seconds; writes of
# 20 s. The share lost, C / tau + tau / 2M (convex in tau), minimised numerically by a ternary search over tau
M_32K = 54 * 24 * 3600 / 419 / 2  # 5,568 s


def _least_share_lost(c, m):
    lo, hi = 1.0, 1e6
    for _ in range(200):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if c / a + a / (2 * m) < c / b + b / (2 * m):
            hi = b
        else:
            lo = a
    return c / lo + lo / (2 * m)


CHECKPOINT_LOSS = _least_share_lost(20, M_32K)  # 0.0848, at tau = 472 s

HAND = {
    "12.flops_per_token_qwen3": 6 * QWEN3 + 6 * 36 * 32 * 128 * 4096,
    "12.attention_share_32k": 6 * 80 * 64 * 128 * 32768 / (6 * W70 + 6 * 80 * 64 * 128 * 32768),
    "12.model_states_70b": 18 * P70,
    "12.smallest_zero_stage": "2",  # test_design_question_by_hand
    # layers' weights 96 x 12 h^2 (+ the LM head 50257 h, not recomputed); attention 12 x 96 x h x s per token
    "12.hfu_over_mfu_full": (6 * (96 * 12 * 12288**2 + 50257 * 12288) + 12 * 96 * 12288 * S + 2 * 96 * 12 * 12288**2
                             + 4 * 96 * 12288 * S) / (6 * (96 * 12 * 12288**2 + 50257 * 12288) + 12 * 96 * 12288 * S),
    "12.gpt3_activations_tp8": S * 12288 * (10 + 24 / 8 + 5 * 96 * S / (12288 * 8)),
    "12.gpu_hours_7b": 2e12 * (6 * LLAMA2_7B + 6 * 32 * 32 * 128 * 4096) / (0.4 * 312e12) / 3600,
    "12.peak_slip": 324.5 / 989.4,  # 324.5 / 1.04 = 312: the A100's dense bf16 peak; the H100 SXM5's
    "12.fp8_mixed_mfu": 800e12 / MIXED_70B,
    "12.accumulation_405b": 16777216 / 8192 / (16384 / (8 * 16)),  # 2,048 sequences over 128 replicas: 16
    "12.offload_hides_at": HIDES_AT,
    "12.checkpoint_loss_32k": CHECKPOINT_LOSS,
}

test_hand_values, test_every_question_has_a_hand_value = chapter_tests("12", HAND)


def test_design_question_by_hand():
    # 8 x H100 SXM5, 81,559 MiB each; decided on the allocator's peak as Megatron-LM keeps the states (bf16 weights 2,
    # fp32 gradients 4, fp32 master, momentum and variance 12 bytes per parameter) plus 0.5 GiB of CUDA context and
    # 1 GiB of NCCL buffers. Activations of one 4,096-token sequence, FlashAttention: per layer 2sbh x 4 (norms,
    # block inputs) + Q, K, V, O 2sb (32 + 8 + 8 + 32) 128 + log-sum-exp 4 x 32 s + MLP input and 3 x 2 s i:
    # 0.571 GB x 32 layers = 18.3 GB; the loss's bf16 logits, fp32 copy and fp32 gradient 10 s V = 5.3 GB; the MLP
    # backward's two bf16 intermediates 4 s i; the allocator 10 % above what is allocated
    capacity = 81559 * 2**20
    s = 4096
    per_layer = 8 * s * H + 2 * s * (HEADS + 2 * KV + HEADS) * D + 4 * HEADS * s + 6 * s * FFN
    rest = L * per_layer + 10 * s * V + 4 * s * FFN
    outside = 1.5 * 2**30

    def peak(bytes_per_param):
        return 1.10 * (bytes_per_param * PARAMS_8B + rest) + outside

    assert peak(2 + 4 + 12) > capacity  # ZeRO-0: 18 bytes per parameter
    assert peak(2 + 4 + 12 / 8) > capacity + 6e9  # ZeRO-1: the fp32 gradients whole, 92 GB + 1.6 GB
    assert (2 + 4 + 12 / 8) * PARAMS_8B + rest + outside > capacity  # over even with no fragmentation
    assert peak(2 + 4 / 8 + 12 / 8) < capacity - 20e9  # ZeRO-2: 4 bytes per parameter, 63 GB
    assert check("12.smallest_zero_stage", "2") and not check("12.smallest_zero_stage", "1")
