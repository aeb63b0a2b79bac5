"""Communication between chips: bytes moved by collectives, and how long they take.

Plain numpy (every argument may be an array, for sweeps). Bandwidths are byte/s **per
direction** (datasheets add both directions: ``hw.interconnect_bandwidth_per_direction``, or
``hw.host_link_bandwidth_per_direction``); ``link_bandwidth(hw, link)`` picks one for a chip, and the
``*_on(hw, link, ...)`` functions add NCCL's latency model for that link.

``nccl_allreduce(message, n, topology)`` is NCCL's own cost model (rings and trees in its three protocols, NVLS
in the switch, nodes linked by NICs) on a system of ``data/topologies.toml``; ``custom_allreduce_time`` the
one-shot/two-shot kernels engines ship for small messages. Both live in ``nccl``; this module hands them out too.

Multi-chip steps of a model (``tp_decode_step``, ``tp_prefill`` ...) are built on these in ``parallel``.

Conventions: ``n_chips`` chips in a ring; "bytes sent" is what each chip sends (it
receives as much); a message is the whole array being reduced or gathered.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ..core.checks import non_negative, positive
from ..specs.hardware import get_accelerator
from ..specs.topologies import Topology
from .measured import CollectiveFigure, bus_bandwidth, published_collectives  # nccl-tests' bandwidths; data
from .nccl import (  # NCCL's model has its own module; rl.comms hands its names out too
    CUSTOM_ALLREDUCE_LATENCY_S,
    CUSTOM_ALLREDUCE_WORLD_SIZES,
    NCCL_BASE_LATENCY_US,
    NCCL_HW_LATENCY_US,
    NCCL_LINK_SHARE,
    NCCL_LL_MAX_NODES,
    NCCL_NET_OVERHEAD_US,
    NCCL_NET_SHARE,
    NCCL_NVLINK_SHARE,
    NCCL_PROTOCOLS,
    NCCL_RING_PLATEAU,
    NCCL_RING_SHARE,
    NCCL_TREE_CORRECTION,
    NCCL_TREE_LL128_SHARE_NODES,
    NCCL_TREE_SHARE,
    NcclChoice,
    _nccl_options,
    allreduce_time_on_topology_unchecked,
    custom_allreduce_time,
    nccl_allreduce,
)


def _chips(n_chips):
    return positive("n_chips", n_chips, integer=True)


def allgather_bytes(total_bytes, n_chips):
    """Bytes each chip sends in a ring all-gather of a ``total_bytes`` array split in n shards:
    it forwards n - 1 shards of total/n."""
    return _allgather_bytes(positive("total_bytes", total_bytes), _chips(n_chips))


def _allgather_bytes(total_bytes, n):
    return total_bytes * (n - 1) / n


def reduce_scatter_bytes(total_bytes, n_chips):
    """Bytes each chip sends in a ring reduce-scatter: n - 1 steps of one shard (total/n) each."""
    return allgather_bytes(total_bytes, n_chips)


def ring_allreduce_bytes(message_bytes, n_chips):
    """Bytes each chip sends in a ring all-reduce: 2 (n - 1) / n of the message.

    A reduce-scatter (n - 1 steps) followed by an all-gather (n - 1 steps), each step
    sending one shard of message/n to the next chip in the ring.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb).
    """
    return 2 * allgather_bytes(message_bytes, n_chips)


def ring_allreduce_bytes_unchecked(message_bytes, n):
    """``ring_allreduce_bytes`` for checked sizes (``n`` may be an array)."""
    return 2 * _allgather_bytes(message_bytes, n)


def ring_allreduce_steps(n_chips):
    """Sequential steps of a ring all-reduce: 2 (n - 1); each pays the link latency once."""
    return 2 * (_chips(n_chips) - 1)


def transfer_time(nbytes, bandwidth, latency=0.0):
    """The latency + bytes / bandwidth model of one transfer (bandwidth per direction, byte/s)."""
    nbytes = non_negative("nbytes", nbytes)
    return _transfer_time(nbytes, positive("bandwidth (byte/s, per direction)", bandwidth),
                          non_negative("latency (s)", latency))


def _transfer_time(nbytes, bandwidth, latency):
    result = latency + np.asarray(nbytes, dtype=float) / bandwidth
    return result.item() if np.ndim(result) == 0 else result


def ring_allreduce_time(message_bytes, n_chips, bandwidth, latency=0.0):
    """Time of a ring all-reduce: 2(n-1) steps, each latency + (message / n) / bandwidth.

    = 2(n-1) * latency + 2(n-1)/n * message / bandwidth. With one chip there is nothing to do: 0.
    """
    n = _chips(n_chips)
    return ring_allreduce_time_unchecked(positive("message_bytes", message_bytes), n,
                                positive("bandwidth (byte/s, per direction)", bandwidth),
                                non_negative("latency (s)", latency))


def ring_allreduce_time_unchecked(message_bytes, n, bandwidth, latency=0.0):
    """``ring_allreduce_time`` for checked sizes (what ``training.step`` calls); vectorised, n may be an array."""
    steps = 2 * (n - 1)  # a reduce-scatter and an all-gather of n - 1 steps each, one latency per step
    return _transfer_time(ring_allreduce_bytes_unchecked(message_bytes, n), bandwidth,
                          steps * np.asarray(latency, float))


# ---------------------------------------------------------------- tensor parallelism

def tensor_parallel_matmul_bytes(M, N, K, n_chips, bytes_per_element=2, layout="row"):
    """Bytes each chip sends for Y[M, N] = X[M, K] @ W[K, N] split over n chips.

    layout
      "column"          W split by columns: each chip makes M x N/n of Y from the whole X;
                        gathering Y on every chip is an all-gather of M*N elements
      "row"             W split by rows (X split along K): each chip makes a partial sum of
                        the whole Y; adding them is an all-reduce of M*N elements
      "weight-gathered" the weights move, not the activations: each chip all-gathers W
                        (K*N elements) and keeps its own rows of X and Y
    Megatron's MLP pairs a column split with a row split, so one all-reduce of M x N
    per block (see ``megatron_layer_bytes``).
    """
    M, N, K = positive("M", M), positive("N", N), positive("K", K)
    size = positive("bytes_per_element", bytes_per_element)
    if layout == "column":
        return allgather_bytes(M * N * size, n_chips)
    if layout == "row":
        return ring_allreduce_bytes(M * N * size, n_chips)
    if layout == "weight-gathered":
        return allgather_bytes(K * N * size, n_chips)
    raise ValueError(f"unknown layout {layout!r}; known: 'column', 'row', 'weight-gathered'")


def megatron_layer_bytes(tokens, hidden, n_chips, bytes_per_element=2):
    """Bytes each chip sends per transformer layer with Megatron tensor parallelism
    (activations move, weights stay): two all-reduces of the [tokens, hidden] activations,
    one after attention, one after the MLP.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    message = positive("tokens", tokens) * positive("hidden", hidden) * positive("bytes_per_element",
                                                                                   bytes_per_element)
    return 2 * ring_allreduce_bytes(message, n_chips)


