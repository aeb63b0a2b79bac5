"""The links a training step's collectives run over, and what each message costs before its bytes move.

``group_bandwidths``: the bus bandwidth (byte/s per GPU) of the tp, cp, dp and pp groups on a topology (chips
ranked tp fastest, then cp, dp, pp: Megatron's order). ``collective_latency`` and ``p2p_latency``: the fixed cost of
one collective or one send, from NCCL's own tuner (``multichip.nccl``, chapter 09): a base latency per collective
plus one per ring step (NVLink inside a node, the network across nodes), or a tree's log2 of the nodes where that
is cheaper, in the Simple protocol that large training messages use; ``tp_latency`` for one all-reduce's worth of
tensor-parallel traffic. ``DECOMPOSED_SM_SHARE``: what hiding TP under its neighbouring GEMM costs that GEMM.
Vectorised over the group sizes.
"""

from __future__ import annotations

import numpy as np

from ..multichip.nccl import NCCL_BASE_LATENCY_US, NCCL_HW_LATENCY_US, NCCL_NET_OVERHEAD_US

# Transformer Engine's userbuffers overlap (transformer_engine/pytorch/module/base.py, initialize_ub's
# get_default_config: "num_sm": 1 if method == "ring_exchange" else 16): the pipelined reduce-scatter overlaps run
# their communication on 16 SMs while the GEMM runs on the rest (an H100 has 132); the ring-exchange all-gathers
# take 1. Taken as half the layer's GEMMs losing 16/132 of the chip: 6 % of their time.
DECOMPOSED_SM_SHARE = 0.5 * 16 / 132

_SIMPLE = 2  # index of the Simple protocol in NCCL's (LL, LL128, Simple) tables


def group_bandwidths(topology, tp, cp, dp, pp):
    """Bus bandwidths (byte/s per GPU) of the tp, cp, dp and pp groups. A group inside one node runs at the
    node's bus bandwidth. One that spans nodes has k members on each node (the node's GPUs over the span of the
    faster groups), and NCCL's rings then cross nodes through k NICs at once: min(k x NIC, bus) (with k = 1 when
    tensor parallelism fills the node, one NIC per GPU). Point-to-point traffic (ring attention, pipeline sends)
    leaves through the sending GPU's own NIC.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    node = topology.gpus_per_node
    nic = topology.nic_bandwidth or 0.0
    bus = topology.bus_bandwidth

    def link(inner, size, p2p=False):
        inside = (inner * size <= node) | (size == 1)
        if nic == 0 and np.any(~inside):
            raise ValueError(f"{topology.name}: a group spans more than one node of {node} GPUs, but the "
                             "topology gives no NIC bandwidth (nic_GBps)")
        per_node = 1 if p2p else np.minimum(np.maximum(node // inner, 1), size)
        return np.where(inside, bus, np.minimum(per_node * nic, bus))

    return link(1, tp), link(tp, cp, p2p=True), link(tp * cp, dp), link(tp * cp * dp, pp, p2p=True)


def spans_nodes(topology, inner, size):
    """Whether a group of ``size`` chips, ``inner`` apart in the ranking, leaves one node (arrays in, out)."""
    return (inner * size > topology.gpus_per_node) & (size > 1)


def collective_latency(topology, inner, size, steps_per_rank=1):
    """Seconds one collective over ``size`` chips costs before its bytes (NCCL's Simple protocol): the base
    latency plus ``steps_per_rank`` x (size - 1) ring steps at the link's per-step latency (across nodes: the
    network's for the steps that cross, NCCL's net overhead for the rest), or a tree's 2 log2(nodes) network hops
    where that is less. An all-reduce has 2 steps per rank, an all-gather or reduce-scatter 1; one chip: 0.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    size = np.asarray(size, float)
    crossing = spans_nodes(topology, inner, size)
    node_span = np.maximum(topology.gpus_per_node // np.maximum(inner, 1), 1)
    nodes = np.where(crossing, np.ceil(size / node_span), 1.0)
    link = topology.link if topology.link in NCCL_HW_LATENCY_US else "nvlink"
    intra = NCCL_HW_LATENCY_US[link]["ring"][_SIMPLE]
    intra = np.where(crossing, np.maximum(intra, 3 * NCCL_NET_OVERHEAD_US), intra)
    net = NCCL_HW_LATENCY_US["net"]["ring"][_SIMPLE]
    steps = steps_per_rank * (size - 1)
    inter = steps_per_rank * (nodes - 1)
    ring = NCCL_BASE_LATENCY_US["ring"][_SIMPLE] + (steps - inter) * intra + inter * net
    tree = (NCCL_BASE_LATENCY_US["tree"][_SIMPLE] + steps_per_rank * (
        (np.minimum(size, node_span) - 1) * NCCL_HW_LATENCY_US[link]["tree"][_SIMPLE]
        + np.log2(nodes) * NCCL_HW_LATENCY_US["net"]["tree"][_SIMPLE]))
    out = np.where(size > 1, np.where(crossing, np.minimum(ring, tree), ring), 0.0) * 1e-6
    return out.item() if np.ndim(out) == 0 else out


def p2p_latency(topology, inner, size):
    """Seconds one point-to-point send costs before its bytes: a ring step's latency, NVLink's inside a node,
    the network's across nodes (NCCL's Simple protocol)."""
    crossing = spans_nodes(topology, inner, np.asarray(size))
    link = topology.link if topology.link in NCCL_HW_LATENCY_US else "nvlink"
    out = np.where(crossing, NCCL_HW_LATENCY_US["net"]["ring"][_SIMPLE],
                   NCCL_HW_LATENCY_US[link]["ring"][_SIMPLE]) * 1e-6
    return out.item() if np.ndim(out) == 0 else out


def tp_latency(topo, tp, sp):
    """NCCL's latency of one all-reduce's worth of TP traffic: one all-reduce (2 (t - 1) ring steps), or with
    sequence parallelism an all-gather and a reduce-scatter ((t - 1) steps each, two base latencies)."""
    return np.where(sp, 2 * collective_latency(topo, 1, tp, 1), collective_latency(topo, 1, tp, 2))


__all__ = ["DECOMPOSED_SM_SHARE", "collective_latency", "group_bandwidths", "p2p_latency", "spans_nodes", "tp_latency"]
