"""第 06 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "06.int4_speedup": ("权重占了字节数的大头，但 KV 缓存和激活并不会变小。",
                        "rl.estimate(rl.decode_step('llama-2-7b', 1, 4096), 'A100').lower 除以 "
                        "weight_dtype='int4' 时的同一值。"),
    "06.fused_mlp_bytes_8b": ("不融合时，x 被读两次，四个 [tokens, 14336] 的数组共穿过内存 8 次；融合后只写、读 P。",
                              "2 字节 x（tokens x 4096，即多读一次 x + 6 x tokens x 14336，即省下的穿越），"
                              "/ 1e6 换算成 MB。"),
    "06.flash_decoding_13b": ("利用率 = 块数 / (SM 数 x 波数)；取利用率在最佳值 85 % 以内的最少切分数；"
                              "两种情况下字节数相同。",
                              "blocks = batch x heads；util(b) = b / (132 x ceil(b / 132))；"
                              "加速比 = util(blocks x splits) / util(blocks)。"),
    "06.predict_fp8_kv_32k": ("权重约 15 GB，bf16 下 KV 缓存为 8 x 32,768 x 131 kB ~ 34 GB；fp8 只让后者减半。",
                              "(weights + kv) / (weights + kv / 2)，其中 weights = 2 x (8.03e9 - 128256 x 4096) 字节，"
                              "kv = 8 x 32768 x kv_cache_bytes(1, 1)。"),
    "06.design_one_change_4ms": ("这一步是访存受限的：在每种改动下，把权重字节和 KV 缓存字节加起来。",
                                 "对每种改动检查 rl.estimate(rl.decode_step('llama-3-8b', 8, 8192, weight_dtype=... 或 "
                                 "kv_dtype='fp8'), 'H100').lower <= 4e-3。"),
    "06.explain_int4_gap": ("字节数只有三分之一，却只快了 1.88x：int4 权重需要做哪些 bf16 权重不用做的工作？",
                            "在 bf16 乘法之前，每个 4 位权重都要解包，并加上零点、乘上分组缩放因子："
                            "这些在哪种核心上做，代价多大？"),
    "06.mistake_fp8_a100": ("计算受限的预填充只有在新数据类型于所运行的芯片上有更高峰值时才会变快。",
                            "比较 rl.get_accelerator('A100').peak_flops_by_dtype 与 H100 的键。"),
}

WHY = {
    "06.design_one_change_4ms": {
        "int8 weights": "int8 省下 7.5 GB 权重；8.6 GB 的 KV 缓存还在：约 4.8 ms。",
        "fp8 kv": "fp8 让 8.6 GB 的 KV 缓存减半，但 15 GB 的 bf16 权重单独就要 4.5 ms。",
        "none": "int4 权重是 3.8 GB 而不是 15 GB：再算一遍这一步。",
    },
    "06.explain_int4_gap": {
        "kv cache": "批大小为 1、约 100 个位置时，KV 缓存只有几 MB，而 int4 权重连同缩放因子和零点有 4.1 GB。",
        "compute-bound": "批大小为 1 时每个权重只做 2 次 FLOP：张量核心远未到达屋顶；额外的工作在普通核心上。",
        "bandwidth": "A100 的带宽与所读的数据类型无关；是内核用到的带宽更少了（MBU 33 %）。",
    },
    "06.mistake_fp8_a100": {
        "memory-bound": "4,096 个 token 的预填充在每块芯片上都是计算受限的（第 05 章）。",
        "weights only": "W8A8 同时量化权重和激活：正是这样，张量核心才能以 fp8 运行。",
        "nothing": "查一下 A100 的各项峰值：rl.get_accelerator('A100').peak_flops_by_dtype。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "06.int4_speedup": "9c7215d25ca9bdda",
    "06.fused_mlp_bytes_8b": "f747b288f7222e50",
    "06.flash_decoding_13b": "b0efe81a736e7b87",
    "06.predict_fp8_kv_32k": "2e634b14a91ad749",
    "06.design_one_change_4ms": "e11384218083e8b5",
    "06.explain_int4_gap": "50f8cde239d85199",
    "06.mistake_fp8_a100": "9f9ef6ac689ec2da",
}
