"""Whole requests as rooflines: time to first token, time per output token, end-to-end latency,
throughput and cost, and the batch a server with continuous batching runs at an arrival rate.

    >>> import roofline_lib as rl
    >>> r = rl.serving.request("llama-2-7b", "A100", batch=1, prompt_len=512, output_len=128)
    >>> r
    RequestEstimate('Llama-2-7B' on 1 x A100 80GB SXM4, batch 1, P=512, O=128: TTFT 21.48 ms, TPOT 6.635 ms,
    e2e 0.8707 s, 147 tok/s, fits)

    r.ttft, r.tpot, r.e2e                       # seconds (lower bounds)
    r.throughput, r.throughput_per_chip         # output tokens/s of the system, of one chip
    r.cost_per_million_tokens(2.0)              # at a price per chip-hour you supply
    rl.serving.continuous("llama-2-7b", "A100", batch=[1, 8, 64], prompt_len=512, output_len=128)  # the curve
    rl.serving.best_batch_under_slo("llama-2-7b", "A100", 512, 128, tpot_slo=50e-3)

Conventions. A request has ``prompt_len`` (P) prompt tokens and ``output_len`` (O) output tokens. Its
time to first token (TTFT) is the prefill of the prompt. Then each output token costs one decode step:
step i (i = 1 .. O) attends to P + i positions, ``decode_step(context=P + i)``, the convention of
``rl.measurements`` (``decode_sums`` says why: O steps where a tight count is O - 1, 1/O of the decode time).
TPOT is the mean decode step; end-to-end = TTFT + O x TPOT. Every time is the roofline's lower bound,
max(t_math, t_mem) per step at the datasheet peaks, so no real server can beat it.

The sum over a request's decode steps is done in closed form, not step by step: t_math and t_mem of a
decode step are both affine in the context (attention FLOPs and KV bytes grow by a fixed amount per
position; everything else does not change), so the sum of their maximum over consecutive contexts is
two arithmetic series split where the two lines cross. ``batch``, ``prompt_len`` and ``output_len`` may
be numpy arrays (broadcast together): a 10,000-point sweep is three evaluations of the model.

On ``n_chips`` chips the model's work is split perfectly and communication is free (a lower bound still;
chapter 09 adds the links). Memory: weights + the KV cache of ``batch`` sequences of P + O positions
must fit in ``n_chips`` x the usable memory of one chip (``llm.usable_memory``: the bytes the driver
reports, times ``usable_fraction``, less ``reserved_bytes``).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..core.checks import positive
from ..core.units import SECONDS_PER_HOUR
from ..llm.memory import max_batch_unchecked, memory_required_unchecked
from ..llm.setup import setup
from ..llm.steps import prefill_unchecked
from ..roofline.bounds import estimate
from ..specs.hardware import Accelerator
from .decode_sums import (
    FIRST_DECODE_OFFSET,
    decode_lines_unchecked,
    decode_time_unchecked,
    weight_bytes_read_unchecked,
)


def cost_per_million(price_per_chip_hour, n_chips, tokens_per_second):
    """What a million tokens cost at ``price_per_chip_hour`` for each of ``n_chips`` chips serving
    ``tokens_per_second``: the one home of the formula (price x chips / 3600 s / rate x 1e6)."""
    price = positive("price_per_chip_hour", price_per_chip_hour)
    return price * n_chips / SECONDS_PER_HOUR / tokens_per_second * 1e6


@dataclasses.dataclass(frozen=True)
class RequestEstimate:
    """``batch`` requests of ``prompt_len`` + ``output_len`` tokens served together (seconds; lower bounds).

    ttft         prefill of the batch's prompts: time to first token
    decode_time  the O decode steps together
    tpot         decode_time / O: the mean time per output token
    e2e          ttft + decode_time: one request from arrival (no queueing) to its last token
    throughput   output tokens/s of the system: batch x O / e2e (whole requests, back to back)
    """

    model: str
    hw: Accelerator
    batch: object
    prompt_len: object
    output_len: object
    n_chips: int
    ttft: object
    decode_time: object
    memory_per_chip: object
    usable_memory: float

    @property
    def tpot(self):
        """Time per output token: the decode time over the output tokens, seconds."""
        return self.decode_time / self.output_len

    @property
    def e2e(self):
        """End-to-end latency: TTFT plus every decode step, seconds."""
        return self.ttft + self.decode_time

    @property
    def throughput(self):
        """Output tokens per second of the whole system (n_chips chips)."""
        return self.batch * self.output_len / self.e2e

    @property
    def throughput_per_chip(self):
        """Output tokens per second of one chip."""
        return self.throughput / self.n_chips

    @property
    def total_throughput(self):
        """Prompt and output tokens per second of the system (what some benchmarks call total token throughput)."""
        return self.batch * (self.prompt_len + self.output_len) / self.e2e

    @property
    def fits(self):
        """Whether weights and KV cache fit in one chip's usable memory."""
        return np.asarray(self.memory_per_chip) <= self.usable_memory

    def cost_per_million_tokens(self, price_per_chip_hour, tokens="output"):
        """Cost of a million output tokens (``tokens="total"``: prompt + output) at ``price_per_chip_hour``
        for each of the n_chips chips, in the price's currency, if the system serves at this throughput."""
        if tokens not in ("output", "total"):
            raise ValueError(f"tokens must be 'output' or 'total' (prompt + output); got {tokens!r}")
        rate = self.throughput if tokens == "output" else self.total_throughput
        return cost_per_million(price_per_chip_hour, self.n_chips, rate)

    def __repr__(self):
        if np.ndim(self.e2e):
            return f"RequestEstimate({self.model!r} on {self.hw.name}, array {np.shape(self.e2e)})"
        return (f"RequestEstimate({self.model!r} on {self.n_chips} x {self.hw.name}, batch {self.batch:g}, "
                f"P={self.prompt_len:g}, O={self.output_len:g}: TTFT {self.ttft * 1e3:.4g} ms, TPOT "
                f"{self.tpot * 1e3:.4g} ms, e2e {self.e2e:.4g} s, {self.throughput:.4g} tok/s, "
                f"{'fits' if self.fits else 'does NOT fit'})")