def weight_gathered_layer_bytes(layer_params, n_chips, bytes_per_element=2):
    """Bytes each chip sends per layer when the weights move instead (all-gather of the
    layer's weights, activations stay put): independent of the number of tokens.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    return allgather_bytes(positive("layer_params", layer_params) * positive("bytes_per_element",
                                                                             bytes_per_element), n_chips)


def weight_gathered_crossover_tokens(layer_params, hidden):
    """Tokens per step above which gathering weights moves fewer bytes than moving activations:
    4 T h (n-1)/n = P (n-1)/n  ->  T = P / (4 h), whatever the chip count.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    return positive("layer_params", layer_params) / (4 * positive("hidden", hidden))


def alltoall_bytes(per_chip_bytes, n_chips):
    """Bytes each chip sends in an all-to-all where it holds ``per_chip_bytes`` spread evenly over
    the n chips: all but its own 1/n leaves it."""
    n = _chips(n_chips)
    return positive("per_chip_bytes", per_chip_bytes) * (n - 1) / n


# ---------------------------------------------------------------- links and NCCL's latency model

LINKS = {"nvlink": "interconnect_bandwidth", "pcie": "host_link_bandwidth"}
LINK_ALIASES = {"interconnect": "nvlink", "nvlink": "nvlink", "pcie": "pcie", "host": "pcie"}

# The ring-LL figures of NCCL's model below, kept by name: 6.6 us per collective, 0.6 us per step over NVLink
# and 1.0 over PCIe. Point-to-point sends and all-to-alls (``send_time_on``, ``alltoall_time_on``) borrow them:
# NCCL's tuner models neither, so those two are this course's assumption, not NCCL's. Set beside a measurement:
# DeepEP's low-latency dispatch of 128 tokens x 8 copies x 7,392 bytes over 8 H800s took 77 us (deepseek-ai/DeepEP
# docs/legacy.md); this model gives 6.6 + 7 x 0.6 + 33 us of NVLink = 44 us, below it (tests/test_expert_serving.py).
NCCL_BASE_LATENCY = 6.6e-6
NCCL_STEP_LATENCY = {"nvlink": 0.6e-6, "pcie": 1.0e-6}


def canonical_link(link):
    """'nvlink' or 'pcie' for a link name (also 'interconnect', 'host'); ValueError otherwise."""
    key = LINK_ALIASES.get(str(link).strip().lower()) if isinstance(link, str) else None
    if key is None:
        raise ValueError(f"unknown link {link!r}; known: 'nvlink' (the chip's interconnect) or 'pcie'")
    return key


