"""第 07 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "07.vector_add_time": ("向量加法的时间由哪一项决定，FLOPs 还是字节数？数一数有几个数组穿过内存",
                           "3 个数组 x 8 字节 x 10^7 个元素 / hw.mem_bandwidth，即你实测的 byte/s"),
    "07.smallest_compute_bound_matmul": ("计算访存比为 2n^3 / (3 * 8 * n^2) = n/12 FLOP/byte",
                                         "解 n / 12 >= hw.ridge_point('fp64') 并向上取整：ceil(12 x 你的 fp64 拐点)"),
    "07.diagnosis": ("每个旋钮按它改变的倍数算，把时间改变了多少（log 比值 / log 倍数）？",
                     "对每个旋钮 r = log(t_more / t_base) / log(factor)：两者都 < 0.25 为开销受限；"
                     "一个 >= 0.5 且比另一个高 0.3 以上，即为它对应的受限"),
    "07.h200_ridge_ratio": ("同一数据类型 fp64 下的两个拐点：H200 的来自规格表，你的来自你的测量",
                            "rl.get_accelerator('H200').ridge_point('fp64') / hw.ridge_point('fp64')，hw "
                            "为你实测的机器"),
    "07.predict_knee_bytes": ("在 3 倍拐点处，T_math 与 T_mem 相比有多长？字节数加倍只改变其中一项",
                              "以 T_mem 为单位：T_math = 3；时间从 T_math + T_mem 变为 T_math + 2 T_mem"),
    "07.design_stream_elements": ("三个数组合起来的字节数必须达到 4 x profile.llc_bytes；每个元素是一个 fp64",
                                  "3 个数组 x 8 字节 x n >= 4 x llc_bytes：n = ceil(4 x profile.llc_bytes / (3 x 8))"),
    "07.explain_small_matmul": ("三个 8 x 8 的 fp64 矩阵占多少字节？1,024 次 FLOP 在任何峰值下要花多久？",
                                "1,536 字节放在 L1 里，FLOPs 只要几纳秒："
                                "一次调用的哪种代价在屋顶线模型里没有对应的项？"),
    "07.mistake_vector_add": ("分别检查 z = x + y 中一个元素的 FLOPs 和字节数",
                              "读 x 和 y、写 z，各 8 字节：把 rl.vector_add(1, 'fp64').flops 和 .bytes 与 1 和 8 比较"),
}

WHY = {
    "07.explain_small_matmul": {
        "cache": "三个 8 x 8 的 fp64 矩阵共 1,536 字节：预热之后它们就待在 L1 里。",
        "compute": "1,024 次 FLOP、0.67 FLOP/byte：低于拐点，而且任何峰值在一微秒内都能把它们做很多遍。",
        "noise": "多次重复的中位数每次都偏差同样的倍数：这是一个固定代价。",
    },
    "07.mistake_vector_add": {
        "flops": "每个元素一次加法就是 1 次 FLOP（乘加才是 2 次）。",
        "dtype": "fp64 每个元素 8 字节：这部分是对的。",
        "nothing": "数一数每个元素有几个数组穿过内存：x、y 和 z。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "07.vector_add_time": "4e38bef54a199ab9",
    "07.smallest_compute_bound_matmul": "2e059b4ffb84f8ee",
    "07.diagnosis": "07e69853eaf74e19",
    "07.h200_ridge_ratio": "0e22ebcb91b9c9a5",
    "07.predict_knee_bytes": "c6fcf91e0b374649",
    "07.design_stream_elements": "14aa075b91161a2a",
    "07.explain_small_matmul": "d9d4227df79101f3",
    "07.mistake_vector_add": "f3791bf4ecc7cad3",
}
