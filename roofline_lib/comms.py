"""Communication between chips: bytes moved by collectives, and how long they take.

Plain numpy (every argument may be an array, for sweeps); no hardware lookups here,
so bandwidths are passed in byte/s **per direction** (datasheets add both directions:
use ``hw.interconnect_bandwidth_per_direction``, or ``hw.host_link_bandwidth / 2``).

Conventions: ``n_chips`` chips in a ring; "bytes sent" is what each chip sends (it
receives as much); a message is the whole array being reduced or gathered.
"""

from __future__ import annotations

import numpy as np

from .validation import positive


def _chips(n_chips):
    return positive("n_chips", n_chips, integer=True)


def allgather_bytes(total_bytes, n_chips):
    """Bytes each chip sends in a ring all-gather of a ``total_bytes`` array split in n shards:
    it forwards n - 1 shards of total/n."""
    n = _chips(n_chips)
    return positive("total_bytes", total_bytes) * (n - 1) / n


def reduce_scatter_bytes(total_bytes, n_chips):
    """Bytes each chip sends in a ring reduce-scatter: n - 1 steps of one shard (total/n) each."""
    return allgather_bytes(total_bytes, n_chips)


def ring_allreduce_bytes(message_bytes, n_chips):
    """Bytes each chip sends in a ring all-reduce: 2 (n - 1) / n of the message.

    A reduce-scatter (n - 1 steps) followed by an all-gather (n - 1 steps), each step
    sending one shard of message/n to the next chip in the ring.
    """
    return 2 * allgather_bytes(message_bytes, n_chips)


def ring_allreduce_steps(n_chips):
    """Sequential steps of a ring all-reduce: 2 (n - 1); each pays the link latency once."""
    return 2 * (_chips(n_chips) - 1)


def transfer_time(nbytes, bandwidth, latency=0.0):
    """The latency + bytes / bandwidth model of one transfer (bandwidth per direction, byte/s)."""
    nbytes = np.asarray(nbytes, dtype=float)
    if np.any(~np.isfinite(nbytes)) or np.any(nbytes < 0):
        raise ValueError(f"nbytes must be finite and >= 0, got {nbytes!r}")
    latency = np.asarray(latency, dtype=float)
    if np.any(~np.isfinite(latency)) or np.any(latency < 0):
        raise ValueError(f"latency must be finite and >= 0 seconds, got {latency!r}")
    result = latency + nbytes / positive("bandwidth (byte/s, per direction)", bandwidth)
    return result.item() if np.ndim(result) == 0 else result


def ring_allreduce_time(message_bytes, n_chips, bandwidth, latency=0.0):
    """Time of a ring all-reduce: 2(n-1) steps, each latency + (message / n) / bandwidth.

    = 2(n-1) * latency + 2(n-1)/n * message / bandwidth. With one chip there is nothing to do: 0.
    """
    n = _chips(n_chips)
    steps = ring_allreduce_steps(n)
    return transfer_time(ring_allreduce_bytes(message_bytes, n), bandwidth, steps * np.asarray(latency, float))


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


def tp_decode_step(n_params, hidden, n_layers, batch, n_chips, mem_bandwidth, peak_flops, link_bandwidth,
                   latency=0.0, bytes_per_param=2, kv_bytes_per_token=0.0, context=0, activation_bytes=2):
    """Lower bounds on one decode step (one new token per sequence) of a dense transformer
    split over n chips with Megatron tensor parallelism.

    t_mem   each chip reads its 1/n of the weights (and of the KV cache) from its memory
    t_math  2 FLOPs per parameter and token, split over the chips
    t_comm  2 all-reduces per layer of [batch, hidden] activations over the link
            (``link_bandwidth`` per direction), each paying 2(n-1) latencies; activations are
            ``activation_bytes`` per element (bf16) whatever the weights' dtype
    Returns a dict of the three times and the bound (the largest). Communication is
    counted as not overlapped with the rest, the seed's sequential assumption.
    """
    n = _chips(n_chips)
    batch = positive("batch", batch)
    params = positive("n_params", n_params)
    weights = params * positive("bytes_per_param", bytes_per_param)
    kv = np.asarray(kv_bytes_per_token, dtype=float) * np.asarray(context, dtype=float) * batch
    t_mem = (weights + kv) / n / positive("mem_bandwidth", mem_bandwidth)
    t_math = 2 * params * batch / n / positive("peak_flops", peak_flops)
    message = batch * positive("hidden", hidden) * positive("activation_bytes", activation_bytes)
    per_layer = 2 * ring_allreduce_time(message, n,
                                        link_bandwidth, latency)
    t_comm = positive("n_layers", n_layers, integer=True) * np.asarray(per_layer, float)
    times = np.broadcast_arrays(np.asarray(t_math, float), np.asarray(t_mem, float), t_comm)
    names = np.array(["compute", "memory", "communication"])
    bound = names[np.argmax(np.stack(times), axis=0)]
    out = {"t_math": times[0], "t_mem": times[1], "t_comm": times[2], "bound": bound}
    if np.ndim(out["t_math"]) == 0:
        out = {k: (v.item() if isinstance(v, np.ndarray) else v) for k, v in out.items()}
        out["bound"] = str(out["bound"])
    return out