def nccl_link_share(hw, link):
    """The share of ``hw``'s per-direction ``link`` bandwidth NCCL counts on: by NVLink generation where the chip's
    data names it ('NVLink4 (18 links)': 20.6 / 25), else ``NCCL_LINK_SHARE``."""
    key = canonical_link(link)
    if key == "nvlink":
        found = re.search(r"NVLink\s*(\d)", get_accelerator(hw).interconnect or "")
        if found and int(found.group(1)) in NCCL_NVLINK_SHARE:
            return NCCL_NVLINK_SHARE[int(found.group(1))]
    return NCCL_LINK_SHARE[key]


def link_bandwidth(hw, link):
    """Bandwidth of one direction of ``hw``'s NVLink (interconnect) or PCIe (host) link, byte/s: the chip's
    ``interconnect_bandwidth_per_direction`` or ``host_link_bandwidth_per_direction`` (the one home of the
    halving: datasheets add both directions)."""
    hw, key = get_accelerator(hw), canonical_link(link)
    if getattr(hw, LINKS[key]) is None:
        raise ValueError(f"{hw.name} has no {key} figure in its data file; "
                         f"it has: {', '.join(k for k, f in LINKS.items() if getattr(hw, f)) or 'none'}")
    return getattr(hw, LINKS[key] + "_per_direction")


def allreduce_time_on(hw, link, message_bytes, n_chips):
    """An all-reduce of ``message_bytes`` over n of ``hw``'s chips on ``link`` (one node, each chip with its own
    link), by NCCL's model: the cheapest of rings and trees in LL, LL128 and Simple, at NCCL's own share of the
    per-direction bandwidth (``NCCL_LINK_SHARE``). No NVLS and no shared switches: a system's wiring is a
    topology (``nccl_allreduce``). ``link`` may also be a Topology; 0 on one chip.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    return allreduce_time_on_unchecked(hw, link, positive("message_bytes", message_bytes), int(_chips(n_chips)))


def allreduce_time_on_unchecked(hw, link, message_bytes, n):
    """``allreduce_time_on`` for checked sizes (what ``parallel`` calls)."""
    if n == 1:
        return 0.0 * np.asarray(message_bytes, float) if np.ndim(message_bytes) else 0.0
    if isinstance(link, Topology):
        return allreduce_time_on_topology_unchecked(link, message_bytes, n)
    key = canonical_link(link)
    options = _nccl_options(message_bytes, n, nccl_link_share(hw, key) * link_bandwidth(hw, key), key)
    result = functools.reduce(np.minimum, options.values())
    return result.item() if np.ndim(result) == 0 else result


def send_time_on(hw, link, nbytes):
    """One point-to-point send of ``nbytes`` to the next chip (a pipeline stage's activations), by this
    course's assumption (NCCL's tuner does not model sends): ring-LL's 6.6 us + one step's hwLat + bytes /
    per-direction bandwidth."""
    key = canonical_link(link)
    return NCCL_BASE_LATENCY + transfer_time(nbytes, link_bandwidth(hw, key), NCCL_STEP_LATENCY[key])


def alltoall_time_on(hw, link, per_chip_bytes, n_chips):
    """An all-to-all (expert parallelism's dispatch or combine): each chip sends ``alltoall_bytes`` through its
    one link, paying 6.6 us + (n - 1) x ring-LL's hwLat (this course's assumption: NCCL's tuner does not model
    all-to-all); 0 on one chip."""
    n = int(_chips(n_chips))
    if n == 1:
        return 0.0
    key = canonical_link(link)
    return NCCL_BASE_LATENCY + transfer_time(alltoall_bytes(per_chip_bytes, n), link_bandwidth(hw, key),
                                             (n - 1) * NCCL_STEP_LATENCY[key])


__all__ = [
    "allgather_bytes", "allreduce_time_on", "alltoall_bytes", "alltoall_time_on", "bus_bandwidth", "canonical_link",
    "CollectiveFigure", "published_collectives",
    "CUSTOM_ALLREDUCE_LATENCY_S", "custom_allreduce_time", "CUSTOM_ALLREDUCE_WORLD_SIZES", "LINK_ALIASES",
    "link_bandwidth", "LINKS", "megatron_layer_bytes", "nccl_allreduce", "NCCL_BASE_LATENCY", "NCCL_BASE_LATENCY_US",
    "NCCL_HW_LATENCY_US", "NCCL_LINK_SHARE", "nccl_link_share", "NCCL_LL_MAX_NODES", "NCCL_NET_OVERHEAD_US",
    "NCCL_NET_SHARE", "NCCL_NVLINK_SHARE", "NCCL_PROTOCOLS", "NCCL_RING_PLATEAU", "NCCL_RING_SHARE",
    "NCCL_STEP_LATENCY", "NCCL_TREE_CORRECTION", "NCCL_TREE_LL128_SHARE_NODES", "NCCL_TREE_SHARE", "NcclChoice",
    "reduce_scatter_bytes", "ring_allreduce_bytes", "ring_allreduce_steps", "ring_allreduce_time", "send_time_on",
    "tensor_parallel_matmul_bytes", "transfer_time", "weight_gathered_crossover_tokens", "weight_gathered_layer_bytes"
]
