"""Chapter 9: communication-bound. Model shapes come from data/models, never typed here."""

import math

from .. import get_accelerator
from ..comms import ring_allreduce_bytes, ring_allreduce_time, weight_gathered_crossover_tokens
from ..models import get_model
from ..parallel import ep_decode_step, replica_decode_step, tp_decode_step
from .core import Question


def _allreduce_bytes():
    return ring_allreduce_bytes(64e6, 8)


def _nvlink_time():
    return ring_allreduce_time(64e6, 8, get_accelerator("H100").interconnect_bandwidth_per_direction)


def _nvlink_over_pcie():
    hw = get_accelerator("H100")
    return hw.interconnect_bandwidth / hw.host_link_bandwidth


def _crossover():
    m = get_model("llama-2-70b")
    groups = m.param_groups()
    return weight_gathered_crossover_tokens((groups["attention"] + groups["dense_mlp"]) / m.num_layers,
                                            m.hidden_size)


def _decode_bound_pcie():
    return tp_decode_step("llama-2-70b", "H100 SXM", 64, 4096, 8, "pcie").bound


def _bubble_microbatches(n_stages=8, idle_share=0.1):
    # idle / step = (n - 1) / (m + n - 1) <= share  ->  m >= (n - 1)(1 - share) / share
    return math.ceil((n_stages - 1) * (1 - idle_share) / idle_share - 1e-9)


def _ep_bytes():
    return float(ep_decode_step("mixtral-8x7b", "H100 SXM", 64, 4096, 8, "nvlink").comm_bytes)


def _replicas_or_tp():
    tp = tp_decode_step("llama-2-7b", "H100 SXM", 64, 4096, 8, "nvlink")
    rep = replica_decode_step("llama-2-7b", "H100 SXM", 64, 4096, 8)
    return "replicas" if rep.exposed < tp.exposed else "tensor"


QUESTIONS = [
    Question("09.allreduce_bytes", "Bytes each of 8 chips sends in a ring all-reduce of a 64 MB message.",
             _allreduce_bytes, unit="B", hint="2 (N - 1) / N of the message"),
    Question("09.nvlink_allreduce_time", "Time of that all-reduce over H100 SXM NVLink, bandwidth term only.",
             _nvlink_time, unit="s", hint="NVLink's 900 GB/s adds both directions: a ring sends one way"),
    Question("09.nvlink_over_pcie", "How many times faster is H100 SXM NVLink than its PCIe Gen5 x16 link?",
             _nvlink_over_pcie, rtol=0.02, hint="compare like with like: both directions, or one direction"),
    Question("09.crossover_tokens", "Tokens per step above which gathering Llama-2-70B's weights moves fewer bytes "
             "than moving activations (per layer).", _crossover, unit="tokens", hint="P_layer / (4 x hidden)"),
    Question("09.decode_bound_pcie", "Llama-2-70B bf16 decode on 8 x H100 SXM over PCIe, batch 64, context 4096 "
             "(KV cache included): which term is largest, 'compute', 'memory' or 'communication'?",
             _decode_bound_pcie, kind="choice", choices=("compute", "memory", "communication"),
             hint="the KV cache of 64 sequences of 4096 positions is read every step too"),
    Question("09.bubble_microbatches", "A decode step on 8 pipeline stages: the fewest microbatches that keep the "
             "idle time (fill and drain) at or below 10 % of the step.", _bubble_microbatches, rtol=0,
             unit="microbatches", hint="idle share = (n - 1) / (m + n - 1)"),
    Question("09.ep_alltoall_bytes", "Mixtral-8x7B decode, batch 64 (8 sequences per chip), experts spread over "
             "8 x H100: bytes each chip sends per step in the all-to-alls (bf16 activations).", _ep_bytes, unit="B",
             hint="2 all-to-alls per MoE layer; each token's hidden vector goes to 2 experts, 7/8 of them elsewhere"),
    Question("09.replicas_or_tp", "Llama-2-7B, batch 64, context 4096 on 8 x H100 SXM (NVLink): is a decode step "
             "faster as 8 'replicas' (8 sequences each) or 'tensor' parallel over 8 (communication not hidden)?",
             _replicas_or_tp, kind="choice", choices=("replicas", "tensor")),
]
