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
    "13.dp_binding_8b": ("把 512 个 token 与经由节点 NVLink 总线时每芯片的临界 token 数比较",
                         "计算 6 N x 512 / 峰值，对比 2 x 2 N / 370.8 GB/s，再减去它能藏在后面的反向计算"),
    "13.design_fewest_stages": ("用完全重计算时激活很小：由模型状态决定",
                                "权重和梯度每个参数 4 字节、分到 tp x pp 块芯片上，优化器 12 / dp；"
                                "rl.training.train_step(..., pp=p, recompute='full').fits"),
    "13.explain_zero3": ("384 块 GPU 时每块 GPU 每步发送多少？1,536 块时呢？",
                         "在任何规模下每块 GPU 都发送 3 x 2 字节 x N，而每块 GPU 的计算量减少到 1/4"),
    "13.explain_tp_node": ("张量并行的激活多久穿过一次链路？还有什么要离开节点？",
                           "每层五次集合通信、每次 s b h 2 字节，都在关键路径上；DGX H100 的 NVLink 承载 8 x 370.8 "
                           "GB/s，"
                           "网卡 8 x 50 GB/s，还要与数据并行和流水线并行共用"),
}

WHY = {
    "13.mistake_tokens_tp": {
        "the tokens": "一步的 token 就是全局批，只数一次：1,048,576 是对的。",
        "nothing": "张量并行组的 8 块芯片共同处理一个副本的 token：除以 32 个副本，等于把每个 token 数了 8 遍。",
    },
    "13.dp_binding_8b": {
        "compute": "每芯片 512 个 token 低于经由 DGX H100 NVLink 总线时约 1,800 的临界值："
                   "梯度的 all-reduce 比反向计算还长。",
    },
    "13.design_fewest_stages": {
        "2": "2 个阶段时，仅权重和梯度就有 4 字节 x 405.9e9 / 16 = 101 GB。",
        "1": "1 个阶段时，仅权重和梯度就有 4 字节 x 405.9e9 / 8 = 203 GB。",
        "8": "更少的阶段就已放得下：4 个阶段时，每块芯片的模型状态约 53 GB。",
    },
    "13.explain_zero3": {
        "bubble": "ZeRO-3 不用流水线：没有气泡。",
        "memory": "GPU 越多，每块存得越少；显存不会让一步变慢。",
        "latency": "768 和 1,536 块 GPU 时一步一样长（67 s），但环的延迟随其中 GPU 数增长：起作用的是字节数。",
    },
    "13.explain_tp_node": {
        "memory": "无论芯片在哪里，张量并行都能省显存；问题问的是时间。",
        "bubble": "张量并行没有气泡：每块芯片都参与每一层。",
        "precision": "节点内外的数值格式是一样的。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "13.critical_tokens_b200": "69b99e0ca670a764",
    "13.zero3_bytes_70b": "c03e0c27dd5c957e",
    "13.zero2_states_70b": "8e928a37a4f31944",
    "13.bubble_interleaved": "96e0ba404bbee60a",
    "13.mistake_tokens_tp": "691cd9692312d8ac",
    "13.dp_binding_8b": "9c91292c2bb887b7",
    "13.design_fewest_stages": "08dd95267704d2fe",
    "13.explain_zero3": "c76d03d527e4d16e",
    "13.explain_tp_node": "8a4e114b206db0d9",
}
