"""Chapter 9: communication-bound."""

from .. import get_accelerator
from ..comms import ring_allreduce_bytes, ring_allreduce_time, tp_decode_step, weight_gathered_crossover_tokens
from .core import Question

# Llama-2-70B (meta-llama/Llama-2-70b-hf config.json): hidden 8192, 80 layers, MLP 28672, 64 heads, 8 kv heads
HIDDEN, LAYERS, FFN, KV_DIM = 8192, 80, 28672, 8 * 128
LAYER_PARAMS = 2 * HIDDEN * HIDDEN + 2 * HIDDEN * KV_DIM + 3 * HIDDEN * FFN
N_PARAMS = 69e9


def _allreduce_bytes():
    return ring_allreduce_bytes(64e6, 8)


def _nvlink_time():
    return ring_allreduce_time(64e6, 8, get_accelerator("H100").interconnect_bandwidth_per_direction)


def _nvlink_over_pcie():
    hw = get_accelerator("H100")
    return hw.interconnect_bandwidth / hw.host_link_bandwidth


def _crossover():
    return weight_gathered_crossover_tokens(LAYER_PARAMS, HIDDEN)


def _decode_bound_pcie():
    hw = get_accelerator("H100")
    return str(tp_decode_step(N_PARAMS, HIDDEN, LAYERS, 64, 8, hw.mem_bandwidth, hw.peak_flops("bf16"),
                              hw.host_link_bandwidth / 2, latency=1e-6)["bound"])


QUESTIONS = [
    Question("09.allreduce_bytes", "Bytes each of 8 chips sends in a ring all-reduce of a 64 MB message.",
             _allreduce_bytes, unit="B", hint="2 (N - 1) / N of the message"),
    Question("09.nvlink_allreduce_time", "Time of that all-reduce over H100 SXM NVLink, bandwidth term only.",
             _nvlink_time, unit="s", hint="NVLink's 900 GB/s adds both directions: a ring sends one way"),
    Question("09.nvlink_over_pcie", "How many times faster is H100 SXM NVLink than its PCIe Gen5 x16 link?",
             _nvlink_over_pcie, rtol=0.02, hint="compare like with like: both directions, or one direction"),
    Question("09.crossover_tokens", "Tokens per step above which gathering Llama-2-70B's weights moves fewer bytes "
             "than moving activations (per layer).", _crossover, unit="tokens", hint="P_layer / (4 x hidden)"),
    Question("09.decode_bound_pcie", "Llama-2-70B bf16 decode on 8 x H100 over PCIe (1 us per ring step), "
             "batch 64: 'compute', 'memory' or 'communication'?", _decode_bound_pcie, kind="choice",
             choices=("compute", "memory", "communication")),
]
