"""第 08 章：各题提示（先点拨，再给方法）与错误选项的解释。"""

HINTS = {
    "08.calls_per_second": ("实测的开销是每次调用的秒数；题目问的是每秒多少次调用",
                            "1 / overhead，overhead 为你实测的每次调用时间（秒）"),
    "08.h100_flat_region": ("只要启动时间长于数据搬运时间，就是启动受限：一次启动里搬运多少字节？",
                            "5e-6 s x 3.35e12 B/s / 每个元素 6 字节"),
    "08.async_total": ("第一个内核在一次启动之后开始；之后启动和内核中较慢的那个决定节奏；最后一个内核还要运行完",
                       "5e-6 + 99 x max(5e-6, 3e-6) + 3e-6 s；rl.launch.simulate_queue([3e-6] * 100, 5e-6).total "
                       "可以核对"),
    "08.decode_launch_bound": ("这一步的屋顶线时间除以它的内核个数",
                               "即 rl.estimate(rl.decode_step('llama-3-8b', 1, 4096), 'H200').lower / "
                               "rl.launch.decode_kernel_count('llama-3-8b')"),
    "08.fused_graph_boundary_time": ("CUDA Graph 去掉的是 CPU 的启动，而不是设备上内核之间的边界："
                                     "这一步融合后的内核两两之间各有一个边界，每个 5 us",
                                     "即 (rl.launch.decode_kernel_count('llama-3-8b', fused=True) - 1) x 5e-6 s"),
    "08.fewer_kernels": ("哪种手段改变内核的个数？哪些只改变一次启动的代价，或一个内核的工作量？",
                         "CUDA Graph 保留内核、让启动变便宜；批处理让每个内核处理更多序列"),
    "08.predict_async_idle": ("启动和内核哪个更慢？较慢的那个决定节奏，GPU 在其余时间里等待",
                              "total = 1000 x 5e-6 + 1.5e-6 s（最后一个内核还要运行）；idle = (total - 1000 x 1.5e-6) "
                              "/ total"),
    "08.design_batch_hides_launches": ("这一步仍是访存受限的：哪些字节随批大小增长，哪些只读一次？",
                                       "权重的 15 GB 读一次，每条序列再加 0.54 GB 的 KV 缓存，按 4.8 TB/s："
                                       "达到 3.87 ms 的最小 b"),
    "08.explain_more_overhead": ("这个占比是启动时间与这一步自身工作的比较：每种改动分别怎样移动两者？",
                                 "rl.launch.simulate_queue(times, cost).total / times.sum()，times 取自 "
                                 "rl.launch.decode_kernel_times(..., 'H200', b, 4096, ...)"),
    "08.mistake_added_launches": ("在 CUDA stream 上，CPU 会等每个内核跑完再启动下一个吗？",
                                  "异步：约为 n x max(启动, 内核) 再加最后一个内核；"
                                  "rl.launch.simulate_queue([2e-6] * 1000, 5e-6).total"),
}

WHY = {
    "08.explain_more_overhead": {
        "cuda graphs": "CUDA Graph 让每次启动变得很便宜（不到 1 us）：启动又被掩盖了。",
        "fusion": "融合后只启动 162 个内核而不是 387 个：同样的字节数，启动时间更少。",
        "larger batch": "批大小为 64 时读同样的权重和 64 份 KV 缓存：有更多访存时间来掩盖同样的启动。",
    },
    "08.mistake_added_launches": {
        "launch cost": "每次启动 5 us 是题设；错在把它们相加。",
        "kernel count": "1000 个内核是题设；错在把它们相加。",
        "nothing": "7 ms 是同步执行的时间；stream 让 CPU 能在 GPU 运行当前内核时就启动下一个。",
    },
}

# the English each entry translates (messages.english_sha): a changed English hint makes its entry stale
EN_SHA256 = {
    "08.calls_per_second": "871dc1c1d73f81fa",
    "08.h100_flat_region": "b7d224b65bad8cf1",
    "08.async_total": "f63ba461a280bb3c",
    "08.decode_launch_bound": "e8a14b04bca6f53f",
    "08.fused_graph_boundary_time": "18001908bfe03058",
    "08.fewer_kernels": "68c18c9bc5d68dd9",
    "08.predict_async_idle": "e41bce42583310ec",
    "08.design_batch_hides_launches": "d228743e10679a45",
    "08.explain_more_overhead": "8e82af7368ef08dd",
    "08.mistake_added_launches": "af7f362a9120d6b4",
}
