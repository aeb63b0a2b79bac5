"""NCCL's own cost model of an all-reduce, as its tuner has it (rings and trees in its three protocols, NVLS in
the switch, nodes linked by NICs), on a system of ``data/topologies.toml``; and the one-shot/two-shot custom
all-reduce kernels engines ship for small messages.

    >>> import roofline_lib as rl
    >>> small = rl.comms.nccl_allreduce(16384, 8, "DGX H100")   # 16 KB over 8 GPUs: the low-latency protocol
    >>> small.algorithm, small.protocol
    ('ring', 'LL')
    >>> rl.comms.nccl_allreduce(1e9, 8, "DGX H100").algorithm    # 1 GB: the switch reduces (NVLS)
    'nvls'

``collectives`` (``rl.comms``) hands these out beside the ring's bytes and times; ``allreduce_time_on`` uses the
model for one chip's links.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ..core.checks import non_negative, positive
from ..specs.topologies import get_topology


def _chips(n_chips):
    return positive("n_chips", n_chips, integer=True)


# NVIDIA/nccl src/graph/tuning.cc at 5067397 (2.30.7), ncclTopoTuneModel: for every algorithm and protocol NCCL
# predicts time = latency + bytes / algorithm bandwidth, and runs the cheapest. Protocols: LL (8-byte flags,
# lowest latency, half the bandwidth), LL128 (128-byte lines), Simple (large chunks, full bandwidth). Left out:
# CollNet, NVLS-tree and PAT, per-channel caps (NCCL's channel counts are not modelled) and the tree pattern factor.
NCCL_PROTOCOLS = ("LL", "LL128", "Simple")
# baseLatencies (us): a fixed cost per collective, by algorithm and protocol; NVLS has none (its hwLat is all)
NCCL_BASE_LATENCY_US = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4), "nvls": (0.0, 0.0, 0.0)}
# hwLatencies (us): per step of a ring, per hop of a tree, or the whole of NVLS, by the link under it
NCCL_HW_LATENCY_US = {
    "nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4), "nvls": (0.0, 0.0, 25.0)},
    "pcie": {"tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7)},
    "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0)},
}
# the share of the bus bandwidth each protocol keeps (tuning.cc "model refinements", all-reduce): ring LL x .5
# (capped at llMaxBw), ring LL128 x .92; a tree's all-reduce x .92 first, then LL x 1/3.8 (capped), LL128 x 7/9 on
# one node and 120/128 across nodes. Ring LL's .5 holds since 2.21.5-1 (commit ab2b89c); older tunings (and forks
# such as RCCL) charge an all-reduce, or any ring across nodes, 1/4 and other collectives 1/3.
NCCL_RING_SHARE = {"LL": 0.5, "LL128": 0.92, "Simple": 1.0}
NCCL_TREE_SHARE = {"LL": 0.92 / 3.8, "LL128": 0.92 * 7 / 9, "Simple": 0.92}
NCCL_TREE_LL128_SHARE_NODES = 0.92 * 120 / 128
# ncclTopoGetAlgoTime's treeCorrectionFactor[protocol][log2(bytes / 64)] for tree all-reduces (LL, LL128, Simple)
NCCL_TREE_CORRECTION = {
    "LL": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    "LL128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    "Simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
}
# across nodes: llMaxBws' x86/Intel row, 39.0 GB/s on 2 nodes and 20.4 on more; getNetOverhead's 1.0 us (Intel;
# AMD 2.0), tripled for Simple, as a ring step's least latency; and a multi-node ring's Simple latency x 1.4 (the
# "plateau effect of ring", applied once bytes / (channels x ranks) >= 64: here from 64 x 32 channels x ranks)
NCCL_LL_MAX_NODES = {2: 39.0e9, 4: 20.4e9}
NCCL_NET_OVERHEAD_US = 1.0
NCCL_RING_PLATEAU = 1.4
# NCCL's own bandwidth for a link, as a share of the per-direction datasheet figure: NVLink per topo.h's
# SM80/SM90/SM100_NVLINK_BW, 20.0 / 20.6 / 40.1 GB/s per 25 / 25 / 50 GB/s link (NVLink 3 / 4 / 5); PCIe per topo.cc,
# width x speed / 80 (Gen4 x16: 24 of 32 GB/s, Gen5 x16: 48 of 64)
NCCL_NVLINK_SHARE = {3: 20.0 / 25, 4: 20.6 / 25, 5: 40.1 / 50}
NCCL_LINK_SHARE = {"nvlink": 0.8, "pcie": 0.75}  # nvlink: when the generation is not in the chip's data
# a scale-out NIC: NCCL takes its speed (400 Gb/s = 50 GB/s), and the path through the NIC's own PCIe Gen5 x16
# (48 GB/s by the rule above) bounds it: 0.96
NCCL_NET_SHARE = 0.96


@dataclasses.dataclass(frozen=True)
class NcclChoice:
    """NCCL's predicted time of one all-reduce for each (algorithm, protocol) it may run, and its pick."""

    seconds: float
    algorithm: str
    protocol: str
    options: dict  # (algorithm, protocol) -> predicted seconds


