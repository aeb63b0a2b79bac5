"""第 04 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "04.decode_time_h200": ("它是访存受限的：字节数 / 带宽。",
                            "K 和 V：2 x 16 x 8192 x 8 x 128 x 2 字节，再加上 Q 和 O：2 x 16 x 32 x 128 x 2；"
                            "除以 H200 的 mem_bandwidth。"),
    "04.prefill_slip_g4": ("一行代数里有两处失误？在 T = S 时自己重算一遍 2T / (T/S + H_kv/H)。",
                           "每元素为 2T / (1 + 1/G) = 2GT / (G + 1)；按 bf16 字节计再减半：4 x 512 / 5。"),
    "04.spec_tokens_h200": ("解码的极限约为每个 bf16 字节 T G 次 FLOP：要多少个 token 才能达到 206？",
                            "对 T 解 32 T 8192 / (32 T + 8 x 8192) = 989.4 / 4.8，再向上取整。"),
    "04.why_batch": ("在权重矩阵乘中，什么是整批只读一次的？在注意力中，什么是每条序列各读一次的？",
                     "写出批大小为 b 时的 FLOPs 和字节数：在注意力中两者都带因子 b，所以它们的比值不带；"
                     "而权重的字节数不随 b 增长。"),
    "04.predict_exp_d96": ("表中头维度为 64、128 和 256 时分别是 1.00、0.50 和 0.25：它随 d 怎样变化？",
                           "按这个规律，d = 96 时为 256 / (2 x (96 + 96))。"),
}

WHY = {
    "04.why_batch": {
        "shared": "如果整批共享 K 和 V，批处理就会像对权重那样提高计算访存比。",
        "softmax": "softmax 只增加约 1 % 的 FLOPs，几乎不增加字节：它不起决定作用。",
        "heads": "分组大小 G 由模型决定；批大小让 FLOPs 和字节数同比例增长。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "04.decode_time_h200": "cd38b0caf6861ed6",
    "04.prefill_slip_g4": "586725bf2ec555b5",
    "04.spec_tokens_h200": "7782aab3cd9d8e58",
    "04.why_batch": "2ffd450e98ee66a9",
    "04.predict_exp_d96": "12d3e54d4654858c",
}
