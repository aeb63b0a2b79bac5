"""第 14 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "14.touched_32": ("一个 token 错过某个给定专家的概率是 1 - 8/256；32 个相互独立的 token 全都错过它的概率，"
                      "是这个概率的 32 次方",
                      "256 x (1 - (1 - 8/256)^32)，或用 rl.llm.experts_touched('deepseek-v3', 32)"),
    "14.dispatch_qwen3": ("低延迟内核给 token 的每个专家各发送一份副本：一份副本有多大？",
                          "8 份副本 x（4096 个单字节值 + 4096/128 个 4 字节的缩放因子）"),
    "14.predict_attention_overtakes": ("专家全部被触及之后，每块 GPU 的专家字节数几乎不再随 batch 增长；"
                                       "什么会随每个序列增长？",
                                       "对 b = 16, 32, 64, ...：step = rl.multichip.ep_serving_step('deepseek-v3', "
                                       "'H200', b, 2000, 8)；第一个满足 step.t_attention > step.t_experts 的 b"),
    "14.design_smallest_ep": ("一块 GPU 自己 128 个序列的 KV 缓存在任何 EP 度下都一样；EP 度增大时，什么会变小？",
                              "对每个 n 依次试 rl.multichip.ep_serving_step('deepseek-v3', 'H800', 128, 4096, n, "
                              "redundant_experts=..., usable_fraction=0.85).fits"),
    "14.predict_gemm_share": ("只有 8 行时，读取这个专家 29 MB 的权重和在它们上面做计算，哪个更久？",
                              "rl.training.moe.grouped_gemm_efficiency('deepseek-v3', 'H800', 8)：按峰值算的时间"
                              "除以屋顶线下界"),
    "14.pretraining_wall_clock": ("GPU 小时数分摊到 2,048 块 GPU 上，就是墙钟小时数",
                                  "2.664e6 / 2048 小时，再乘以 3600 秒"),
    "14.mistake_per_node": ("这个数字是按什么计的：整个池、一个节点，还是一块 GPU？",
                            "一个节点有 8 块 GPU：把节点的速率除以 8，而不是除以整个池的 72"),
    "14.explain_double_ep": ("这几项中，哪一项取决于有多少块芯片分摊那 288 个专家槽位？",
                             "比较 n = 72 和 144 时 ep_serving_step 的 memory_per_chip、comm_bytes 和 t_attention"),
}

WHY = {
    "14.mistake_per_node": {
        "nothing": "一个节点有几块 GPU？72 块 GPU 又是几个节点？",
        "prefill": "解码池的速率计的是输出 token；提示词是在别处完成预填充的",
    },
    "14.explain_double_ep": {
        "communication": "无论哪种 EP 度，一块 GPU 都要把它的每个 token 发给 8 个专家；变的只是留在本节点内的份额"
                         "（8/72 对 8/144）",
        "attention time": "每块 GPU 仍然为自己那些序列运行 attention",
        "KV cache": "无论 EP 度是多少，每块 GPU 都保存自己那些序列的缓存",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "14.touched_32": "617d77cea4e8eacb",
    "14.dispatch_qwen3": "f70edb1675893d7d",
    "14.predict_attention_overtakes": "775df1069847cd7d",
    "14.design_smallest_ep": "9eaf903e42653a17",
    "14.predict_gemm_share": "f16bf7b5821896f6",
    "14.pretraining_wall_clock": "5c5c93842302b853",
    "14.mistake_per_node": "8cec3d17a66fc1e8",
    "14.explain_double_ep": "7ca6a658af712390",
}