def _tree_correction(message, proto):
    """treeCorrectionFactor at log2(bytes / 64), 1 outside its 23 entries."""
    table = np.array(NCCL_TREE_CORRECTION[proto] + (1.0,))
    log_size = np.floor(np.log2(np.maximum(np.asarray(message, float), 1) / 64))
    index = np.where((log_size >= 0) & (log_size < 23), log_size, 23).astype(int)
    return table[index]


def _nccl_options(message, n, bus, link, nodes=1, nic=None, nvls_bus=None, ll_max=None):
    """(algorithm, protocol) -> predicted seconds of an all-reduce of ``message`` bytes over ``n`` GPUs in
    ``nodes`` nodes, by NCCL's tuner; ``bus`` is NCCL's bus bandwidth inside a node, ``nic`` the NIC per GPU,
    ``nvls_bus`` NVLS's bus bandwidth where the switch reduces (byte/s). LL128 runs over NVLink only, as NCCL
    enables it (typeIntra <= PATH_NVB)."""
    message = np.asarray(message, float)
    per_node = n // nodes
    steps = 2 * (n - 1)
    inter_steps = 2 * (nodes - 1)
    if nodes > 1:
        bus = min(bus, NCCL_NET_SHARE * nic)
        ll_max = NCCL_LL_MAX_NODES[2 if nodes == 2 else 4]
    options = {}
    for i, proto in enumerate(NCCL_PROTOCOLS):
        if proto == "LL128" and link != "nvlink":
            continue
        intra = NCCL_HW_LATENCY_US[link]["ring"][i]
        if nodes > 1:
            intra = max(intra, NCCL_NET_OVERHEAD_US * (3 if proto == "Simple" else 1))
        ring_lat = (NCCL_BASE_LATENCY_US["ring"][i] + (steps - inter_steps) * intra
                    + inter_steps * NCCL_HW_LATENCY_US["net"]["ring"][i]) * 1e-6
        if proto == "Simple" and nodes > 1:
            ring_lat = np.where(message / (32 * n) >= 64, ring_lat * NCCL_RING_PLATEAU, ring_lat)
        ring_bus = bus * NCCL_RING_SHARE[proto]
        if proto == "LL" and ll_max:
            ring_bus = min(ring_bus, ll_max)
        options["ring", proto] = ring_lat + message / (ring_bus * n / steps)
        tree_lat = (NCCL_BASE_LATENCY_US["tree"][i] + 2 * ((per_node - 1) * NCCL_HW_LATENCY_US[link]["tree"][i]
                                                         + math.log2(nodes) * NCCL_HW_LATENCY_US["net"]["tree"][i]))
        share = NCCL_TREE_LL128_SHARE_NODES if (proto == "LL128" and nodes > 1) else NCCL_TREE_SHARE[proto]
        tree_bus = bus * share
        if proto == "LL" and ll_max:
            tree_bus = min(tree_bus, ll_max)
        options["tree", proto] = tree_lat * 1e-6 + message / (tree_bus * 0.5 * _tree_correction(message, proto))
    if nvls_bus and nodes == 1 and link == "nvlink":
        # NVLS: the switch reduces; its latency is hwLat alone (25 us), its bandwidth its own graph's
        options["nvls", "Simple"] = NCCL_HW_LATENCY_US["nvlink"]["nvls"][2] * 1e-6 + message / (nvls_bus * n / steps)
    return options