def request(model, hw, batch=1, prompt_len=512, output_len=128, *, weight_dtype="bf16", kv_dtype="bf16",
            compute_dtype="bf16", n_chips=1, usable_fraction=1.0, reserved_bytes=0.0):
    """TTFT, TPOT, end-to-end latency, throughput and memory of ``batch`` requests of ``prompt_len`` prompt
    and ``output_len`` output tokens (see the module docstring). Vectorised over batch, prompt and output.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype, n_chips=n_chips,
              usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)
    return request_unchecked(s, *_sizes(batch, prompt_len, output_len))


def _sizes(batch, prompt_len, output_len):
    return (positive("batch", batch, integer=True), positive("prompt_len", prompt_len, integer=True),
            positive("output_len", output_len, integer=True))


def request_unchecked(s, batch, prompt_len, output_len):
    """``request`` for a Setup and checked sizes."""
    m, n = s.model, s.n_chips
    ttft = estimate(prefill_unchecked(m, batch, prompt_len, s.dt), s.hw).lower / n
    dec = decode_time_unchecked(s, batch, np.asarray(prompt_len) + FIRST_DECODE_OFFSET, output_len) / n
    need = memory_required_unchecked(m, batch, np.asarray(prompt_len) + output_len, s.dt.weight, s.dt.kv) / n
    return RequestEstimate(m.name, s.hw, batch, prompt_len, output_len, n, ttft, dec, need, s.usable)


# ---------------------------------------------------------------- continuous batching at an arrival rate

@dataclasses.dataclass(frozen=True)
class ContinuousBatching:
    """A server that keeps ``batch`` sequences decoding (continuous batching), requests of P + O tokens.

    Every arriving request needs one prefill of t_prefill, which pauses the decoding batch (without chunked
    prefill). In a steady state the output token rate rate x O equals batch / t_step x (1 - rate x t_prefill),
    so the arrival rate that keeps ``batch`` sequences in flight is

        rate = batch / (O x t_step + batch x t_prefill)

    and each sequence waits for the others' prefills: TPOT = t_step + batch x t_prefill / O. Little's law
    holds: batch = rate x O x TPOT. With chunked prefill the prompts' work rides in the decode steps
    (weights read once): TPOT = the step doing batch decode tokens and batch x P / O prompt tokens.
    """

    request: RequestEstimate  # the decode steps at this batch (its tpot is the step alone)
    t_prefill: object  # one prompt's prefill (lower bound)
    tpot: object  # time between a sequence's tokens, prefills of the others included
    rate: object  # requests per second that keep `batch` in flight
    chunked: bool

    def __repr__(self):
        r = self.request
        if np.ndim(self.tpot) or np.ndim(r.batch):
            return f"ContinuousBatching({r.model!r} on {r.hw.name}, array {np.shape(self.tpot * r.batch)})"
        return (f"ContinuousBatching({r.model!r} on {r.n_chips} x {r.hw.name}, batch {r.batch:g}, P={r.prompt_len:g}, "
                f"O={r.output_len:g}{', chunked' if self.chunked else ''}: {self.rate:.4g} requests/s, TPOT "
                f"{self.tpot * 1e3:.4g} ms, e2e {self.e2e:.4g} s, {self.throughput:.4g} tok/s, "
                f"{'fits' if self.fits else 'does NOT fit'})")

    @property
    def batch(self):
        """Sequences decoding at once."""
        return self.request.batch

    @property
    def ttft(self):
        """The prompt's own prefill (no queueing): a lower bound on time to first token."""
        return self.t_prefill

    @property
    def e2e(self):
        """End-to-end latency of one request in the running batch: its prefill, then output_len steps at the batch's
        TPOT."""
        return self.t_prefill + self.request.output_len * self.tpot

    @property
    def throughput(self):
        """Output tokens/s of the system."""
        return self.rate * self.request.output_len

    @property
    def throughput_per_chip(self):
        """Output tokens per second of one chip."""
        return self.throughput / self.request.n_chips

    @property
    def fits(self):
        """Whether the batch's weights and KV cache fit in one chip's usable memory."""
        return self.request.fits

    def cost_per_million_tokens(self, price_per_chip_hour):
        """Dollars per million output tokens at ``price_per_chip_hour`` (``cost_per_million``)."""
        return cost_per_million(price_per_chip_hour, self.request.n_chips, self.throughput)


