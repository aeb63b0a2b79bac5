"""LLM inference on one chip: a transformer step as kernels (``parts`` and ``blocks``), prefill, decode
and extend steps with time by part and category (``steps``), memory and the largest batch (``memory``), fusion
as traffic (``fusion``), FlashDecoding's occupancy (``occupancy``) and the routed experts a batch touches
(``experts``).
"""

from . import experts
from .blocks import RMSNORM_FLOPS, ROPE_FLOPS, SILU_MUL_FLOPS
from .experts import experts_touched
from .fusion import attention_chain, gated_mlp_chain
from .memory import (
    CUDA_CONTEXT_BYTES,
    VLLM_GPU_MEMORY_UTILIZATION,
    fits,
    max_batch,
    memory_required,
    sequences_that_fit,
    usable_memory,
)
from .occupancy import (
    decode_attention_blocks,
    decode_attention_time,
    flash_attn_num_splits,
    flash_attn_num_splits_heuristic,
    flash_decoding_splits,
    sm_utilisation,
)
from .parts import ATTENTION_WEIGHTS, CATEGORIES, KV_CACHE, LM_HEAD, MLP_WEIGHTS, SMALL_OPS, PartKind, Sharding
from .steps import category_of, decode_step, extend_step, kernel_sum_time, prefill, time_by_category, time_by_part

__all__ = [
    "attention_chain", "ATTENTION_WEIGHTS", "CATEGORIES", "category_of", "CUDA_CONTEXT_BYTES",
    "decode_attention_blocks", "decode_attention_time", "decode_step", "experts", "experts_touched", "extend_step",
    "fits", "flash_attn_num_splits", "flash_attn_num_splits_heuristic", "flash_decoding_splits", "gated_mlp_chain",
    "kernel_sum_time", "KV_CACHE", "LM_HEAD", "max_batch", "memory_required", "MLP_WEIGHTS", "PartKind", "prefill",
    "RMSNORM_FLOPS", "ROPE_FLOPS", "sequences_that_fit", "Sharding", "SILU_MUL_FLOPS", "sm_utilisation", "SMALL_OPS",
    "time_by_category", "time_by_part", "usable_memory", "VLLM_GPU_MEMORY_UTILIZATION"
]
