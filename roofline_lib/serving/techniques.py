"""What serving engines do, as roofline arithmetic: each technique and the number it changes.

- ``static_vs_continuous``: a static batch runs until its longest request ends; continuous (in-flight)
  batching refills a finished slot at once. Output tokens per second of both, for stated output lengths.
- ``kv_fit``: contiguous KV allocation reserves the engine's maximum length per sequence; pages of
  ``page_tokens`` positions (vLLM's default block: 16 tokens) waste less than a page. The batch that fits.
- ``chunked_prefill``: a step that decodes ``batch`` sequences and runs a ``chunk`` of a new prompt, the
  weights read once; TPOT, TTFT and the step's intensity against a prefill that pauses the decoders.
- speculative decoding: in ``serving.speculative``.
- ``prefix_cache``: the FLOPs and TTFT a cached shared prefix saves (at a cache hit rate too), the KV memory it
  shares, and the decode step's reads of the prefix (once per sequence unless the kernel shares them).
- ``disaggregated``: prefill and decode on separate pools of chips: how many of each for an arrival rate,
  and the KV cache a request carries from one to the other.

Every time is a lower bound (max(t_math, t_mem) at the datasheet peaks) on one chip.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import fraction, positive
from ..core.units import SECONDS_PER_HOUR
from ..llm.memory import memory_required_unchecked, sequences_that_fit
from ..llm.setup import setup
from ..llm.steps import decode_step_unchecked, extend_step_unchecked, prefill_unchecked
from ..roofline.bounds import estimate
from ..roofline.workloads import Workload
from ..specs.topologies import get_topology
from .decode_sums import (
    FIRST_DECODE_OFFSET,
    decode_lines_unchecked,
    decode_time_unchecked,
    weight_bytes_read_unchecked,
)

# vLLM's KV cache block, in tokens: CacheConfig.DEFAULT_BLOCK_SIZE = 16 in vllm/config/cache.py
# (https://docs.vllm.ai/en/stable/api/vllm/config/cache/).
DEFAULT_PAGE_TOKENS = 16


def _time(w, hw):
    return estimate(w, hw).lower


# ---------------------------------------------------------------- static vs continuous batching

@dataclasses.dataclass(frozen=True)
class BatchingComparison:
    """The same requests served in static batches and with continuous batching: output tokens and seconds each way."""

    tokens: float  # output tokens of all the requests
    static_s: float  # seconds to serve them in static batches
    continuous_s: float  # seconds with continuous batching

    @property
    def static_throughput(self):
        """Output tokens per second with static batches."""
        return self.tokens / self.static_s

    @property
    def continuous_throughput(self):
        """Output tokens per second with continuous batching."""
        return self.tokens / self.continuous_s

    @property
    def gain(self):
        """How many times faster continuous batching serves the requests."""
        return self.static_s / self.continuous_s


def static_vs_continuous(model, hw, batch, prompt_len, output_lens, *, weight_dtype="bf16", kv_dtype="bf16",
                         compute_dtype="bf16"):
    """Serve requests of ``prompt_len`` prompt tokens and the given ``output_lens`` (one per request, in
    arrival order) with ``batch`` slots. Static: consecutive groups of ``batch``, each running its prefill
    and then as many decode steps as its longest request (finished sequences keep their slots). Continuous:
    a finished slot takes the next request at once, so every step decodes ``batch`` sequences: sum(O) / batch
    steps at the mean context. Both pay the same prefill per request (batched prefill / batch).

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
    batch = int(positive("batch", batch, integer=True))
    prompt_len = positive("prompt_len", prompt_len, integer=True)
    lens = np.asarray(positive("output_lens", output_lens, integer=True), dtype=float).ravel()
    n = lens.size
    per_prefill = _time(prefill_unchecked(s.model, batch, prompt_len, s.dt), s.hw) / batch
    groups = -(-n // batch)
    padded = np.zeros(groups * batch)
    padded[:n] = lens
    longest = padded.reshape(groups, batch).max(axis=1)
    sizes = np.minimum(batch, n - batch * np.arange(groups)).astype(float)
    static = n * per_prefill + float(np.sum(decode_time_unchecked(s, sizes, prompt_len + FIRST_DECODE_OFFSET, longest)))
    # a continuous batch holds sequences at every stage of their generation: over all the token-steps the
    # mean context is P + 1 + sum(O (O - 1) / 2) / sum(O), and a step's attention FLOPs and KV bytes are those of
    # `batch` sequences at that mean (both are affine in the context)
    a, b, c, d = decode_lines_unchecked(s, batch, prompt_len + FIRST_DECODE_OFFSET)
    half = np.sum(lens * (lens - 1) / 2) / lens.sum()
    step = max(a + b * half, c + d * half)
    continuous = n * per_prefill + lens.sum() / batch * step
    return BatchingComparison(float(lens.sum()), float(static), float(continuous))


# ---------------------------------------------------------------- paged vs contiguous KV cache

@dataclasses.dataclass(frozen=True)
class KVFit:
    """The KV cache's room on a chip, contiguous against paged: bytes free, bytes per position, and the positions each
    sequence uses and reserves each way."""

    free_bytes: float  # usable memory less the weights: what the KV cache may take
    bytes_per_position: float  # KV cache of one position of one sequence
    used_positions: float  # mean positions a sequence really holds
    contiguous_positions: float  # reserved per sequence, contiguous (the maximum length)
    paged_positions: float  # reserved per sequence, in whole pages (mean)

    def _batch(self, positions):
        return sequences_that_fit(self.free_bytes, positions * self.bytes_per_position)

    @property
    def contiguous_batch(self):
        """Sequences that fit when each reserves its maximum length contiguously."""
        return self._batch(self.contiguous_positions)

    @property
    def paged_batch(self):
        """Sequences that fit when each holds whole pages of what it uses."""
        return self._batch(self.paged_positions)

    @property
    def contiguous_waste(self):
        """Share of the reserved KV memory that holds no token."""
        return 1 - self.used_positions / self.contiguous_positions

    @property
    def paged_waste(self):
        """Share of the reserved positions a paged sequence leaves empty (its last page's unused part)."""
        return 1 - self.used_positions / self.paged_positions


def kv_fit(model, hw, lengths, max_len, *, page_tokens=DEFAULT_PAGE_TOKENS, weight_dtype="bf16", kv_dtype="bf16",
           usable_fraction=1.0, reserved_bytes=0.0):
    """How many sequences' KV caches fit beside the weights when sequences reach the stated ``lengths``
    (prompt + output positions, a sample of the distribution) and the engine allows up to ``max_len``.
    Contiguous allocation reserves ``max_len`` positions for each sequence (its length is not known in
    advance); paged allocation takes pages of ``page_tokens`` positions as the sequence grows. Capacity is
    the bytes the driver reports (``llm.usable_memory``).

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, usable_fraction=usable_fraction,
              reserved_bytes=reserved_bytes)
    lens = np.asarray(positive("lengths", lengths, integer=True), dtype=float).ravel()
    max_len = positive("max_len", max_len, integer=True)
    page = positive("page_tokens", page_tokens, integer=True)
    if lens.max() > max_len:
        raise ValueError(f"a length ({lens.max():g}) exceeds max_len ({max_len}): the engine would refuse it")
    free = s.usable - s.model.weight_bytes(s.dt.weight)
    return KVFit(float(free), float(s.model.kv_bytes_per_position(s.dt.kv)), float(lens.mean()), float(max_len),
                 float(np.mean(np.ceil(lens / page) * page)))


# ---------------------------------------------------------------- chunked prefill

@dataclasses.dataclass(frozen=True)
class MixedStep:
    """Chunked prefill: a decode step alone and with a prompt chunk riding along (weights read once), their times, and
    the prompt's prefill alone."""

    decode: Workload  # the decode step alone
    mixed: Workload  # decode + the prompt chunk, weights read once
    t_decode: object
    t_mixed: object
    t_prefill: object  # the whole prompt's prefill alone (decoders paused meanwhile)
    chunks: object  # steps the prompt takes in chunks

    @property
    def ttft_chunked(self):
        """Time to first token when the prompt goes in chunks, one per mixed step."""
        return self.chunks * self.t_mixed

    @property
    def stall_unchunked(self):
        """The longest gap between two tokens of a decoding sequence when a prompt's prefill runs alone."""
        return self.t_decode + self.t_prefill


def chunked_prefill(model, hw, batch, context, chunk, prompt_len, *, weight_dtype="bf16", kv_dtype="bf16",
                    compute_dtype="bf16"):
    """One step that decodes ``batch`` sequences at ``context`` and also runs ``chunk`` tokens of a new
    prompt of ``prompt_len`` tokens (counted as the prompt's first chunk: later chunks also attend to the
    earlier ones, so this is the least work), the weights read once. Vectorised over batch, context, chunk.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
    batch = positive("batch", batch, integer=True)
    context = positive("context", context, integer=True)
    prompt_len = positive("prompt_len", prompt_len, integer=True)
    chunk = positive("chunk", chunk, integer=True)
    if np.any(np.asarray(chunk) > prompt_len):
        raise ValueError(f"chunk ({chunk}) cannot exceed prompt_len ({prompt_len})")
    dec = decode_step_unchecked(s.model, batch, context, s.dt)
    part = extend_step_unchecked(s.model, 1, chunk, 0, s.dt)
    shared = weight_bytes_read_unchecked(s.model, s.dt, context)
    mixed = Workload.trusted("decode + prompt chunk (weights read once)", dec.flops + part.flops,
                             dec.bytes + part.bytes - shared, s.dt.compute)
    return MixedStep(dec, mixed, _time(dec, s.hw), _time(mixed, s.hw),
                     _time(prefill_unchecked(s.model, 1, prompt_len, s.dt), s.hw),
                     np.ceil(prompt_len / np.asarray(chunk)))


# ---------------------------------------------------------------- prefix caching

@dataclasses.dataclass(frozen=True)
class PrefixCache:
    """Prefix caching: the prompt prefilled whole (cold) and with its shared prefix read from the cache (warm), their
    TTFTs, and the KV bytes one shared copy saves."""

    cold: Workload  # the whole prompt prefilled
    warm: Workload  # only the request's own tokens, the shared prefix read from the cache
    ttft_cold: object
    ttft_warm: object
    kv_bytes_shared: object  # KV memory saved by holding one copy of the prefix for the batch
    decode: Workload | None = None  # the batch's first decode step, each sequence reading the prefix's KV itself
    decode_shared: Workload | None = None  # the same step, the prefix's KV read once for the batch
    t_decode: object = None
    t_decode_shared: object = None

    @property
    def flops_saved(self):
        """Share of the prefill's FLOPs the cached prefix saves."""
        return 1 - self.warm.flops / self.cold.flops

    def _hit(self, hit_rate):
        return np.asarray(fraction("hit_rate (the share of requests whose prefix is cached)", hit_rate), float)

    def prefill_flops_saved(self, hit_rate):
        """The share of all prefill FLOPs saved when a share ``hit_rate`` of the requests find the prefix cached
        (the others prefill it whole): hit_rate x flops_saved. Vectorised."""
        return _plain(self._hit(hit_rate) * self.flops_saved)

    def mean_ttft(self, hit_rate):
        """Mean TTFT (no queue) at a cache ``hit_rate``: hit_rate x ttft_warm + (1 - hit_rate) x ttft_cold."""
        h = self._hit(hit_rate)
        return _plain(h * self.ttft_warm + (1 - h) * self.ttft_cold)

    def prefill_capacity_gain(self, hit_rate):
        """How many times more prompts a prefill chip serves per second at ``hit_rate``: ttft_cold / mean_ttft."""
        return _plain(self.ttft_cold / np.asarray(self.mean_ttft(hit_rate)))

    @property
    def decode_prefix_share(self):
        """The share of the first decode step's bytes that are repeated copies of the prefix's KV: the batch - 1 reads
        beyond the first, which a kernel that reads the prefix once for the batch saves."""
        return self.kv_bytes_shared / self.decode.bytes


def prefix_cache(model, hw, batch, shared_len, own_len, *, weight_dtype="bf16", kv_dtype="bf16",
                 compute_dtype="bf16"):
    """``batch`` prompts that start with the same ``shared_len`` tokens (a system prompt) followed by
    ``own_len`` tokens of their own: prefill without a cache, and with the shared prefix's KV cache kept
    from an earlier request. Vectorised.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
    batch = positive("batch", batch, integer=True)
    shared = positive("shared_len", shared_len, integer=True)
    own = positive("own_len", own_len, integer=True)
    cold = prefill_unchecked(s.model, batch, np.asarray(shared) + own, s.dt)
    warm = extend_step_unchecked(s.model, batch, own, shared, s.dt)
    saved = (np.asarray(batch) - 1) * s.model.kv_bytes_per_position(s.dt.kv) * shared
    # decode: each sequence's attention reads the KV of its whole context, the shared prefix included, even
    # where the cache holds the prefix once (paged blocks shared by reference); a kernel that reads the prefix
    # once for the batch (cascade / shared-prefix attention) saves (batch - 1) copies of it per step
    dec = decode_step_unchecked(s.model, batch, np.asarray(shared) + own + FIRST_DECODE_OFFSET, s.dt)
    dec_shared = Workload.trusted("decode step, shared prefix read once", dec.flops, dec.bytes - saved, s.dt.compute)
    return PrefixCache(cold, warm, _time(cold, s.hw), _time(warm, s.hw), saved, dec, dec_shared, _time(dec, s.hw),
                       _time(dec_shared, s.hw))


def _plain(x):
    x = np.asarray(x, dtype=float)
    return x.item() if x.ndim == 0 else x


# ---------------------------------------------------------------- disaggregated prefill / decode

@dataclasses.dataclass(frozen=True)
class Disaggregated:
    """Prefill and decode on separate pools of chips: each pool's time per request, the chips each keeps busy at the
    arrival rate, and the KV cache sent between them."""

    prefill_chip: str
    decode_chip: str
    t_prefill: object  # chip-seconds of prefill per request
    t_step: object  # mean decode step at decode_batch
    decode_batch: object
    prefill_chips: object  # chips busy with prefill at the arrival rate (fractional)
    decode_chips: object  # chips busy decoding at the arrival rate (fractional)
    kv_bytes: object  # one request's KV cache, sent from the prefill chip to the decode chip
    kv_transfer_s: object  # at the link's bandwidth in one direction
    decode_fits: object  # whether decode_batch sequences fit on one decode chip

    @property
    def tpot(self):
        """Time per output token: the decode step alone, no prefill ever runs on a decode chip."""
        return self.t_step

    @property
    def ttft(self):
        """Time to first token without a queue: the prefill, then the KV cache's transfer (an upper end: engines
        send it layer by layer while the prefill runs, and can hide most of it)."""
        return self.t_prefill + self.kv_transfer_s

    @property
    def prefill_share(self):
        """The share of the busy chips' time that is prefill: what a colocated server on the same chips would
        take away from its decoders."""
        return self.prefill_chips / (self.prefill_chips + self.decode_chips)

    @property
    def colocated_mean_tpot(self):
        """A colocated server's mean time per output token: the same steps, stretched by the prefills that share
        the chips (t_step / (1 - prefill_share))."""
        return self.t_step / (1 - self.prefill_share)

    @property
    def colocated_worst_tpot(self):
        """A colocated server's worst step without chunked prefill: a whole prompt's prefill between two steps."""
        return self.t_step + self.t_prefill

    def cost_per_second(self, prefill_price_per_hour, decode_price_per_hour):
        """Cost of the chips in use per second, at the given prices per chip-hour."""
        return (positive("prefill_price_per_hour", prefill_price_per_hour) * self.prefill_chips
                + positive("decode_price_per_hour", decode_price_per_hour) * self.decode_chips) / SECONDS_PER_HOUR


# the default link between a prefill pool and a decode pool: the scale-out NIC of this system
KV_LINK_TOPOLOGY = "DGX H100"


def disaggregated(model, prefill_hw, decode_hw, rate, prompt_len, output_len, decode_batch, *, prefill_batch=1,
                  link_bandwidth=None, weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """Prefill on ``prefill_hw`` chips (``prefill_batch`` prompts per pass), decode on ``decode_hw`` chips each
    holding ``decode_batch`` sequences, for ``rate`` requests per second. ``link_bandwidth`` (bytes/s, one
    direction) carries each request's KV cache between the pools; the default is what separates them in practice,
    RDMA between nodes: one 400 Gb/s NIC per GPU, as a DGX H100 has (``data/topologies.toml``). Pass the chip's
    ``interconnect_bandwidth_per_direction`` for pools inside one NVLink domain.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    pre = setup(model, prefill_hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype)
    dec = pre.on(decode_hw)
    m = pre.model
    rate = positive("rate", rate)
    pb = positive("prefill_batch", prefill_batch, integer=True)
    prompt_len = positive("prompt_len", prompt_len, integer=True)
    output_len = positive("output_len", output_len, integer=True)
    decode_batch = positive("decode_batch", decode_batch, integer=True)
    t_pre = _time(prefill_unchecked(m, pb, prompt_len, pre.dt), pre.hw) / pb
    t_step = decode_time_unchecked(dec, decode_batch, prompt_len + FIRST_DECODE_OFFSET, output_len) / output_len
    kv = m.kv_bytes_per_position(pre.dt.kv) * prompt_len
    bw = positive("link_bandwidth", link_bandwidth) if link_bandwidth is not None \
        else get_topology(KV_LINK_TOPOLOGY).nic_bandwidth
    need = memory_required_unchecked(m, decode_batch, np.asarray(prompt_len) + output_len, pre.dt.weight, pre.dt.kv)
    return Disaggregated(pre.hw.name, dec.hw.name, t_pre, t_step, decode_batch, rate * t_pre,
                         rate * output_len * t_step / np.asarray(decode_batch), kv, kv / bw,
                         np.asarray(need) <= dec.usable)


__all__ = [
    "BatchingComparison", "chunked_prefill", "DEFAULT_PAGE_TOKENS", "Disaggregated", "disaggregated", "kv_fit",
    "KVFit", "MixedStep", "prefix_cache", "PrefixCache", "static_vs_continuous",
]
