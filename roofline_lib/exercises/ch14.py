"""Chapter 14: mixture of experts. Each answer is computed with the library's own functions (experts touched, the
all-to-all's bytes, an expert-parallel step, a whole run's GPU-hours) from the figures the prompt gives."""

from .core import Question

EP_CHOICES = (8, 16, 32, 64, 72, 144)


def _touched(tokens=32):
    from ..llm.experts import experts_touched

    return float(experts_touched("deepseek-v3", tokens))


def _dispatch_qwen3():
    from ..multichip.expert_serving import dispatch_bytes_per_copy

    return 8 * dispatch_bytes_per_copy("qwen3-235b-a22b", "fp8")


def _step(chip, batch, context, ep, usable_fraction=1.0):
    from ..multichip.expert_serving import ep_serving_step

    return ep_serving_step("deepseek-v3", chip, batch, context, ep, redundant_experts=(-256) % ep,
                           usable_fraction=usable_fraction)


def _attention_overtakes():
    return next(b for b in (2**i for i in range(12)) if (st := _step("H200", b, 2000, 8)).t_attention > st.t_experts)


def _smallest_ep_that_fits():
    return next(n for n in EP_CHOICES if _step("H800", 128, 4096, n, usable_fraction=0.85).fits)


def _gemm_share():
    from ..training.moe import grouped_gemm_efficiency

    return float(grouped_gemm_efficiency("deepseek-v3", "H800", 8))


def _pretraining_wall_clock():
    from ..training.records import RUNS_DIR, training_runs

    run = next(r for r in training_runs(RUNS_DIR / "moe") if r.id == "gpuhours-deepseek-v3-pretraining")
    return run.gpu_hours / 2048 * 3600


QUESTIONS = [
    Question("14.touched_32", "DeepSeek-V3 routes each token to 8 of its 256 routed experts. How many distinct experts "
             "does one MoE layer read, on average, for a decode step of 32 sequences (uniform routing)?", _touched,
             rtol=0.01, unit="experts",
             hints=("one token misses a given expert with probability 1 - 8/256; 32 independent tokens all miss it "
                    "with that probability to the 32nd power",
                    "256 x (1 - (1 - 8/256)^32), or rl.llm.experts_touched('deepseek-v3', 32)")),
    Question("14.dispatch_qwen3", "Qwen3-235B-A22B has hidden size 4096 and routes each token to 8 experts. How many "
             "bytes does DeepEP's low-latency dispatch send per token per MoE layer, in FP8 with one fp32 scale per "
             "128 channels?", _dispatch_qwen3, rtol=0.01, unit="B",
             hints=("the low-latency kernels send one copy of the token to each of its experts: how big is one copy?",
                    "8 copies x (4096 one-byte values + 4096/128 scales of 4 bytes)")),
    Question("14.predict_attention_overtakes", "Predict, then check with rl.multichip.ep_serving_step: DeepSeek-V3 "
             "on one 8 x H200 node (EP8, fp8 weights) at 2,000 positions. From how many sequences per GPU (a power of "
             "two, whether or not it fits the memory) does the attention side take longer than the routed experts?",
             _attention_overtakes, unit="sequences", rounding="up",
             hints=("the experts' bytes per GPU hardly grow with the batch once all are touched; what grows with "
                    "every sequence?",
                    "for b = 16, 32, 64, ...: step = rl.multichip.ep_serving_step('deepseek-v3', 'H200', b, 2000, 8); "
                    "the first b with step.t_attention > step.t_experts")),
    Question("14.design_smallest_ep", "Design: DeepSeek-V3 (fp8 weights, bf16 latent cache) decoding 128 sequences per "
             "H800 at 4,096 positions. What is the smallest EP degree among 8, 16, 32, 64, 72 and 144 (72 and 144 with "
             "32 redundant experts) at which one GPU's weights and KV cache fit in 85 % of its memory (the rest kept "
             "for activations, DeepEP's buffers and CUDA graphs)?", _smallest_ep_that_fits,
             unit="chips", rounding="up",
             hints=("the KV cache of a GPU's own 128 sequences is the same at every EP degree; what shrinks as EP "
                    "grows?",
                    "try rl.multichip.ep_serving_step('deepseek-v3', 'H800', 128, 4096, n, redundant_experts=..., "
                    "usable_fraction=0.85).fits for each n in turn")),
    Question("14.predict_gemm_share", "Predict, then check: one DeepSeek-V3 expert's gate/up GEMM ([M, 7168] x "
             "[7168, 4096], fp8) on an H800 at M = 8 tokens routed to it. What share of the fp8 peak can it reach?",
             _gemm_share, rtol=0.02,
             hints=("at 8 rows, does reading the expert's 29 MB of weights or computing on them take longer?",
                    "rl.training.moe.grouped_gemm_efficiency('deepseek-v3', 'H800', 8): time at peak over the "
                    "roofline bound")),
    Question("14.pretraining_wall_clock", "DeepSeek-V3's pretraining took 2.664M H800 GPU-hours. How long did it run "
             "on its 2,048-GPU cluster, if every GPU was busy the whole time? Answer in seconds.",
             _pretraining_wall_clock,
             rtol=0.01, unit="s",
             hints=("GPU-hours spread over 2,048 GPUs give hours of wall clock",
                    "2.664e6 / 2048 hours, times 3600 seconds")),
    Question("14.mistake_per_node", "Find the mistake: \"SGLang's decode pool reached 22,282 tokens/s per node on 72 "
             "H100s, so each GPU produced 22,282 / 72 = 309 tokens/s.\" What is wrong: 'per node', 'prefill', "
             "'batch' or 'nothing'?", lambda: "per node", kind="choice",
             choices=("per node", "prefill", "batch", "nothing"),
             why={"nothing": "how many GPUs does one node hold, and how many nodes are 72 GPUs?",
                  "prefill": "a decode pool's rate counts output tokens; the prompts were prefilled elsewhere"},
             hints=("what is the figure per: the pool, a node, or a GPU?",
                    "a node holds 8 GPUs: divide the node's rate by 8, not by the pool's 72")),
    Question("14.explain_double_ep", "Explain: DeepSeek decodes on EP144, SGLang on EP72, at the same sequences "
             "per GPU. In the course's model, what does doubling the EP degree cut most, per GPU: 'expert weights', "
             "'communication', 'attention time' or 'KV cache'?", lambda: "expert weights", kind="choice",
             choices=("expert weights", "communication", "attention time", "KV cache"),
             why={"communication": "a GPU sends each of its tokens to 8 experts either way; only the share that "
                                      "stays in its node changes (8/72 vs 8/144)",
                  "attention time": "each GPU still runs attention for its own sequences",
                  "KV cache": "each GPU keeps its own sequences' cache, whatever the EP degree"},
             hints=("which of these depends on how many chips share the 288 expert slots?",
                    "compare ep_serving_step at n = 72 and 144: memory_per_chip, comm_bytes, t_attention")),
]
