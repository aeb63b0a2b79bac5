"""第 11 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "11.littles_law": ("Little 定律：处理中的请求数 = 到达率 x 每个请求解码所花的时间",
                       "一个请求要解码 输出 token 数 x TPOT 秒：到达率 = 48 / (200 x 20e-3 s)"),
    "11.spec_tokens": ("被接受的草稿 token，再加上目标模型总会补上的那一个 token",
                       "第 i 个草稿只有在第 1 .. i 个都被接受时才算：对 i = 0 .. k 求 0.6^i 之和，"
                       "或用 rl.serving.expected_tokens_per_verify"),
    "11.paged_batch": ("按整页计的每条序列平均位置数，乘以每个位置的字节数",
                       "（驱动报告的字节数减去 bf16 权重）/（ceil(L / 16) x 16 个位置的平均值 x 每个位置的 KV "
                       "字节数），向下取整"),
    "11.spec_pays": ("在这个批大小和上下文长度下，每一步除了权重还要读什么？"
                     "每条序列 5 个位置的验证步比普通一步慢很多吗？",
                     "rl.serving.speculative('llama-2-7b', 'A100', 128, 512, 4, 0.6).speedup = "
                     "t_plain x 每次验证的 token 数 / t_verify；> 1 才划算"),
    "11.slo_chip": ("每块芯片上满足 SLO 的最大批大小，再算 价格 / 吞吐量",
                    "对每块芯片算 rl.serving.best_batch_under_slo('llama-2-13b', chip, 1024, 256, 25e-3)"
                    ".cost_per_million_tokens(price)"),
    "11.price_slip": ("价格是按什么时间单位计的？吞吐量又是按什么单位计的？",
                      "每小时 token 数 = 3600 x 每秒 token 数；成本 = 每小时价格 x 1e6 / 每小时 token 数"),
}

WHY = {
    "11.spec_pays": {
        "does not pay": "上下文为 512 时，每一步除了 13.5 GB 权重还要读 34 GB 的 KV 缓存（按 2.04 TB/s 约 24 ms），"
                        "而验证步的 5 x 128 个 token 需要约 28 ms 的计算：只比普通一步慢一点，却能为每条序列带来约 "
                        "2.3 个 token。"
                        "表中批大小 256 的情形上下文是 128，那时权重占了字节数的大头。",
    },
    "11.slo_chip": {
        "a100": "A100 的显存和带宽较小，在 25 ms 内能容纳的批要小得多：它较低的价格抵不过每小时更少的 token。",
        "h100": "H100 与 H200 算力相同，但显存和带宽更少：H200 在 SLO 内能容纳更大的批，足以抵消它更高的每小时价格。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "11.littles_law": "74ad3bd39a81db98",
    "11.spec_tokens": "7cc8244b0e8b0a0a",
    "11.paged_batch": "125ecc148884bda5",
    "11.spec_pays": "9f8b2cad6fe28f3e",
    "11.slo_chip": "0ebbea04ec55a9ef",
    "11.price_slip": "e4ec571e0b580323",
}
