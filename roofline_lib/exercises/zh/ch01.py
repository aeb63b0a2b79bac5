"""第 01 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "01.t_math_h100": ("T_math = FLOPs / 稠密峰值 FLOP/s",
                       "4e12 / rl.get_accelerator('H100 SXM5').peak_flops('bf16')：用稠密 bf16 峰值，单位 FLOP/s"),
    "01.t_mem_h100": ("T_mem = 字节数 / 显存带宽",
                      "10e9 / rl.get_accelerator('H100 SXM5').mem_bandwidth：HBM 带宽，单位 byte/s"),
    "01.bound_h100": ("比较 T_math 与 T_mem，或者比较该内核的计算访存比与芯片的拐点",
                      "计算访存比 = 4e12 / 10e9 FLOP/byte，与 h100.ridge_point('bf16') 比较：高于拐点即计算受限"),
    "01.gap_h100": ("无重叠时间 = T_math + T_mem，下界 = max(T_math, T_mem)；两者之比介于 1 与 2 之间",
                    "用上面两个时间算 (T_math + T_mem) / max(T_math, T_mem)，或用 rl.estimate 的 "
                    "est.no_overlap / est.lower"),
    "01.predict_a100_lower": ("40GB 版与 80GB 版峰值相同，但带宽更低：现在哪一项更大？",
                              "T_math = 1.8e12 / 312e12，T_mem = 10e9 / 1.555e12；下界取两者中较大的那个"),
    "01.fuse_bytes_h200": ("内核需要达到多高的计算访存比？这对它的字节数意味着什么？",
                           "Q = F / R，其中 R = 989.4e12 / 4.8e12 FLOP/byte"),
    "01.sparse_slip_a100": ("把笔记里的每个数字与 A100 80GB SXM4 的规格表核对：T_math 需要的是不是这个数？",
                            "把 624e12 与 rl.get_accelerator('A100').peak_flops('bf16') 和 .sparse_flops_by_dtype "
                            "比较；用稠密峰值重算 T_math"),
    "01.slow_kernel": ("这几个时间里，哪一个假定了峰值速率和最少的字节数？",
                       "T_math + T_mem 已经按完全不重叠、峰值速率计算：还有什么会让内核比这更慢？"),
}

WHY = {
    "01.sparse_slip_a100": {
        "bandwidth": "2.039 TB/s 正是 A100 80GB SXM4 的 HBM2e 带宽（1.555 才是 40GB 版的）。",
        "units": "两个除法都用了基本单位（FLOP 除以 FLOP/s，字节除以 byte/s）：就所用的数字而言，时间算得没错。",
        "nothing": "查一下 A100 的稠密 bf16 峰值：用它算，T_math 是 8.0 ms，受限类型随之翻转。",
    },
    "01.slow_kernel": {
        "overlap": "即使完全不重叠、按峰值速率运行，它也只需 3.90 ms：仅靠重叠的缺失到不了 5.1。",
        "compute": "它的计算访存比为 180 FLOP/byte，低于 H200 的拐点（206）：它是访存受限的；"
                   "而且受限类型本身也不会让内核比无重叠时间更慢。",
        "wrong": "下界说的是该内核不可能快于 2.08 ms。一个更慢的内核与它并不矛盾。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "01.t_math_h100": "36d6727b9d7ed867",
    "01.t_mem_h100": "4b67bcf1707eb402",
    "01.bound_h100": "5f89641ec0981b1f",
    "01.gap_h100": "278431cf7824d61a",
    "01.predict_a100_lower": "f31ae4f05f9b631b",
    "01.fuse_bytes_h200": "c605e5755ec36b5c",
    "01.sparse_slip_a100": "120649e018027ba4",
    "01.slow_kernel": "3695d0156986e573",
}