def continuous(model, hw, batch, prompt_len, output_len, *, chunked=False, weight_dtype="bf16", kv_dtype="bf16",
               compute_dtype="bf16", n_chips=1, usable_fraction=1.0, reserved_bytes=0.0):
    """Continuous batching with ``batch`` sequences in flight (see ``ContinuousBatching``). Vectorised over
    batch: an array of batches is the throughput-latency curve.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype, n_chips=n_chips,
              usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)
    return continuous_unchecked(s, *_sizes(batch, prompt_len, output_len), bool(chunked))


def continuous_unchecked(s, batch, prompt_len, output_len, chunked):
    """``continuous`` for a Setup and checked sizes."""
    r = request_unchecked(s, batch, prompt_len, output_len)
    pre = estimate(prefill_unchecked(s.model, 1, prompt_len, s.dt), s.hw)
    t_pre = pre.lower / s.n_chips
    step = r.tpot
    if chunked:
        # the mean decode step's t_math and t_mem, plus the prompt work of batch / O requests per step,
        # the weights (read by both) counted once
        a, b, c, d = decode_lines_unchecked(s, batch, np.asarray(prompt_len) + FIRST_DECODE_OFFSET)
        half = (np.asarray(output_len) - 1) / 2  # the mean step sits half way through the generation
        share = np.asarray(batch) / np.asarray(output_len)  # prompts started per step
        shared = weight_bytes_read_unchecked(s.model, s.dt, prompt_len) / s.hw.mem_bandwidth
        t_math = a + b * half + share * pre.t_math
        t_mem = c + d * half + share * np.maximum(pre.t_mem - shared, 0)
        tpot = np.maximum(t_math, t_mem) / s.n_chips
        rate = np.asarray(batch) / (np.asarray(output_len) * tpot)
    else:
        rate = np.asarray(batch) / (np.asarray(output_len) * step + np.asarray(batch) * t_pre)
        tpot = step + np.asarray(batch) * t_pre / np.asarray(output_len)
    return ContinuousBatching(r, t_pre, _scalar(tpot), _scalar(rate), chunked)


def _scalar(x):
    x = np.asarray(x, dtype=float)
    return x.item() if x.ndim == 0 else x


def capacity(model, hw, positions, n_chips=1, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0,
             reserved_bytes=0.0):
    """Deprecated: ``rl.llm.max_batch(model, hw, positions, n_chips=...)`` is the same number."""
    warnings.warn("rl.serving.capacity is deprecated; use rl.llm.max_batch(model, hw, context, n_chips=...)",
                  DeprecationWarning, stacklevel=2)
    from ..llm.memory import max_batch

    return max_batch(model, hw, positions, n_chips=n_chips, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                     usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)


def _curve(s, prompt_len, output_len, chunked):
    """Continuous batching at every batch from 1 to the most that fit (ValueError if none does)."""
    cap = max_batch_unchecked(s.model, s.usable, prompt_len + output_len, s.n_chips, s.dt.weight, s.dt.kv)
    if cap < 1:
        raise ValueError(f"{s.model.name} with {prompt_len + output_len} positions per sequence does not "
                         f"fit on {s.n_chips} x {s.hw.name}")
    return continuous_unchecked(s, np.arange(1, cap + 1), prompt_len, output_len, chunked)


def _sizes_po(prompt_len, output_len):
    return positive("prompt_len", prompt_len, integer=True), positive("output_len", output_len, integer=True)


def batch_for_rate(model, hw, prompt_len, output_len, rate, *, chunked=False, weight_dtype="bf16", kv_dtype="bf16",
                   compute_dtype="bf16", n_chips=1, usable_fraction=1.0, reserved_bytes=0.0):
    """The ContinuousBatching a server settles at for an arrival ``rate`` (requests/s): the fewest sequences in
    flight that serve it. ValueError when even the most sequences that fit cannot.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype, n_chips=n_chips,
              usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)
    prompt_len, output_len = _sizes_po(prompt_len, output_len)
    rate = positive("rate (requests per second)", rate)
    curve = _curve(s, prompt_len, output_len, bool(chunked))
    ok = np.nonzero(np.asarray(curve.rate) >= rate)[0]
    if ok.size == 0:
        raise ValueError(f"{rate:g} requests/s is more than {s.model.name} on {s.hw.name} "
                         f"can serve at P={prompt_len}, O={output_len}: at most {np.max(curve.rate):.4g}/s with "
                         f"{np.size(curve.rate)} sequences in flight (all that fit)")
    return continuous_unchecked(s, int(ok[0]) + 1, prompt_len, output_len, bool(chunked))


