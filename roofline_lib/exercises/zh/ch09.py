"""第 09 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "09.allreduce_bytes": ("环形 all-reduce 就是一次 reduce-scatter 加一次 all-gather："
                           "每块芯片在每一步各发送多大比例？",
                           "消息的 2 (N - 1) / N，其中 N = 8；rl.comms.ring_allreduce_bytes(64e6, 8) 可以核对"),
    "09.nvlink_allreduce_time": ("NVLink 的 900 GB/s 是两个方向相加：环形只朝一个方向发送",
                                 "每块芯片发送的字节数 / (900e9 / 2) byte/s，即除以 "
                                 "h100.interconnect_bandwidth_per_direction"),
    "09.crossover_tokens_13b": ("数一数一层中权重矩阵的参数个数（没有 GQA）；"
                                "再把权重字节数与每个 token 的激活字节数比较",
                                "T* = P_layer / (4 x hidden)，P_layer = 4 h^2 + 3 h x intermediate_size，"
                                "取自 rl.get_model('llama-2-13b')"),
    "09.decode_bound_pcie": ("比较这一步的各项：峰值下的 FLOPs、每块芯片按 HBM 速度读的字节、共享总线上的 all-reduce",
                             "160 次 all-reduce，每次 64 个 token 的激活（各 1 MiB），按 NCCL 最佳协议在共享的 22.2 "
                             "GB/s 上；"
                             "对比权重和 KV 缓存的 1/8 按 2 TB/s 读取"),
    "09.pipeline_idle_share": ("一个微批的下一个 token 需要走完全部 8 个阶段；在它转一圈的时间里，有几个阶段有活干？",
                               "一圈是 max(8, 3) 个阶段时隙，一块芯片只在其中 3 个里工作：空闲 (8 - 3) / 8"),
    "09.ep_alltoall_bytes": ("每个 MoE 层 2 次 all-to-all；每个 token 的隐藏向量发给 2 个专家，"
                             "其中 7/8 的副本离开本芯片",
                             "8 个 token x 2 个专家 x 7/8 x hidden x 2 字节 x 2 次 all-to-all x num_layers；"
                             "rl.parallel.ep_decode_step(...).comm_bytes 可以核对"),
    "09.replicas_or_tp": ("根据每块芯片读取的字节来判断：在每种布局下，它的权重和它那些序列的 KV 缓存",
                          "比较 rl.parallel.replica_decode_step 与 tp_decode_step('llama-2-7b', 'H100 SXM', 64, 4096, "
                          "8) "
                          "的 .exposed"),
    "09.predict_allreduce_pcie": ("16 kB 是一条小消息：先数 NCCL 的固定延迟，再算环形的带宽项",
                                  "NCCL 环形、LL 协议：6.6 us + 2(N - 1) 步 x 1.0 us（经 PCIe），再加 2(N - 1)/N x 16 "
                                  "kB，"
                                  "速率为每方向 64 GB/s 的 NCCL 0.75 份额再减半（LL）"),
    "09.design_chips_8k": ("每块芯片在其 0.9 的显存里放 1/N 的权重和每条序列 1/N 的 KV 缓存",
                           "检查 rl.parallel.tp_max_batch('llama-3.1-70b', 'A100 80GB SXM4', 2**13, n, "
                           "usable_fraction=0.9) "
                           ">= 100，n = 2, 4, 8"),
    "09.explain_efficiency": ("一个 token 的 all-reduce 搬运多少字节？按 NVLink 的速度要多久？",
                              "step ~ T_mem / N + 2 x layers x (延迟 + 字节数 / 带宽)：哪一项不随 N 增大而缩小？"),
    "09.mistake_allreduce_time": ("分别检查两个数：一块芯片发送的消息比例，以及所用的带宽",
                                  "环形中每块芯片按 interconnect_bandwidth_per_direction 发送消息的 2(N - 1)/N："
                                  "与 2 和 900 GB/s 比较"),
}

WHY = {
    "09.design_chips_8k": {
        "2": "每块芯片在 77.3 GB 的份额里放 70.6 GB 权重：剩 6.7 GB，"
             "只够 5 条 8,192 个位置的序列（每条每芯片 1.3 GB）。",
        "4": "4 块芯片约能放 125 条 4,096 个位置的序列（上表中 Llama-2-70B 为 127 条，Llama-3.1-70B 的词表更大，"
             "略少一些），但 8,192 个位置的序列需要两倍的 KV 缓存：只放得下 62 条。",
        "more than 8": "8 块芯片时，每块在 77.3 GB 的份额里放 17.6 GB 权重，每条序列的 KV 缓存占 0.34 GB：再算一遍。",
    },
    "09.explain_efficiency": {
        "bandwidth": "一个 token 的激活只有 8 kB：它的 2(N - 1)/N 只要几纳秒；而且这个因子只从 1 增长到 1.75。",
        "kv cache": "KV 缓存按 KV 头切分：每块芯片读其中的 1/N。",
        "compute": "批大小为 1 的解码每个权重只做 2 次 FLOP：计算只占这一步的百分之几。",
    },
    "09.mistake_allreduce_time": {
        "one": "两处都要查：环形中每块芯片发送消息的 2(N - 1)/N = 1.75 倍，"
               "而不是 2 倍；并且每条链路上只朝一个方向发送："
               "450 GB/s，而不是两个方向相加的 900。",
        "nothing": "时间是 1.75 x 64 MB / 450 GB/s = 249 us，而不是 142 us。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "09.allreduce_bytes": "92a24cd9639c2029",
    "09.nvlink_allreduce_time": "2e0388e10df7e3e9",
    "09.crossover_tokens_13b": "782f5999bf9b0eeb",
    "09.decode_bound_pcie": "13798162047bdc65",
    "09.pipeline_idle_share": "da53ca3eeb0ca155",
    "09.ep_alltoall_bytes": "7fb0e13a35487e96",
    "09.replicas_or_tp": "3fdc069d649d2121",
    "09.predict_allreduce_pcie": "47bdae9656f37187",
    "09.design_chips_8k": "56eca077e124c00b",
    "09.explain_efficiency": "6bb36c0f9c46b5ac",
    "09.mistake_allreduce_time": "0bda1b6c8738965c",
}
