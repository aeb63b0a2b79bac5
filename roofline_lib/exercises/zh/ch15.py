"""第 15 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "15.busy_share": ("忙碌是指至少有一个内核在运行，不论在哪个 stream 上：两个内核同时运行只算一次",
                      "把三个区间合并成互不相交的区间，长度相加，再除以窗口长度"),
    "15.exposed_comm": ("被掩盖的是 all-reduce 期间有计算内核在运行的那部分；暴露的是其余部分",
                        "把 [50, 90] us 与每个计算区间求交，重叠部分相加，再从它的长度中减去"),
    "15.gemm_rate": ("[m, k] @ [k, n]：哪个数是 m，哪个是 n，哪个是 k？一次乘加是两次 FLOP",
                     "2 m n k 次 FLOP 除以内核的秒数"),
    "15.predict_graph_decode": ("GPU 很忙，所以不是开销受限；屋顶线模型怎样看只有 8 行的 GEMM？",
                                "rl.matmul(8, 14336, 4096).intensity 与 "
                                "rl.get_accelerator('H100').ridge_point('bf16') 比较"),
    "15.predict_launch_bound": ("启动和内核哪个更慢？较慢的那个决定整个窗口的节奏",
                                "忙碌 = 1000 x 4 us；trace 的窗口从第一个内核开始（在第一次启动之后，即 7 us）"
                                "到最后一个内核结束：999 次各 7 us 的启动，再加最后一个内核"),
    "15.mistake_split_gap": ("一个解码步有多长？那个间隙又有多长？",
                             "比周围工作长得多的间隙，是 trace 被切开的地方：把它去掉（rl.trace 的 split_gaps），"
                             "再算其余部分的忙碌占比"),
    "15.mistake_nccl_rate": ("NCCL 内核从启动到另一个 rank 也启动它自己的内核之间，在做什么？",
                             "集合通信的内核会一直自旋，直到所有 rank 都加入：它的时间是等待加传输；"
                             "由此算出的速率是链路速率的下限，"
                             "而不是它的测量值"),
    "15.explain_sum_exceeds_busy": ("两个内核同时运行时，两者中哪一个把同一时刻算了两次？",
                                    "time_by_category 把每个内核自己的时间相加；busy_s 是所有 stream 上的并集"),
    "15.design_overlapped_step": ("通信中还有哪一部分是在旁边没有计算的情况下运行的？",
                                  "计算内核的时间，只加上暴露的那部分"),
}

WHY = {
    "15.predict_graph_decode": {
        "overhead": "一块 98 % 时间都在忙的 GPU，几乎没有空闲时间可以算作开销",
        "compute": "把这个 GEMM 的计算访存比（每个权重字节约 2 m 次 FLOP）与 H100 的拐点比较",
    },
    "15.mistake_split_gap": {
        "nothing": "在一个只有几 ms 的解码步里，463 ms 的间隙是空闲时间，还是 trace 被切开了？",
    },
    "15.mistake_nccl_rate": {
        "bytes": "2 个 rank：环形 all-reduce 每个发送 2 (n - 1) / n = 1 条消息；字节数是对的",
        "nothing": "NCCL 内核是一启动就开始发送，还是等另一个 rank 到了才发送？",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "15.busy_share": "a8b62328d2102e65",
    "15.exposed_comm": "858909d3d6287b9f",
    "15.gemm_rate": "29519f46ba2e16c3",
    "15.predict_graph_decode": "b10c4ce6448bc9df",
    "15.predict_launch_bound": "87f112dd987e1b03",
    "15.mistake_split_gap": "e81aaa5eb5f8cd2e",
    "15.mistake_nccl_rate": "0a2b25da658fb0df",
    "15.explain_sum_exceeds_busy": "4718ac6e621ec701",
    "15.design_overlapped_step": "bb7b7d05ba842763",
}
