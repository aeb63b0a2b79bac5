"""第 13 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "13.critical_tokens_b200": ("每个 token 6 N 的计算，对比线上 2 x 2 N 字节：N 会约掉",
                                "峰值 / 带宽 x 4 / 6，峰值取 B200 的稠密 bf16 峰值"),
    "13.zero3_bytes_70b": ("两次 bf16 权重的 all-gather，加一次 bf16 梯度的 reduce-scatter",
                           "3 x (n - 1)/n x 2 字节 x 全部参数"),
    "13.zero2_states_70b": ("阶段 2 切分梯度和优化器状态，不切分权重",
                            "(2 + (2 + 12) / 64) 字节 x 全部参数"),
    "13.bubble_interleaved": ("气泡是 (p - 1) 个微批的分块时间；交错让一个分块只有原来的 1/v 长",
                              "气泡占比为 (p - 1) / (v m)"),
    "13.mistake_tokens_tp": ("这些 token 由多少块芯片分担？",
                             "256 块芯片都在为这一步工作：张量并行把每个 token 的工作切分开"),
    "13.dp_binding_8b": ("把 512 个 token 与模型的 370.8 GB/s 下每芯片的临界 token 数比较"
                         "（每个节点 8 块 DP 芯片：8 块网卡与 NVLink 中较小者）",
                         "计算 6 N x 512 / 峰值，对比 2 x 4 N / 370.8 GB/s（fp32 梯度），再减去它能藏在后面的反向计算"),
    "13.design_fewest_stages": ("用完全重计算时激活很小：由模型状态决定，按 Megatron-LM 的保存方式"
                                "（bf16 权重、一个 fp32 梯度缓冲区）",
                                "第一个阶段（ceil(126 / p) 层和嵌入表）的权重和梯度每个参数 2 + 4 字节、"
                                "分到 tp 块芯片上，优化器 12 / dp，再加上分配器额外占用的部分："
                                "rl.training.train_step(..., pp=p, recompute='full').fits"),
    "13.mistake_dp_bytes_8b": ("在 bf16 训练中，Megatron-LM、NeMo 和 torchtitan 以什么格式把梯度放到链路上？",
                               "一次 all-reduce 发送其消息的 2 (n - 1)/n；消息是 N 个 4 字节的梯度"),
    "13.predict_sends_interleaved": ("每个微批在前向和反向中都要穿过一块芯片的 v 个分块边界；序列并行把每个激活切分到"
                                     " TP 组上",
                                     "每步微批数 x 2 x v x s h 2 字节 / tp，其中 dp = 1,024 / (8 x 8)"),
    "13.predict_tp_latency_8b": ("数一数集合通信：每层四次 all-reduce（前向两次，反向两次），共 32 层",
                                 "8 块 GPU 上的 ring all-reduce 需要 2 x 7 = 14 步："
                                 "每次 8.4 + 14 x 3.4 us，再 x 4 x 32"),
    "13.predict_zero3_nic": ("1,536 块 GPU 时哪个更长：按峰值的 46 % 计算一个重计算的序列"
                             "（4 个序列按峰值 37.6 s 的四分之一，再除以 0.46），还是按 25 GB/s 传输的通信量？",
                             "通信量：3 x (1,535 / 1,536) x 2 字节 x 174.6e9 个参数 / 25e9 B/s；"
                             "它更长，所以它就是一步的时间"),
    "13.predict_tp16_nic": ("一次 TP 集合通信搬运一层的激活，s b h 2 字节；"
                            "16 个成员的 ring 中每块 GPU 发送其中的 15/16；8B 的 h 是 70B 的一半",
                            "15/16 x 8,192 x 4,096 x 2 字节 / 50e9 B/s"),
}

WHY = {
    "13.mistake_tokens_tp": {
        "the tokens": "一步的 token 就是全局批，只数一次：1,048,576 是对的。",
        "nothing": "张量并行组的 8 块芯片共同处理一个副本的 token：除以 32 个副本，等于把每个 token 数了 8 遍。",
    },
    "13.dp_binding_8b": {
        "compute": "每芯片 512 个 token 远低于 370.8 GB/s 下约 3,600 的临界值（DGX H100 的 8 块网卡，fp32 梯度）："
                   "梯度的 all-reduce 比反向计算还长。",
    },
    "13.design_fewest_stages": {
        "2": "2 个阶段时，仅权重和梯度就有 6 字节 x 405.9e9 / 16 = 152 GB。",
        "1": "1 个阶段时，仅权重和梯度就有 6 字节 x 405.9e9 / 8 = 304 GB。",
        "4": "4 个阶段时，仅第一个阶段（32 层和嵌入表，104.1e9 个参数）的权重和 fp32 梯度就有 "
             "6 x 104.1e9 / 8 = 78 GB；再加上激活、分配器的 10 % 和 CUDA 上下文就超过 80 GB。",
        "16": "更少的阶段就已放得下：8 个阶段时，峰值约为每块芯片 50 GB。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "13.critical_tokens_b200": "69b99e0ca670a764",
    "13.zero3_bytes_70b": "c03e0c27dd5c957e",
    "13.zero2_states_70b": "8e928a37a4f31944",
    "13.bubble_interleaved": "96e0ba404bbee60a",
    "13.mistake_tokens_tp": "691cd9692312d8ac",
    "13.dp_binding_8b": "92810aeb88ef189d",
    "13.design_fewest_stages": "63abfc37a83643d9",
    "13.mistake_dp_bytes_8b": "4831c896927919fc",
    "13.predict_sends_interleaved": "494c93ddcee070f6",
    "13.predict_tp_latency_8b": "26be24b64b24e3eb",
    "13.predict_zero3_nic": "c8470901836a1cdf",
    "13.predict_tp16_nic": "f056881b66ebb57b",
}
