"""第 12 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "12.flops_per_token_qwen3": ("每个参与乘法的权重 6 次（LM head 算在内；embedding 查表不算），再加上注意力的那一份",
                                 "rl.training.matmul_params 给出权重数；注意力每个 token 增加 12 L H d T，"
                                 "加因果掩码时减半"),
    "12.attention_share_32k": ("每层每个 token，attention 随 h T 增长（H d = h），权重随 h^2 增长："
                               "份额大致随 T / h 变化，"
                               "所以宽一倍的模型在同样的 T 下份额更小",
                               "6 L H d T（因果）除以 6 N + 6 L H d T，N 为参与乘法的权重数"),
    "12.model_states_70b": ("检查点的每一个参数，乘以每个参数的字节数",
                            "2（bf16 权重）+ 4（fp32 梯度）+ 4 + 4 + 4（fp32 主权重、动量、方差）"),
    "12.smallest_zero_stage": ("激活不会因 ZeRO 变小；模型状态会，一个阶段比一个阶段小，"
                               "而 fp32 梯度在某个阶段切分它之前"
                               "一直是完整的",
                               "rl.training.train_step('llama-3-8b', hw, n_chips=8, seq_len=4096, global_batch=8, "
                               "zero_stage=s).fits，s = 0, 1, 2, 3；它的 memory.peak_terms 说明原因"),
    "12.hfu_over_mfu_full": ("完全重计算要把前向跑两遍",
                             "(6N + 12 L h s + 2 N_layers + 4 L h s) / (6N + 12 L h s)：略小于 4/3，因为 LM head "
                             "不重计算"),
    "12.gpt3_activations_tp8": ("没有序列并行时，各归一化层的输入、块的输入和 dropout 掩码都是完整的",
                                "每层激活字节数为 s b h (10 + 24 / t + 5 a s / (h t))"),
    "12.gpu_hours_7b": ("token 数 x 每个 token 的 FLOPs = 工作量；一块芯片每秒完成其稠密 bf16 峰值的 0.4",
                        "GPU 小时数为 "
                        "2e12 x rl.training.flops_per_token('llama-2-7b', 4096, causal=True) / (0.4 x 312e12) / 3600"),
    "12.peak_slip": ("MFU 大于 1 说明分母不是这块芯片的峰值：用 TFLOP/s 除以 MFU，看脚本用的是哪个峰值"
                     "（PaLM 的计数本身是一种公开的约定）",
                     "324.5 / 1.04 = 312 TFLOP/s，是 A100 的稠密 bf16 峰值：改为用这次运行的 TFLOP/s 除以 H100 SXM5 的"
                     "稠密 bf16 峰值（hw.peak_flops('bf16')）"),
    "12.fp8_mixed_mfu": ("用 TFLOP/s 除以 MFU，看日志用的是哪个峰值；格式混合时，bf16 峰值和 FP8 峰值都不对："
                         "按在各个峰值上运行的 FLOPs 给每个峰值加权",
                         "混合峰值 = 每 token 的因果 FLOPs / (6 x 各层的权重数 / FP8 峰值 + 其余 FLOPs / bf16 峰值)；"
                         "rl.training.mixed_peak_flops 会算出它"),
    "12.accumulation_405b": ("全局批大小 = micro-batch x 累积次数 x 数据并行副本数，都以序列计",
                             "副本数是芯片数除以 TP x PP；全局批大小是每步的 token 数除以序列长度"),
    "12.offload_hides_at": ("一层保留的字节数像 s 一样增长；它前向的 FLOPs 像 s（权重）加 s^2（attention）一样增长",
                            "每个 token：字节数为 activation_bytes_per_layer(m, 1, s) / s；FLOPs 为 2 x 该层的权重数 + "
                            "2 H d s；解 FLOPs / 795e12 = 字节数 / 64e9，求 s"),
    "12.checkpoint_loss_32k": ("每块 GPU 的故障率不变而 GPU 数翻倍：平均故障间隔时间 M 减半",
                               "在最佳间隔 sqrt(2 C M) 处损失的份额是 sqrt(2 C / M)，C 和 M 都以秒计"),
}

WHY = {
    "12.smallest_zero_stage": {
        "0": "不切分时，仅模型状态就有 145 GB（每个参数 18 字节）。",
        "1": "ZeRO-1 不切分 fp32 梯度：2 + 4 + 12 / 8 = 每个参数 7.5 字节，60 GB；加上激活、损失和碎片，峰值为 92 GB。",
        "3": "更低的阶段就已经放得下：把梯度也切分就够了。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "12.flops_per_token_qwen3": "4fceadfc87066576",
    "12.attention_share_32k": "50163b124d307450",
    "12.model_states_70b": "072f48432dab330b",
    "12.smallest_zero_stage": "c8746a0c1f7406b6",
    "12.hfu_over_mfu_full": "f97832f9880a1c0c",
    "12.gpt3_activations_tp8": "26703c0e8233dbc5",
    "12.gpu_hours_7b": "3ac104f1a6f0d0df",
    "12.peak_slip": "0da79f3536f273b1",
    "12.fp8_mixed_mfu": "057754d2d7ff6386",
    "12.accumulation_405b": "abd3e5fbec989f79",
    "12.offload_hides_at": "479d5b3457ab2ae0",
    "12.checkpoint_loss_32k": "77f4afd6f6a9af81",
}
