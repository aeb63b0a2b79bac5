"""第 10 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "10.holdout_tp4": ("4 GPU 这一步的校准下界，加上每一层的张量并行开销，取 4c 节的中位数。",
                       "1 / (rec.calibrated_s + num_layers x tp_overhead_s)：rec 为留出的那条记录，tp_overhead_s "
                       "为 4c 节每层的中位数。"),
    "10.holdout_int4": ("批大小为 1 时下界就是访存时间；MBU 为 u 的运行需要 下界 / u。",
                        "u = groups['batch-1 decode, int4 weights, one chip'] 的 MBU 中位数；tokens/s = u / "
                        "rec.predicted_lower_s。"),
    "10.impossible": ("每生成一个 token 至少要读什么？A100 读它能有多快？",
                      "除嵌入表（只读其中一行）外，每个 token 都要把每个权重读一遍：20 x 2 x (n_params - "
                      "vocab_size x hidden_size) / A100 的 mem_bandwidth 就是最短时间。"),
    "10.predict_calibrated_13b": ("权重（26 GB）加上一小份 KV 缓存，按实测可达的 1.6 TB/s 读取",
                                  "(2 x (13,015,864,320 - 32,000 x 5,120) + kv_cache_bytes(1, 1024)) / 1.6e12 s，x "
                                  "1e3 换算成 ms"),
    "10.design_a100s_30_tokens": ("30 tokens/s 意味着每个 token 1/30 s："
                                  "在几块芯片上，校准后的一步加上它的张量并行开销能放得进去？",
                                  "对 n = 2, 4, 8：gpt-fast Llama-2-70B 记录的 calibrated_s + 80 x tp_overhead_s <= "
                                  "1 / 30"),
    "10.explain_server_tpot": ("批大小为 1 的下界对每一步做了什么假设，而满载的服务器并不是那样运行的？",
                               "批大小为 b 时，一步读一次权重再加 b 份 KV 缓存，做 b 倍的 FLOPs：把它的时间与批大小为 "
                               "1 时比较"),
    "10.mistake_int4_mbu": ("检查这个说法的三个部分：下界、MBU，以及两者怎样组合",
                            "把 0.7 与第 3 节中 groups['batch-1 decode, int4 weights, one chip'] 的 MBU 比较"),
}

WHY = {
    "10.design_a100s_30_tokens": {
        "2": "2 块 GPU：校准后的 43 ms 加上 80 层、每层约 58 us 的开销，约 48 ms：每秒 21 个 token。",
        "8": "8 块 GPU 能达到，但更少的也能：试试 4 块（校准后 21.5 ms 加 4.7 ms）。",
        "more than 8": "8 块 GPU 每个 token 约 15 ms：往少里数。",
    },
    "10.explain_server_tpot": {
        "fp8": "fp8 权重要读的字节只有 bf16 的一半：它们让一步更快，而不是更慢。",
        "network": "每个输出 token 的时间是在服务器内部、同一个流的相邻 token 之间测的："
                   "网络只加在首 token 上，不加在每一步上。",
        "bound wrong": "下界低于实测值，正是下界应有的样子；8.6x 说明这一步做的工作比批大小为 1 时多。",
    },
    "10.mistake_int4_mbu": {
        "bound": "内核读的正是 int4 权重：下界按 4 位的字节数计算，这没错。",
        "inverted": "MBU 为 u 的运行每个 token 需要 下界 / u 秒：u / 下界 tokens/s 是对的。",
        "nothing": "把第 3 节中 int4 记录的 MBU 与 bf16 的比一比。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "10.holdout_tp4": "8e6f29313aec3d0e",
    "10.holdout_int4": "24e2136690a8c6ab",
    "10.impossible": "b0ded8ce7aa348b2",
    "10.predict_calibrated_13b": "ec6428264dd17e38",
    "10.design_a100s_30_tokens": "2c7494750c4f13b2",
    "10.explain_server_tpot": "71f99ea2cbd17f12",
    "10.mistake_int4_mbu": "8244d54e94a8a63e",
}
