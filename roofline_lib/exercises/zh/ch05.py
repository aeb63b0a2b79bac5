"""第 05 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "05.kv_llama3_70b": ("2（K 和 V）x 层数 x KV 头数 x 头维度 x 位置数 x 序列数 x 2 字节；GQA 有 8 个 KV 头。",
                         "rl.get_model('llama-3-70b').kv_cache_bytes(16, 8192, 'bf16') 给出字节数；除以 1e9 得到 GB。"),
    "05.critical_batch_8b_a100": ("当 b 远小于矩阵边长时，计算访存比约为 b，但并不精确：保留每一项。",
                                  "由 bKN / (bK + KN + bN) = R 得 b* = R K N / (K N - R (K + N))，R 为 A100 的 bf16 "
                                  "拐点："
                                  "向上取整。"),
    "05.predict_step_batch64": ("权重对全部 64 条序列只读一次；每条序列读自己的 KV 缓存（每个位置 131 kB）。",
                                "(2 x (8.03e9 - 128256 x 4096) 个权重字节 + 64 x 4096 x kv_cache_bytes(1, 1)) / "
                                "4.8e12 s，"
                                "x 1e3 换算成 ms。"),
    "05.design_dtype_32k": ("权重和 8 份 32,768 个位置的 KV 缓存必须共用可用显存：各自有多大？",
                            "llm.max_batch('llama-3-70b', 'H200', 32768, weight_dtype=d, usable_fraction=0.9, "
                            "reserved_bytes=llm.CUDA_CONTEXT_BYTES) >= 8，从位宽最大的 d 试起。"),
    "05.explain_prefill_memory": ("用计算访存比来推理：预填充的计算访存比由什么决定？哪一种改动会把它推到拐点以下？",
                                  "每个权重服务 批大小 x 提示词 token 数：计算访存比 ~ b T FLOP/B，与拐点比较；"
                                  "rl.estimate(rl.prefill(model, b, T), chip).bound。"),
    "05.mistake_kv_heads": ("把乘积中的每个因子与模型配置 rl.get_model('llama-3-70b') 逐一核对。",
                            "K 和 V 是按 KV 头缓存的：把 64 与 num_heads 和 num_kv_heads（GQA）比较；"
                            "kv_cache_bytes(16, 8192) 可以核对总数。"),
    "05.max_batch_fp8": ("引擎可用的 90 % 显存要放下一份 fp8 权重，再为每条序列放一份 KV 缓存；注意 MiB。",
                         "0.9 x 143,771 x 2^20 字节，减去每个参数 1 字节，再除以一条序列的 KV 字节数，向下取整。"
                         "1 MiB 是 2^20 字节，不是 1e6。"),
}

WHY = {
    "05.design_dtype_32k": {
        "bf16": "仅 bf16 权重（141e9 字节）就超过了 0.9 x 150.75e9 字节：放不下 KV 缓存。",
        "fp8": "fp8 权重剩下的空间能放 6 条 32,768 个位置的序列（见上表），而不是 8 条。",
        "none": "int4 权重是 35e9 字节；算一算它给 8 份各 10.7e9 字节的 KV 缓存留下了多少空间。",
    },
    "05.explain_prefill_memory": {
        "int4 weights": "FLOPs 不变而权重字节更少，计算访存比会提高：更偏向计算受限。",
        "more bandwidth": "带宽更大会降低拐点（H200 上为 206）：更偏向计算受限。",
        "larger batch": "8 条提示词让每个权重被用 8 x 4,096 次：计算访存比上升。",
    },
    "05.mistake_kv_heads": {
        "k and v": "键和值都要缓存：因子 2 是对的。",
        "bytes": "bf16 每个元素 2 字节：这个因子是对的。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "05.kv_llama3_70b": "8b63444872c6813c",
    "05.critical_batch_8b_a100": "68b48abb4b7e8130",
    "05.predict_step_batch64": "ca5ba7cc271f580f",
    "05.design_dtype_32k": "558f4960209667d4",
    "05.explain_prefill_memory": "f28c8cc6be215caa",
    "05.mistake_kv_heads": "57f13f722a2632ae",
    "05.max_batch_fp8": "44b7e72258611802",
}