def nccl_allreduce(message_bytes, n_gpus, topology):
    """NCCL's own prediction of an all-reduce of ``message_bytes`` over ``n_gpus`` GPUs of ``topology`` (a name
    from ``data/topologies.toml`` or a Topology): as many nodes as it takes, rings and trees in each protocol,
    NVLS where the switch has it; the cheapest wins (``NcclChoice``). One GPU: nothing to do.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    t = get_topology(topology)
    n = int(_chips(n_gpus))
    message = float(positive("message_bytes", message_bytes))
    if n == 1:
        return NcclChoice(0.0, "none", "none", {})
    options = _topology_options(t, message, n)
    (alg, proto), seconds = min(options.items(), key=lambda kv: float(kv[1]))
    return NcclChoice(float(seconds), alg, proto, {k: float(v) for k, v in options.items()})


def _topology_options(t, message, n):
    nodes = math.ceil(n / t.gpus_per_node)
    if nodes > 1:
        if t.nic_bandwidth is None:
            raise ValueError(f"{n} GPUs need {nodes} nodes of {t.name} ({t.gpus_per_node} each), and its data "
                             f"gives no scale-out NIC; at most {t.gpus_per_node} GPUs")
        if n % t.gpus_per_node:
            raise ValueError(f"{n} GPUs do not fill whole nodes of {t.gpus_per_node} ({t.name}): give a multiple")
    return _nccl_options(message, n, t.bus_bandwidth, t.link, nodes, t.nic_bandwidth, t.nvls_bus_bandwidth,
                         t.ll_max_bandwidth)


def allreduce_time_on_topology_unchecked(t, message_bytes, n):
    """The cheapest of NCCL's options for checked sizes (vectorised over ``message_bytes``); 0 on one GPU."""
    if n == 1:
        return 0.0 * np.asarray(message_bytes, float) if np.ndim(message_bytes) else 0.0
    result = functools.reduce(np.minimum, _topology_options(t, message_bytes, n).values())
    return result.item() if np.ndim(result) == 0 else result


# ---------------------------------------------------------------- engines' own small-message all-reduce

# vLLM csrc/custom_all_reduce.cuh: one-shot (each GPU reads every peer's buffer and reduces) while
# (world_size <= 4 and bytes < 512 KB) or (world_size <= 8 and bytes < 256 KB), else two-shot (a reduce-scatter
# and an all-gather through peer memory); world sizes 2, 4, 6, 8; every pair of GPUs must be NVLink-connected.
CUSTOM_ALLREDUCE_WORLD_SIZES = (2, 4, 6, 8)
# sglang PR #2904, 8 x H100, no CUDA graph: 5.7-5.9 us for the TensorRT-LLM-derived kernel at 2-16 KiB (its
# 512 and 4096 float32 values; vLLM's kernel: 9.3-10.1 us): the fixed cost of one shot.
CUSTOM_ALLREDUCE_LATENCY_S = 5.8e-6


def custom_allreduce_time(message_bytes, n_gpus, link_bandwidth, latency=CUSTOM_ALLREDUCE_LATENCY_S):
    """An engine's custom all-reduce over an all-to-all NVLink node (byte/s per GPU and direction):
    one-shot = latency + (n - 1) x message / bandwidth (every peer's whole buffer read) below vLLM's thresholds,
    else two-shot = 2 x latency + 2 (n - 1)/n x message / bandwidth. ValueError for a world size it refuses.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    n = int(_chips(n_gpus))
    if n == 1:
        return 0.0
    if n not in CUSTOM_ALLREDUCE_WORLD_SIZES:
        raise ValueError(f"custom all-reduce runs on {', '.join(map(str, CUSTOM_ALLREDUCE_WORLD_SIZES))} GPUs, "
                         f"not {n}; NCCL's (nccl_allreduce) runs on any")
    message = positive("message_bytes", message_bytes)
    bandwidth = positive("link_bandwidth (byte/s, per direction)", link_bandwidth)
    latency = non_negative("latency (s)", latency)
    message = np.asarray(message, float)
    # two GPUs always one-shot; up to 4 below 512 KB; up to 8 below 256 KB
    one_shot = True if n == 2 else (message < 512 * 1024) if n <= 4 else (message < 256 * 1024)
    result = np.where(one_shot, latency + (n - 1) * message / bandwidth,
                      2 * latency + 2 * (n - 1) / n * message / bandwidth)
    return result.item() if result.ndim == 0 else result


__all__ = [
    "CUSTOM_ALLREDUCE_LATENCY_S", "custom_allreduce_time", "CUSTOM_ALLREDUCE_WORLD_SIZES", "nccl_allreduce",
    "NCCL_BASE_LATENCY_US", "NCCL_HW_LATENCY_US", "NCCL_LINK_SHARE", "NCCL_LL_MAX_NODES", "NCCL_NET_OVERHEAD_US",
    "NCCL_NET_SHARE", "NCCL_NVLINK_SHARE", "NCCL_PROTOCOLS", "NCCL_RING_PLATEAU", "NCCL_RING_SHARE",
    "NCCL_TREE_CORRECTION", "NCCL_TREE_LL128_SHARE_NODES", "NCCL_TREE_SHARE", "NcclChoice"
]