def best_batch_under_slo(model, hw, prompt_len, output_len, tpot_slo, *, chunked=False, weight_dtype="bf16",
                         kv_dtype="bf16", compute_dtype="bf16", n_chips=1, usable_fraction=1.0, reserved_bytes=0.0):
    """The ContinuousBatching with the most sequences in flight (so the highest throughput and the lowest cost
    per token) whose TPOT stays within ``tpot_slo`` seconds and whose KV cache fits. ValueError if not even
    batch 1 meets it.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype, n_chips=n_chips,
              usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)
    prompt_len, output_len = _sizes_po(prompt_len, output_len)
    slo = positive("tpot_slo", tpot_slo)
    curve = _curve(s, prompt_len, output_len, bool(chunked))
    ok = np.nonzero(np.asarray(curve.tpot) <= slo)[0]
    if ok.size == 0:
        raise ValueError(f"no batch meets TPOT <= {slo * 1e3:g} ms on {s.hw.name}: batch 1 "
                         f"takes {np.asarray(curve.tpot)[0] * 1e3:.4g} ms")
    return continuous_unchecked(s, int(ok[-1]) + 1, prompt_len, output_len, bool(chunked))


__all__ = [
    "batch_for_rate", "best_batch_under_slo", "capacity", "continuous", "ContinuousBatching", "cost_per_million",
    "request", "RequestEstimate"
]
