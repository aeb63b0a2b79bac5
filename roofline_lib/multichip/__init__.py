"""One model on several chips: the bytes and times of collectives over a link (``collectives``; NCCL's own
cost model in ``nccl``), and tensor, pipeline and expert parallelism and replicas built on them (``parallel``);
expert-parallel serving at scale, its all-to-alls as DeepEP moves them (``expert_serving``).
"""

from . import expert_serving
from .collectives import (
    LINK_ALIASES,
    LINKS,
    NCCL_BASE_LATENCY,
    NCCL_STEP_LATENCY,
    allgather_bytes,
    allreduce_time_on,
    alltoall_bytes,
    alltoall_time_on,
    canonical_link,
    link_bandwidth,
    megatron_layer_bytes,
    reduce_scatter_bytes,
    ring_allreduce_bytes,
    ring_allreduce_steps,
    ring_allreduce_time,
    send_time_on,
    tensor_parallel_matmul_bytes,
    transfer_time,
    weight_gathered_crossover_tokens,
    weight_gathered_layer_bytes,
)
from .expert_serving import alltoall_bytes_per_layer, ep_serving_step
from .parallel import (
    TERMS,
    MultiChipEstimate,
    ep_decode_step,
    kv_shards,
    pp_decode_step,
    replica_decode_step,
    tp_decode_step,
    tp_max_batch,
    tp_prefill,
)

__all__ = [
    "alltoall_bytes_per_layer", "ep_serving_step", "expert_serving",
    "allgather_bytes", "allreduce_time_on", "alltoall_bytes", "alltoall_time_on", "canonical_link", "ep_decode_step",
    "kv_shards", "LINK_ALIASES", "link_bandwidth", "LINKS", "megatron_layer_bytes", "MultiChipEstimate",
    "NCCL_BASE_LATENCY", "NCCL_STEP_LATENCY", "pp_decode_step", "reduce_scatter_bytes", "replica_decode_step",
    "ring_allreduce_bytes", "ring_allreduce_steps", "ring_allreduce_time", "send_time_on",
    "tensor_parallel_matmul_bytes", "TERMS", "tp_decode_step", "tp_max_batch", "tp_prefill", "transfer_time",
    "weight_gathered_crossover_tokens", "weight_gathered_layer_bytes"
]
