"""Figures measured with ``rl.trace`` from published traces of real GPU runs, quoted by chapter 15 with their
sources. The traces are not part of the course (they are other projects' test data); tests/test_trace.py
reads each one where it is at hand (``../shared/traces/``) and checks every figure below against it, to the
digits given.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedTrace:
    """A published trace: the file it was read from, where it comes from, what it records, and the figures
    ``rl.trace`` measured on it (seconds, shares, bytes/s, FLOP/s; each rounded as written)."""

    file: str
    source: str
    what: str
    figures: dict


TRACELENS = "AMD-AGI/TraceLens @171dd74 (MIT), tests/traces/"
HTA = "facebookresearch/HolisticTraceAnalysis @f4d0062 (MIT), tests/data/"

PUBLISHED = {
    "overhead": PublishedTrace(
        "b200-vllm-gptoss-prefill-eager.json.gz", TRACELENS + "b200/eager_trace.json.gz",
        "8 x B200, vLLM v1 in eager mode, tensor parallel 8, gpt-oss-120b's shapes, a prefill of 888 tokens",
        {"window_s": 84.5e-3, "busy_share": 0.14, "kernels": 768, "short_kernels": 585, "median_kernel_s": 6.3e-6,
         # the launch calls' median, and the median time from one call to the next on the launching thread
         "launch_call_s": 6.86e-6, "launch_interval_s": 83.6e-6,
         "communication_s": 2.14e-3, "communication_hidden_s": 0.0,
         # the LM head for the last token: 1 x 25136 x 2880 (the vocabulary split 8 ways), bf16
         "lm_head_s": 33.5e-6, "lm_head_bytes_per_s": 4.32e12}),
    "memory": PublishedTrace(
        "gfx950-vllm-decode-cudagraph.json.gz", TRACELENS + "inference/vllm_decode_full/graph_execution.json.gz",
        # the folder's name says gfx950, but the trace's deviceProperties (compute capability 9.4, 304 compute units,
        # 192 GiB) are an MI300X's (gfx942); vLLM only asks, in its stack, whether it runs on a gfx950
        "an AMD Instinct GPU recording an MI300X's properties (304 CUs, 192 GiB), vLLM decode of batch 32 replayed "
        "as one full graph, an MXFP4 MoE",
        {"window_s": 10.74e-3, "busy_share": 1.00, "kernels": 425,
         # between consecutive GPU activities: 433 boundaries, a mean 0.059 us idle each; the shortest of its 49
         # RMSNorms (32 x 2880 bf16, 0.4 MB)
         "boundaries": 433, "boundary_gap_s": 0.059e-6, "rmsnorm_min_s": 5.8e-6,
         # 430 of the 433 under 2 ns, the clock's last digit: each start is stamped where the one before ended
         "boundaries_under_2ns": 430,
         # the LM head outside the graph: 32 x 201088 x 2880, bf16
         "lm_head_s": 277e-6, "lm_head_bytes_per_s": 4.23e12}),
    "compute": PublishedTrace(
        "h100-qwen1.5-0.5b-forward.json.gz", TRACELENS + "h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
        "H100 80GB HBM3, a Hugging Face forward pass of Qwen1.5-0.5B-Chat on 16 x 559 tokens",
        {"window_s": 49.7e-3, "busy_share": 0.92, "launch_call_s": 3.33e-6, "launch_interval_s": 18.9e-6,
         # the MLP's gate and up projections, 8944 x 2816 x 1024 in bf16, 48 of them: their median rate
         "mlp_gemms": 48, "mlp_flops_per_s": 616.4e12, "elementwise_s": 28.8e-3, "gemm_s": 12.8e-3}),
    "communication": PublishedTrace(
        "v100-ddp-allreduce.json.gz", HTA + "df_index_resolver/df_index_resolver.json.gz",
        "V100-SXM2-32GB, rank 1 of 2, data-parallel training; NCCL all-reduce kernels on their own stream",
        {"window_s": 1.733, "busy_share": 0.58, "communication_s": 0.357, "communication_hidden_s": 0.0}),
    "split": PublishedTrace(
        "mi300x-sglang-qwen3-8b-decode.json.gz", TRACELENS + "inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        "MI300X, SGLang, Qwen3-8B decode at batch 32",
        {"window_s": 0.474, "split_gap_s": 0.463, "busy_share": 0.93, "busy_share_with_gap": 0.021}),
    "spinning": PublishedTrace(
        "a100-ddp-convnet-nccl.json.gz", HTA + "nccl_parser_config/nccl_data.json.gz",
        "A100, rank 0 of 2, data-parallel ConvNet; NCCL kernels record their messages",
        {"all_reduces": 15, "fastest_bus_bytes_per_s": 13.0e9, "communication_s": 46.9e-3,
         "communication_hidden_s": 7.7e-3,
         # the all-reduces' messages (fp32) and the slowest one: its time does not grow with its bytes
         "smallest_message_bytes": 8.196e6, "largest_message_bytes": 31.5e6,
         "slowest_all_reduce_s": 5.99e-3, "slowest_all_reduce_bytes": 8.196e6}),
}


__all__ = ["HTA", "PUBLISHED", "PublishedTrace", "TRACELENS"]
