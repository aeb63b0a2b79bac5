"""第 03 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "03.flops_4096": ("每个 (i, j, k) 一次乘法加一次加法：2MNK。",
                      "2 * 4096**3，或 rl.matmul(4096, 4096, 4096).flops。"),
    "03.gemv_bound": ("只有一行时，每个权重被用了几次？把计算访存比与 H200 的拐点比较。",
                      "M = 1 时，计算访存比 = MNK / (MK + KN + MN) FLOP/bf16 字节，"
                      "与 rl.get_accelerator('H200').ridge_point('bf16') 比较。"),
    "03.critical_M_a100_fp16": ("计算访存比随 M 增长；它在哪里达到 A100 的 fp16 拐点（312e12 / 2.039e12）？",
                                "M* = R N K / (N K - R (N + K))，其中 R = 312e12 / 2.039e12，N = 4096，K = 14336。"),
    "03.bytes_b200_example": ("三个矩阵（两个输入和输出）各穿过内存一次，每个元素 2 字节。",
                              "2MK + 2KN + 2MN，其中 M = 64，K = 4096，N = 8192；可用 rl.matmul(M, N, K).bytes 核对"
                              "（注意参数顺序）。"),
    "03.limit_fp8_bf16_ffn": ("M 增大时，哪些字节项随之增长，哪些不变？fp8 为 1 字节，bf16 输出为 2 字节。",
                              "字节数为 MK + KN + 2MN；全部除以 M，再令 M -> 无穷：2NK / (K + 2N)。"),
    "03.reuse_predict": ("每个权重被用了几次？它又占多少字节？",
                         "每个 2 字节的权重做 2M 次 FLOP，即 M FLOP/B；激活再添一点字节：MNK / (MN + NK + MK)。"),
    "03.tile_design": ("要达到实测速率，需要从 HBM 获得多高的计算访存比？正方形分块能达到多少？",
                       "m_t n_t / (m_t + n_t) = m_t / 2 必须达到 795 / 3.35 = 237 FLOP/B：把 m_t 向上取到 2 的幂。"),
    "03.batch_doubling": ("M = 64 或 128 时，这个矩阵乘是计算受限的吗？把 M 与临界 M 比较。",
                          "两次都是访存受限：看字节数之比，N = K = 8192 时为 (2 x 128 + 8192) / (2 x 64 + 8192)。"),
    "03.why_critical_M": ("数一数每个权重对应的 FLOPs 和字节数。",
                          "每个 2 字节的权重要为 M 行中的每一行各做一次乘加：每 2 字节 2M 次 FLOP，"
                          "所以在 M << N, K 时计算访存比 ~ M。"),
}

WHY = {
    "03.why_critical_M": {
        "output": "在 M << K 时，输出的 2MN 字节比权重的 2NK 字节小得多；而且字节越多，计算访存比只会越低，不会越高。",
        "square": "FLOPs 是 2MNK：对 M 是线性的，激活的字节数也是。",
        "tensor": "这个交点只由 FLOPs 和字节数决定：临界 M 随拐点移动（4096 x 4096 时 A100 上为 165，H200 上为 229），"
                  "与分块大小无关。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "03.flops_4096": "6c9743a274f928a1",
    "03.gemv_bound": "b04b915d67d56801",
    "03.critical_M_a100_fp16": "69f69aa9e74aa4c1",
    "03.bytes_b200_example": "fa71a837e5ce6123",
    "03.limit_fp8_bf16_ffn": "fca850df77a91816",
    "03.reuse_predict": "4e1752fc6156a240",
    "03.tile_design": "f345c44f16a19cf0",
    "03.batch_doubling": "609ddd82ca42fce7",
    "03.why_critical_M": "56e3d491bbbb4572",
}
