"""第 02 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "02.attainable_a100_50": ("min(峰值, 带宽 x 计算访存比)：在 50 FLOP/B 时两者哪个更小？",
                              "min(312e12, 2.039e12 x 50)，单位 FLOP/s；或 rl.attainable_flops(50, 'A100')。"),
    "02.achieved_fraction_a100": ("160 FLOP/B 落在两条屋顶各自的哪一段？把它分别与两个拐点比较。",
                                  "规格表：min(312e12, 2.039e12 x 160)，在平顶上；实测：min(271.2e12, 1.6e12 x 160)，"
                                  "在斜坡上；用后者除以前者。"),
    "02.predict_fusion_a100": ("20 低于拐点，400 高于拐点：收益在峰值处封顶（情形 2）。",
                               "两者之比：min(312e12, 2.039e12 x 400) / min(312e12, 2.039e12 x 20)。"),
    "02.slowest_chip_4ms": ("访存受限：时间 = 字节数 / 带宽。芯片的带宽至少要有 16e9 / 4e-3 byte/s。",
                            "对五块芯片分别算 16e9 / rl.get_accelerator(name).mem_bandwidth；在低于 4e-3 s 的那些里，"
                            "取时间最长的。"),
    "02.roof_cap_slip": ("可达 FLOP/s = min(峰值, 带宽 x 计算访存比)：1000 在拐点之上吗？",
                         "把 1000 与 rl.get_accelerator('H200').ridge_point('bf16') 比较，"
                         "再把 4.8e15 与 rl.attainable_flops(1000, 'H200') 比较。"),
    "02.h200_no_speedup": ("把每个计算访存比与两个拐点都比一比：在每块芯片上，限制它的是哪一段屋顶？",
                           "'H100' 和 'H200' 的 ridge_point('bf16')；低于拐点时 时间 = 字节数 / 带宽，高于拐点时为 "
                           "FLOPs / 峰值："
                           "两块芯片共有的是哪一个？"),
}

WHY = {
    "02.slowest_chip_4ms": {
        "a100 80gb sxm4": "16e9 / 2.039e12 = 7.8 ms：太慢。",
        "h100 sxm5": "16e9 / 3.35e12 = 4.8 ms：刚好慢了一点，它的算力对访存受限的一步帮不上忙。",
        "mi300x": "够快（3.0 ms），但列表中还有一块更慢的芯片也能做到。",
        "b200": "够快（2.1 ms），但它是五块中最快的，而不是能做到的芯片中最慢的。",
    },
    "02.roof_cap_slip": {
        "units": "byte/s 乘以 FLOP/byte 就是 FLOP/s：单位没有问题。",
        "sparse": "这里根本没有用到峰值，无论稠密还是稀疏：这正是失误所在。",
        "nothing": "4.8e15 FLOP/s 几乎是 H200 稠密 bf16 峰值的五倍。",
    },
    "02.h200_no_speedup": {
        "low": "在 2 FLOP/B 时两块芯片都是访存受限：时间 = 字节数 / 带宽，H200 上快 1.43x。",
        "both": "两个内核中只有一个受两块芯片共有的算力限制。",
        "neither": "其中一个内核高于两个拐点（206 和 295）：平顶是一样高的。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "02.attainable_a100_50": "5b3a4079ed7c26f5",
    "02.achieved_fraction_a100": "e376a8542b595beb",
    "02.predict_fusion_a100": "bd53729ac9ad56a1",
    "02.slowest_chip_4ms": "c09026cbaac1ff8d",
    "02.roof_cap_slip": "c7c447581a84d1a1",
    "02.h200_no_speedup": "763cfbfae4133e0e",
}
