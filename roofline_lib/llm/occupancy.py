"""FlashDecoding as occupancy: how many of a chip's SMs a decode attention kernel keeps busy.

A decode step has one query per sequence, so FlashAttention-2 launches only batch x heads thread
blocks; on a chip with more SMs than that most sit idle. FlashDecoding splits the KV sequence into
chunks, each its own block. This module counts blocks and busy SMs (chapter 06), and reproduces
flash-attn 2's own rule for the number of splits.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import positive
from ..specs.hardware import get_accelerator
from ..specs.models import get_model


def sm_utilisation(blocks, compute_units):
    """Share of a chip's SMs busy when ``blocks`` equal thread blocks run in waves of
    ``compute_units``: blocks / (SMs x waves). Fewer blocks than SMs leaves SMs idle. Vectorised.

    Taught in chapter 06 (notebooks/06_optimizations.ipynb)."""
    blocks = positive("blocks", blocks)
    units = positive("compute_units", compute_units, integer=True)
    waves = np.ceil(blocks / units)
    return blocks / (units * waves)


def decode_attention_blocks(model, batch, splits=1):
    """Thread blocks of a decode attention kernel: FlashAttention-2 launches one per (sequence,
    query head), since a decode step has a single query block; FlashDecoding also splits the KV
    sequence into ``splits`` chunks, each its own block (partial results merged afterwards).

    Taught in chapter 06 (notebooks/06_optimizations.ipynb)."""
    m = get_model(model)
    return positive("batch", batch) * m.num_heads * positive("splits", splits)


def flash_decoding_splits(model, hw, batch, context, min_chunk=256, max_splits=128):
    """How many KV splits the course's occupancy model gives FlashDecoding: the fewest whose SM utilisation
    (one block per SM) is within 85 % of the best over 1..max_splits, with chunks no shorter than
    ``min_chunk`` positions. A simplification of flash-attn's ``num_splits_heuristic``, which counts two
    blocks per SM and skips split counts that do not shorten the chunks (``flash_attn_num_splits``).
    Vectorised over batch and context.

    Taught in chapter 06 (notebooks/06_optimizations.ipynb)."""
    hw = get_accelerator(hw)
    if hw.compute_units is None:
        raise ValueError(f"{hw.name} has no SM/CU count in its data file; the occupancy model needs one")
    base = np.asarray(decode_attention_blocks(model, batch), dtype=float)
    most = np.maximum(np.floor(positive("context", context) / positive("min_chunk", min_chunk)), 1)
    base, most = np.broadcast_arrays(base, np.minimum(most, max_splits))
    candidates = np.arange(1, max_splits + 1).reshape((-1,) + (1,) * base.ndim)
    util = sm_utilisation(base * candidates, hw.compute_units)
    util = np.where(candidates <= most, util, 0.0)
    good = util >= 0.85 * util.max(axis=0)
    splits = candidates[np.argmax(good, axis=0)].reshape(base.shape) if base.ndim else candidates[np.argmax(good)]
    splits = np.asarray(splits, dtype=float).reshape(base.shape)
    return float(splits) if splits.ndim == 0 else splits


def flash_attn_num_splits_heuristic(batch_nheads_mblocks, num_sms, num_n_blocks, max_splits=128):
    """flash-attn 2's ``num_splits_heuristic`` (csrc/flash_attn/flash_api.cpp), line for line: no split once
    the blocks fill 80 % of ``num_sms`` slots; otherwise the fewest *eligible* splits (ones that shorten each
    split's run of KV blocks) whose wave efficiency is within 85 % of the best."""
    batch_nheads_mblocks = int(positive("batch_nheads_mblocks", batch_nheads_mblocks, integer=True))
    num_sms = int(positive("num_sms", num_sms, integer=True))
    num_n_blocks = int(positive("num_n_blocks", num_n_blocks, integer=True))
    if batch_nheads_mblocks >= 0.8 * num_sms:
        return 1
    max_splits = min(int(max_splits), num_sms, num_n_blocks)

    def eligible(s):
        return s == 1 or -(-num_n_blocks // s) != -(-num_n_blocks // (s - 1))

    efficiency = {}
    for s in range(1, max_splits + 1):
        if eligible(s):
            waves = batch_nheads_mblocks * s / num_sms
            efficiency[s] = waves / math.ceil(waves)
    best = max(efficiency.values())
    return next(s for s, e in efficiency.items() if e >= 0.85 * best)


def flash_attn_num_splits(model, hw, batch, context, q_len=1):
    """The KV splits flash-attn 2 picks for a decode attention call (``set_params_splitkv``): blocks of
    64 queries, KV blocks of 256/128/64 positions for head_dim <= 64/<= 128/larger, and two thread
    blocks per SM (128 threads each). Scalars only.

    Taught in chapter 06 (notebooks/06_optimizations.ipynb)."""
    m, hw = get_model(model), get_accelerator(hw)
    if hw.compute_units is None:
        raise ValueError(f"{hw.name} has no SM count in its data file; flash-attn's rule needs one")
    block_n = 256 if m.head_dim <= 64 else (128 if m.head_dim <= 128 else 64)
    n_blocks = math.ceil(positive("context", context, integer=True) / block_n)
    m_blocks = math.ceil(positive("q_len", q_len, integer=True) / 64)
    blocks = int(positive("batch", batch, integer=True)) * m.num_heads * m_blocks
    return flash_attn_num_splits_heuristic(blocks, 2 * hw.compute_units, n_blocks)


def decode_attention_time(model, hw, batch, context, kv_dtype="bf16", splits=1):
    """Time of one layer's decode attention if it streams the KV cache at the chip's bandwidth times
    the SM utilisation (the assumption: each busy SM draws at most its share, bandwidth / SMs).

    Taught in chapter 06 (notebooks/06_optimizations.ipynb)."""
    hw = get_accelerator(hw)
    m = get_model(model)
    if hw.compute_units is None:
        raise ValueError(f"{hw.name} has no SM/CU count in its data file; the occupancy model needs one")
    nbytes = m.kv_cache_bytes(batch, context, kv_dtype) / m.num_layers
    util = sm_utilisation(decode_attention_blocks(m, batch, splits), hw.compute_units)
    return nbytes / (hw.mem_bandwidth * util)


__all__ = [
    "decode_attention_blocks", "decode_attention_time", "flash_attn_num_splits", "flash_attn_num_splits_heuristic",
    "flash_decoding_splits", "sm_utilisation",
]
