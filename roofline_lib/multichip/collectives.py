"""Communication between chips: bytes moved by collectives, and how long they take.

Plain numpy (every argument may be an array, for sweeps). Bandwidths are byte/s **per
direction** (datasheets add both directions: ``hw.interconnect_bandwidth_per_direction``, or
``hw.host_link_bandwidth_per_direction``); ``link_bandwidth(hw, link)`` picks one for a chip, and the
``*_on(hw, link, ...)`` functions add NCCL's latency model for that link.

Multi-chip steps of a model (``tp_decode_step``, ``tp_prefill`` ...) are built on these in ``parallel``.

Conventions: ``n_chips`` chips in a ring; "bytes sent" is what each chip sends (it
receives as much); a message is the whole array being reduced or gathered.
"""

from __future__ import annotations

import numpy as np

from ..core.checks import non_negative, positive
from ..specs.hardware import get_accelerator


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
    """
    return 2 * allgather_bytes(message_bytes, n_chips)


def ring_allreduce_bytes_unchecked(message_bytes, n):
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
    return _ring_allreduce_time(positive("message_bytes", message_bytes), n,
                                positive("bandwidth (byte/s, per direction)", bandwidth),
                                non_negative("latency (s)", latency))


def _ring_allreduce_time(message_bytes, n, bandwidth, latency):
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
    one after attention, one after the MLP."""
    message = positive("tokens", tokens) * positive("hidden", hidden) * positive("bytes_per_element",
                                                                                   bytes_per_element)
    return 2 * ring_allreduce_bytes(message, n_chips)


def weight_gathered_layer_bytes(layer_params, n_chips, bytes_per_element=2):
    """Bytes each chip sends per layer when the weights move instead (all-gather of the
    layer's weights, activations stay put): independent of the number of tokens."""
    return allgather_bytes(positive("layer_params", layer_params) * positive("bytes_per_element",
                                                                             bytes_per_element), n_chips)


def weight_gathered_crossover_tokens(layer_params, hidden):
    """Tokens per step above which gathering weights moves fewer bytes than moving activations:
    4 T h (n-1)/n = P (n-1)/n  ->  T = P / (4 h), whatever the chip count."""
    return positive("layer_params", layer_params) / (4 * positive("hidden", hidden))


def alltoall_bytes(per_chip_bytes, n_chips):
    """Bytes each chip sends in an all-to-all where it holds ``per_chip_bytes`` spread evenly over
    the n chips: all but its own 1/n leaves it."""
    n = _chips(n_chips)
    return positive("per_chip_bytes", per_chip_bytes) * (n - 1) / n


# ---------------------------------------------------------------- links and NCCL's latency model

LINKS = {"nvlink": "interconnect_bandwidth", "pcie": "host_link_bandwidth"}
LINK_ALIASES = {"interconnect": "nvlink", "nvlink": "nvlink", "pcie": "pcie", "host": "pcie"}

# NCCL's own cost model (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel, as at upstream commit
# b6475625): a collective by ring with the low-latency LL protocol costs baseLat 6.6 us plus hwLat per
# ring step, 0.6 us over NVLink and 1.0 us over PCI; an all-reduce takes 2(n - 1) steps, an all-gather
# n - 1. (NCCL 2.7's table had 3.6 us and 0.47 us: the figures are NCCL's estimates and change with it.)
NCCL_BASE_LATENCY = 6.6e-6
NCCL_STEP_LATENCY = {"nvlink": 0.6e-6, "pcie": 1.0e-6}


def canonical_link(link):
    """'nvlink' or 'pcie' for a link name (also 'interconnect', 'host'); ValueError otherwise."""
    key = LINK_ALIASES.get(str(link).strip().lower()) if isinstance(link, str) else None
    if key is None:
        raise ValueError(f"unknown link {link!r}; known: 'nvlink' (the chip's interconnect) or 'pcie'")
    return key


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
    """A ring all-reduce of ``message_bytes`` over n of ``hw``'s chips on ``link``, by NCCL's model:
    baseLat + 2(n - 1) x hwLat + 2(n - 1)/n x message / per-direction bandwidth; 0 on one chip."""
    return allreduce_time_on_unchecked(hw, link, positive("message_bytes", message_bytes), int(_chips(n_chips)))


def allreduce_time_on_unchecked(hw, link, message_bytes, n):
    """``allreduce_time_on`` for checked sizes (what ``parallel`` calls)."""
    if n == 1:
        return 0.0 * np.asarray(message_bytes, float) if np.ndim(message_bytes) else 0.0
    key = canonical_link(link)
    return NCCL_BASE_LATENCY + _ring_allreduce_time(message_bytes, n, link_bandwidth(hw, key), NCCL_STEP_LATENCY[key])


def send_time_on(hw, link, nbytes):
    """One point-to-point send of ``nbytes`` to the next chip (a pipeline stage's activations):
    baseLat + one step's hwLat + bytes / per-direction bandwidth."""
    key = canonical_link(link)
    return NCCL_BASE_LATENCY + transfer_time(nbytes, link_bandwidth(hw, key), NCCL_STEP_LATENCY[key])


def alltoall_time_on(hw, link, per_chip_bytes, n_chips):
    """An all-to-all (expert parallelism's dispatch or combine): each chip sends
    ``alltoall_bytes`` through its one link, paying baseLat + (n - 1) x hwLat; 0 on one chip."""
    n = int(_chips(n_chips))
    if n == 1:
        return 0.0
    key = canonical_link(link)
    return NCCL_BASE_LATENCY + transfer_time(alltoall_bytes(per_chip_bytes, n), link_bandwidth(hw, key),
                                             (n - 1) * NCCL_STEP_LATENCY[key])


__all__ = [
    "allgather_bytes", "allreduce_time_on", "allreduce_time_on_unchecked", "alltoall_bytes", "alltoall_time_on",
    "canonical_link", "LINK_ALIASES", "link_bandwidth", "LINKS", "megatron_layer_bytes", "NCCL_BASE_LATENCY",
    "NCCL_STEP_LATENCY", "reduce_scatter_bytes", "ring_allreduce_bytes", "ring_allreduce_bytes_unchecked",
    "ring_allreduce_steps", "ring_allreduce_time", "send_time_on", "tensor_parallel_matmul_bytes", "transfer_time",
    "weight_gathered_crossover_tokens", "weight_gathered_layer_bytes",
]
