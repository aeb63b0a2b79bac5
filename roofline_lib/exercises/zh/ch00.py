"""第 00 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "00.demo_bytes": ("一个 bf16 数占 16 位。",
                      "每个数的字节数（16 位 ÷ 每字节 8 位，或 rl.bytes_per_element('bf16')）乘以数的个数。"),
    "00.bf16_bytes": ("bf16 是 16 位的格式。",
                      "把位数除以每字节的 8 位；rl.bytes_per_element('bf16') 给出同样的结果。"),
    "00.ridge_h200": ("用 FLOP/s 除以 byte/s，两者都用基本单位。",
                      "989.4e12 FLOP/s 除以 4.8e12 byte/s，或 rl.get_accelerator('H200').ridge_point('bf16')。"),
    "00.intensity_4096": ("2·M·N·K 次 FLOP，除以 (M·K + K·N + M·N) 个元素、每个 2 字节。",
                          "M = N = K = n 时为 2n³ / (3 · n² · 2)；rl.matmul(n, n, n, 'bf16').intensity 可以直接算出。"),
    "00.t_math_h200": ("2·4096³ 次 FLOP，按稠密 bf16 峰值算。",
                       "T_math = FLOPs / FLOP/s：2 * 4096**3 / 989.4e12，峰值要用 FLOP/s（不是 TFLOP/s）。"),
    "00.bound_h200": ("把它的计算访存比和 H200 的拐点比一比。",
                      "计算访存比高于拐点即计算受限，低于拐点即访存受限；"
                      "rl.estimate(rl.matmul(4096, 4096, 4096), 'H200').bound 可以验证。"),
    "00.full_read_h200": ("时间等于总量除以速率：哪个总量，哪个速率？",
                          "mem_capacity（140.4 GiB = 140.4 * 2**30 字节）除以 4.8e12 byte/s。"),
    "00.highest_ridge": ("峰值最大的不一定是答案：拐点是一个比值。",
                         "对每块芯片，用表中的 TFLOP/s 除以它的 TB/s（单位约去后就是 FLOP/byte）。"),
    "00.units_slip": ("一次矩阵乘不可能算上好几年：逐个检查除式里每个数代表什么、单位是什么。",
                      "T_math = FLOP / (FLOP/s)：989.4 是以 TFLOP/s 为单位的峰值，而 1 TFLOP/s = 1e12 FLOP/s。"),
}

WHY = {
    "00.highest_ridge": {
        "b200": "它的峰值是五块中最大的（2250 TFLOP/s），但 7.7 TB/s 的带宽把比值拉低到 292。",
        "h200 sxm": "989.4 / 4.8 = 206：带宽很大，拐点因此偏低。",
        "a10": "125 / 0.6 = 208，与 H200 相近。",
        "l4": "121 / 0.3 = 403 已经很高，但五块中还有一块更高。",
    },
    "00.units_slip": {
        "flops": "2 * 4096**3 = 1.37e11 这个次数是对的：每个 (i, j, k) 一次乘法加一次加法。",
        "sparse": "989.4 是稠密 bf16 峰值（2:4 稀疏的宣传值是 1979）。",
        "nothing": "一个边长 4096 的矩阵乘不会花上好几年：比一比 1.39e8 s 和 1.39e-4 s。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "00.demo_bytes": "473ea6dbb5e06c70",
    "00.bf16_bytes": "6dfbdb1b1def4582",
    "00.ridge_h200": "0aa6c75186b8c5b9",
    "00.intensity_4096": "4bf08e041a1aaf6b",
    "00.t_math_h200": "3ef06c07445055e8",
    "00.bound_h200": "20eac6f632661312",
    "00.full_read_h200": "229230b87a8dc968",
    "00.highest_ridge": "293431f54f353462",
    "00.units_slip": "6cb4e75d22aa482c",
}
