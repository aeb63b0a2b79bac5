"""Around one step: the batch's third factor (gradient accumulation) and activation offloading.

A step's batch is a product of three choices. The **global batch** (sequences per optimizer step) is set by the
optimisation; the **micro-batch** (sequences one forward and backward run at once) by memory, since activations
grow with it; the **data-parallel replicas** by the number of chips. The third factor is what is left: each replica
runs ``global / (micro x dp)`` micro-batches and adds their gradients before the one optimizer step (gradient
accumulation; under pipeline parallelism the same micro-batches fill the pipeline). Accumulation costs no memory
beyond the gradient buffer (fp32 where the framework accumulates in fp32) and no FLOPs; it costs what is repeated
per micro-batch (ZeRO-3's gathers, chapter 13) and leaves fewer steps over which to hide the gradient reduction.

**Activation offloading** copies a layer's saved activations to host memory during the forward and back before its
backward. It is free only while the copy hides under compute: a layer's activations over the host link (one
direction) against the layer's forward. The forward is the tighter side (the backward has twice the compute
to hide the copy back), and counting only its matmuls at a given rate keeps the hidden share a lower bound.
"""

from __future__ import annotations

import typing

from ..core.checks import positive
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .flops import _attention_forward, _layer_matmul_params
from .memory import activation_bytes_per_layer


def accumulation_steps(global_batch, micro_batch, dp):
    """Micro-batches each data-parallel replica accumulates per optimizer step: global_batch / (micro_batch x dp),
    all in sequences. Raises ValueError where the global batch is not a whole number of micro-batches per replica.

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    g = positive("global_batch", global_batch, integer=True)
    b = positive("micro_batch", micro_batch, integer=True)
    d = positive("dp", dp, integer=True)
    if g % (b * d):
        raise ValueError(f"a global batch of {g} sequences is not a whole number of micro-batches of {b} on each of "
                         f"{d} replicas: it must be a multiple of micro_batch x dp = {b * d}")
    return g // (b * d)


class Offload(typing.NamedTuple):
    """One layer's activations offloaded to the host: bytes, the copy's time one way, the layer's forward time, and
    the share of the activations whose copy hides under that forward (1: all of it)."""

    bytes_per_layer: float
    copy_s: float
    forward_s: float
    hidden_share: float


def activation_offload(model, hw, micro_batch, seq_len, *, link_bandwidth=None, flops_per_s=None):
    """Offloading one layer's activations (FlashAttention, 16-bit, no recomputation; ``activation_bytes_per_layer``)
    while the layer's forward runs: ``link_bandwidth`` one way (default: the chip's host link, one direction) and the
    forward's weight and attention matmuls at ``flops_per_s`` (default: the chip's dense bf16 peak). An ``Offload``.

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    m, chip = get_model(model), get_accelerator(hw)
    b = positive("micro_batch", micro_batch, integer=True)
    s = positive("seq_len", seq_len, integer=True)
    if link_bandwidth is None:
        link_bandwidth = chip.host_link_bandwidth_per_direction
    link = positive("link_bandwidth", link_bandwidth)
    rate = positive("flops_per_s", chip.peak_flops("bf16") if flops_per_s is None else flops_per_s)
    activations = float(activation_bytes_per_layer(m, b, s))
    flops = b * s * (2 * _layer_matmul_params(m) + 0.5 * _attention_forward(m, s)) / m.num_layers  # causal
    copy_s, forward_s = activations / link, float(flops) / rate
    return Offload(activations, copy_s, forward_s, min(1.0, forward_s / copy_s))


__all__ = ["Offload", "accumulation_steps", "activation_offload"]
