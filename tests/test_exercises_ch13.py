"""Chapter 13's questions (training on many chips) against hand computations: B200 dense bf16 2.25 PFLOP/s and
H100 SXM5 989.4 TFLOP/s (datasheets), a 400 Gb/s NIC = 50 GB/s, Llama-3.1-70B's 70,553,706,496 parameters (its
config.json: h 8192, 80 layers, 64 / 8 heads of 128, MLP 28,672, vocabulary 128,256, untied)."""

from exercise_hand import chapter_tests

from roofline_lib.exercises import check

W70 = 80 * (8192 * 64 * 128 + 2 * 8192 * 8 * 128 + 64 * 128 * 8192 + 3 * 8192 * 28672) + 128256 * 8192
P70 = W70 + 128256 * 8192 + 80 * 2 * 8192 + 8192

HAND = {
    "13.critical_tokens_b200": 2250e12 / 50e9 * 2 * 2 / 6,     # F / W x (2 passes x 2 bytes, bf16) / 6
    "13.zero3_bytes_70b": 3 * 63 / 64 * 2 * P70,                # AG, AG, RS of bf16, (n - 1)/n each
    "13.zero2_states_70b": (2 + (2 + 12) / 64) * P70,
    "13.bubble_interleaved": 15 / (4 * 32),
    "13.mistake_tokens_tp": "the divisor",
    "13.dp_binding_8b": "data parallel",                        # test_dp_binding_by_hand
    "13.design_fewest_stages": "8",                             # test_fewest_stages_by_hand
    # GPT-3 175B (h 12288, 96 layers, vocabulary 50,257, 2,048 learned positions, biases, tied): 12 h^2 + 13 h
    # per layer; Table 2's reading at 1,536 GPUs: the traffic, 3 x 1535/1536 x 2 bytes x N at 25 GB/s, is longer
    # than one recomputed sequence, 96 s l h^2 (1 + s/6h + V/16lh) FLOPs (Narayanan et al.) at 46 % of 312 TFLOP/s
    "13.predict_zero3_nic": max(
        3 * 1535 / 1536 * 2 * (96 * (12 * 12288**2 + 13 * 12288) + (50257 + 2048 + 2) * 12288) / 25e9,
        96 * 2048 * 96 * 12288**2 * (1 + 2048 / (6 * 12288) + 50257 / (16 * 96 * 12288)) / (0.46 * 312e12),
    ),
    # Llama-3.1-8B: 8,030,261,248 parameters (config.json: h 4096, 32 layers, 32 / 8 heads of 128, MLP 14,336,
    # vocabulary 128,256, untied); fp32 gradients all-reduced over 64: 2 x 63/64 x 4 bytes each
    "13.mistake_dp_bytes_8b": 2 * 63 / 64 * 4 * 8_030_261_248,
    # dp = 1024 / 64 = 16, 1024 / 16 = 64 micro-batches; each crosses 4 boundaries both ways: 64 x 2 x 4 x
    # 8192 x 8192 x 2 / 8 bytes
    "13.predict_sends_interleaved": 64 * 2 * 4 * 8192 * 8192 * 2 / 8,
    "13.predict_tp_latency_8b": 32 * 4 * (8.4 + 14 * 3.4) * 1e-6,  # NCCL tuning.cc, Simple ring over NVLink
    "13.predict_tp16_nic": 15 / 16 * 8192 * 4096 * 2 / 50e9,  # s b h 2 bytes, ring of 16, one NIC per GPU
}

test_hand_values, test_every_question_has_a_hand_value = chapter_tests("13", HAND)


def test_dp_binding_by_hand():
    # Llama-3-8B (8,030,261,248 parameters), 512 tokens per chip: compute at the roof is at least
    # 6 x 7.5e9 x 512 / 989.4e12 = 23 ms (the small ops add a few more); the gradients' all-reduce over the
    # 8 GPUs' NVLink bus (a ring leaves each node through all 8 NICs, 400 GB/s, capped by the 370.8 GB/s bus), fp32:
    # 2 x 1023/1024 x 4 x 8.03e9 / 370.8e9 = 173 ms, of which the last backward (2/3 of the compute) hides < 20 ms
    compute = 6 * 7.5e9 * 512 / 989.4e12
    allreduce = 2 * 1023 / 1024 * 4 * 8_030_261_248 / 370.8e9
    assert allreduce - 2 / 3 * 1.2 * compute > 1.2 * compute
    assert check("13.dp_binding_8b", "data parallel") and not check("13.dp_binding_8b", "compute")


def test_fewest_stages_by_hand():
    # TP 8, ZeRO-1 over dp = 16384 / (8 p), Megatron-LM's inventory: bf16 weights 2 and the fp32 gradient buffer 4
    # bytes per parameter over 8 chips of the first stage (ceil(126 / p) layers and the 128256 x 16384 embedding),
    # the optimizer's 12 / dp. Full recomputation keeps each layer's input
    # (2 s h / 8 with sequence parallelism) for the layers in flight, plus one layer's whole activations while it
    # is rebuilt; the last stage's fp32 loss (10 bytes per logit / 8) is smaller than them; the MLP backward's two
    # bf16 intermediates; the allocator reserves 10 % more; the CUDA context and NCCL 1.5 GiB beside it.
    # p = 4: 6 x 104.1e9 / 8 = 78.1 GB before anything else: over 81,559 MiB with the rest; p = 8: 39.8 GB
    n = 405_853_388_800
    capacity = 81559 * 2**20
    s, h = 8192, 16384
    layer_input = 2 * s * h / 8
    one_layer = (8 * s * h + 2 * s * (128 + 16) * 128 + 2 * s * 128 * 128 + 4 * 128 * s + 6 * s * 53248) / 8
    temporaries = 2 * 2 * s * 53248 / 8
    for p, fits in ((4, False), (8, True)):
        dp = 16384 // (8 * p)
        table = 128256 * h
        states = (2 + 4 + 12 / dp) * ((n - 2 * table) * -(-126 // p) / 126 + table) / 8
        in_flight = min(p, 2048 // dp) * -(-126 // p)
        allocated = states + max(in_flight * layer_input + one_layer, 10 * s * 128256 / 8) + temporaries
        assert (allocated * 1.1 + 1.5 * 2**30 < capacity) == fits
    assert check("13.design_fewest_stages", "8") and not check("13.design_fewest_stages", "4")
