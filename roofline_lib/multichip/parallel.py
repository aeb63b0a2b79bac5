"""One model on several chips, as rooflines: tensor, pipeline and expert parallelism, and replicas.

    m = rl.get_model("llama-2-70b")
    e = rl.parallel.tp_decode_step(m, "H100 SXM", batch=1, context=4096, n_chips=8, link="nvlink")
    e.t_math, e.t_mem, e.t_comm          # per chip, seconds
    e.overlapped, e.sequential           # max of the terms (perfect overlap); their sum (no overlap)
    e.exposed                            # max(t_math, t_mem) + t_comm: communication waits, kernels overlap
    e.bound, e.memory_per_chip, e.fits   # which term is largest; weights + KV cache held by one chip

Every step starts from ``llm``'s per-part workloads of the same model (``decode_step``, ``prefill``)
and splits each part over the chips the way the strategy does; nothing about a model's shape is
typed here. Each function takes ``model, hw`` like the rest of the library and returns a
``MultiChipEstimate``. Links are ``"nvlink"`` (the chip's interconnect) or ``"pcie"`` (its host
link), at their bandwidth **per direction**, with NCCL's own latency model (``comms``).

Tensor parallel (Megatron): every matmul and attention head split n ways, norms and residual adds
done on every chip, two all-reduces of the step's activations per layer. The KV cache splits by
KV head, so beyond ``num_kv_heads`` chips it is copied (MLA's shared latent is never split).
Left out everywhere: the LM head's gather of logits, kernel launches, load imbalance between
chips and experts, and anything the link's latency model does not see (synchronisation, skew).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from ..core.checks import positive
from ..core.dtypes import BYTES_PER_ELEMENT
from ..llm.memory import sequences_that_fit
from ..llm.parts import Sharding
from ..llm.setup import setup
from ..llm.steps import decode_step_unchecked, prefill_unchecked
from ..roofline.bounds import estimate
from ..specs.hardware import Accelerator
from ..specs.models import get_model
from ..specs.topologies import Topology, get_topology, list_topologies
from . import collectives

TERMS = ("compute", "memory", "communication")


@dataclasses.dataclass(frozen=True)
class MultiChipEstimate:
    """Time bounds of one step of a model split over ``n_chips`` chips, per chip, in seconds.

    t_math, t_mem  the FLOPs and bytes one chip does (the busiest, where they differ)
    t_comm         what one chip spends on the link (collectives or point-to-point sends)
    t_idle         time a chip waits with nothing to do (a pipeline's fill and drain), else 0
    overlapped     max(t_math, t_mem, t_comm) + t_idle: everything hidden behind the largest term
    sequential     t_math + t_mem + t_comm + t_idle: nothing overlapped (each part waits for the one before)
    exposed        max(t_math, t_mem) + t_comm + t_idle: each kernel overlaps its own compute and
                   memory, communication waits for it (tensor-parallel decode: the next matmul needs
                   the all-reduced activations)
    """

    name: str
    hw: Accelerator
    strategy: str
    n_chips: int
    link: str
    tokens: object  # tokens the step produces (decode) or processes (prefill)
    t_math: object
    t_mem: object
    t_comm: object
    comm_bytes: object  # bytes each chip sends per step
    memory_per_chip: object  # bytes of weights + KV cache one chip holds
    usable_memory: float  # bytes one chip has for them (see llm.usable_memory)
    t_idle: object = 0.0

    @property
    def terms(self):
        """{"compute": t_math, "memory": t_mem, "communication": t_comm}, seconds per chip."""
        return {"compute": self.t_math, "memory": self.t_mem, "communication": self.t_comm}

    @property
    def overlapped(self):
        """The largest term (plus idle time): compute, memory and communication fully overlapped."""
        return np.maximum(np.maximum(self.t_math, self.t_mem), self.t_comm) + self.t_idle

    @property
    def sequential(self):
        """The sum of the terms (plus idle time): nothing overlapped."""
        return self.t_math + self.t_mem + self.t_comm + self.t_idle

    @property
    def exposed(self):
        """max(t_math, t_mem) + t_comm (plus idle time): kernels overlap, communication waits."""
        return np.maximum(self.t_math, self.t_mem) + self.t_comm + self.t_idle

    @property
    def lower(self):
        """Deprecated: the older name of ``overlapped``."""
        warnings.warn("MultiChipEstimate.lower is deprecated; use .overlapped", DeprecationWarning, stacklevel=2)
        return self.overlapped

    @property
    def upper(self):
        """Deprecated: the older name of ``sequential``."""
        warnings.warn("MultiChipEstimate.upper is deprecated; use .sequential", DeprecationWarning, stacklevel=2)
        return self.sequential

    @property
    def bound(self):
        """The largest of the three terms: 'compute', 'memory' or 'communication'."""
        stacked = np.stack(np.broadcast_arrays(*(np.asarray(t, float) for t in self.terms.values())))
        result = np.array(TERMS)[np.argmax(stacked, axis=0)]
        return str(result) if result.ndim == 0 else result

    @property
    def comm_share(self):
        """t_comm / sequential: the share of a no-overlap step spent on the link."""
        return self.t_comm / self.sequential

    @property
    def fits(self):
        """Whether one chip's weights and KV cache fit in its usable memory."""
        return np.asarray(self.memory_per_chip) <= self.usable_memory

    def mean(self):
        """The same estimate with every per-step figure averaged over its array (a generation's steps
        at contexts prompt + 1 ... prompt + output: the mean step)."""
        fields = ("tokens", "t_math", "t_mem", "t_comm", "comm_bytes", "memory_per_chip", "t_idle")
        return dataclasses.replace(self, **{f: float(np.mean(getattr(self, f))) for f in fields})

    def __repr__(self):
        if any(np.ndim(t) for t in (self.t_math, self.t_mem, self.t_comm)):
            return f"MultiChipEstimate({self.name!r}, array)"
        return (f"MultiChipEstimate({self.name!r}: t_math={self.t_math:.4g} s, t_mem={self.t_mem:.4g} s, "
                f"t_comm={self.t_comm:.4g} s, t_idle={self.t_idle:.4g} s, overlapped={self.overlapped:.4g} s, "
                f"sequential={self.sequential:.4g} s, {self.bound}-bound, "
                f"{'fits' if self.fits else 'does NOT fit'})")


# ---------------------------------------------------------------- shared pieces

def _common(model, hw, n_chips, link, options, name="n_chips"):
    """The checked Setup of a multi-chip call, and its link."""
    s = setup(model, hw, n_chips=n_chips, **options)
    if isinstance(link, Topology):
        if s.n_chips > link.gpus_per_node and link.nic_bandwidth is None:
            raise ValueError(f"{link.name} holds {link.gpus_per_node} GPUs and its data gives no scale-out NIC; "
                             f"n_chips must be at most {link.gpus_per_node}, got {s.n_chips}")
    else:
        collectives.link_bandwidth(s.hw, link)  # refuses an unknown link or a chip without one
    return s, s.n_chips


def _link(link):
    """'nvlink' / 'pcie' (or an alias) as given, or the Topology a name or alias names."""
    if isinstance(link, Topology) or (isinstance(link, str) and link.strip().lower() in collectives.LINK_ALIASES):
        return link
    try:
        return get_topology(link)
    except ValueError:
        raise ValueError(f"unknown link {link!r}; known: 'nvlink', 'pcie', or a topology: "
                         f"{', '.join(list_topologies())}") from None


def _options(weight_dtype, kv_dtype, compute_dtype, usable_fraction, reserved_bytes):
    return dict(weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype,
                usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)


def kv_shards(model, n_chips):
    """Ways the KV cache splits under tensor parallelism: by KV head, so at most ``num_kv_heads``;
    MLA's latent is shared by every head and cannot split (1)."""
    return _kv_shards(get_model(model), int(positive("n_chips", n_chips, integer=True)))


def _kv_shards(m, n):
    return 1 if m.mla else min(n, m.num_kv_heads)


def _tp_split(workload, hw, n, kv_ways):
    """(t_math, t_mem) of one chip's share of ``workload`` under tensor parallelism, each part by its kind."""
    t_math = t_mem = 0.0
    for p in workload.leaves():
        e = estimate(p, hw)
        sharding = p.kind.sharding
        if sharding is Sharding.REPLICATED:
            math_share = mem_share = 1.0
        elif sharding is Sharding.BY_KV_HEAD:
            math_share, mem_share = 1 / n, 1 / kv_ways  # heads split n ways, the cache by KV head
        else:  # SPLIT, and EXPERTS (each expert's matmuls split like a dense MLP's)
            math_share = mem_share = 1 / n
        t_math = t_math + e.t_math * math_share
        t_mem = t_mem + e.t_mem * mem_share
    return t_math, t_mem


def _tp(s, work, tokens, kv_bytes, n, link, kind):
    m, hw = s.model, s.hw
    ways = _kv_shards(m, n)
    t_math, t_mem = _tp_split(work, hw, n, ways)
    message = np.asarray(tokens, float) * m.hidden_size * BYTES_PER_ELEMENT[s.dt.compute]
    per_allreduce = collectives.allreduce_time_on_unchecked(hw, link, message, n)
    layers = 2 * m.num_layers
    return MultiChipEstimate(
        name=f"{m.name} {kind}, tensor parallel over {n} x {hw.name} ({getattr(link, 'name', link)})", hw=hw,
        strategy="tensor", n_chips=n, link=getattr(link, "name", link), tokens=tokens, t_math=t_math, t_mem=t_mem,
        t_comm=layers * per_allreduce,
        comm_bytes=layers * collectives.ring_allreduce_bytes_unchecked(message, n),
        memory_per_chip=m.weight_bytes(s.dt.weight) / n + kv_bytes / ways, usable_memory=s.usable)


# ---------------------------------------------------------------- tensor parallel

def tp_decode_step(model, hw, batch, context, n_chips, link="nvlink", *, weight_dtype="bf16", kv_dtype="bf16",
                   compute_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """One decode step (one new token for each of ``batch`` sequences attending to ``context``
    positions, KV cache included) split over ``n_chips`` by Megatron tensor parallelism.

    t_mem: each chip reads 1/n of the weights and its share of the KV cache; t_math: 1/n of the
    FLOPs; t_comm: 2 ring all-reduces per layer of the [batch, hidden] activations in
    ``compute_dtype`` (the weights' dtype does not change them), timed by ``collectives.allreduce_time_on``.
    Vectorised over batch and context.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    link = _link(link)
    s, n = _common(model, hw, n_chips, link, _options(weight_dtype, kv_dtype, compute_dtype, usable_fraction,
                                                       reserved_bytes))
    batch, context = positive("batch", batch, integer=True), positive("context", context, integer=True)
    work = decode_step_unchecked(s.model, batch, context, s.dt)
    kv = s.model.kv_bytes_per_position(s.dt.kv) * context * batch
    return _tp(s, work, batch, kv, n, link, "decode step")


def tp_prefill(model, hw, batch, prompt_len, n_chips, link="nvlink", *, weight_dtype="bf16", kv_dtype="bf16",
               compute_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """The prefill of ``batch`` prompts of ``prompt_len`` tokens under tensor parallelism: the same
    split as ``tp_decode_step``, with all-reduces of [batch x prompt_len, hidden]. Vectorised.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    link = _link(link)
    s, n = _common(model, hw, n_chips, link, _options(weight_dtype, kv_dtype, compute_dtype, usable_fraction,
                                                       reserved_bytes))
    batch, prompt_len = positive("batch", batch, integer=True), positive("prompt_len", prompt_len, integer=True)
    work = prefill_unchecked(s.model, batch, prompt_len, s.dt)
    kv = s.model.kv_bytes_per_position(s.dt.kv) * prompt_len * batch
    return _tp(s, work, np.asarray(batch, float) * prompt_len, kv, n, link, "prefill")


def tp_max_batch(model, hw, context, n_chips, *, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=1.0,
                 reserved_bytes=0.0):
    """The most sequences of ``context`` positions whose KV cache fits beside 1/n of the weights on each
    of ``n_chips`` chips under tensor parallelism (0 where the weights alone do not fit). Vectorised.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, usable_fraction=usable_fraction,
              reserved_bytes=reserved_bytes)
    n = int(positive("n_chips", n_chips, integer=True))
    context = positive("context", context, integer=True)
    m = s.model
    return sequences_that_fit(s.usable - m.weight_bytes(s.dt.weight) / n,
                              m.kv_cache_bytes_unchecked(1, context, s.dt.kv) / _kv_shards(m, n))


# ---------------------------------------------------------------- pipeline parallel

def pp_decode_step(model, hw, batch, context, n_stages, link="nvlink", *, microbatches=1, schedule="steady",
                   weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """One decode step with the layers cut into ``n_stages`` stages, one chip each, the batch in
    ``microbatches`` equal groups (per chip: 1/n of the layers' work for every microbatch, so the stage's
    weights are read once per microbatch, and one point-to-point send of [batch/microbatches, hidden]
    activations per microbatch). The layers are split evenly, embedding and LM head included.

    ``schedule="steady"`` (the default: a decode server): the microbatches stay in flight step after step,
    each going round the stages again as soon as its token is out. A microbatch's next token needs all
    n stages, so a round of the pipeline takes max(n, m) stage-slots of busy / m each, and a chip idles
    for max(n - m, 0) of them: t_idle = max(n - m, 0) / m x busy. No bubble once m >= n; with one
    microbatch the step takes as long as on one chip (pipelining buys capacity, not latency).
    ``schedule="flushed"`` (GPipe, as in training): the pipeline drains after every step, so it idles
    for its fill and drain, t_idle = (n - 1) / m x busy, however many steps follow.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    if schedule not in ("steady", "flushed"):
        raise ValueError(f"schedule must be 'steady' (microbatches stay in flight, a decode server) or "
                         f"'flushed' (drained after every step, GPipe); got {schedule!r}")
    s, n = _common(model, hw, n_stages, link, _options(weight_dtype, kv_dtype, compute_dtype, usable_fraction,
                                                        reserved_bytes), "n_stages")
    m, hw = s.model, s.hw
    mb = int(positive("microbatches", microbatches, integer=True))
    batch = int(positive("batch", batch, integer=True))
    context = positive("context", context, integer=True)
    if batch % mb:
        raise ValueError(f"microbatches ({mb}) must divide batch ({batch}): the groups are equal")
    e = estimate(decode_step_unchecked(m, batch // mb, context, s.dt), hw)
    t_math, t_mem = mb * e.t_math / n, mb * e.t_mem / n
    send = batch // mb * m.hidden_size * BYTES_PER_ELEMENT[s.dt.compute]
    t_comm = 0.0 if n == 1 else mb * collectives.send_time_on(hw, link, send)
    busy = np.maximum(np.maximum(t_math, t_mem), t_comm)
    w, kv = m.weight_bytes(s.dt.weight), m.kv_bytes_per_position(s.dt.kv) * context * batch
    return MultiChipEstimate(
        name=f"{m.name} decode step, {n} pipeline stages on {hw.name} ({link}), {mb} microbatches ({schedule})",
        hw=hw, strategy="pipeline", n_chips=n, link=link, tokens=batch, t_math=t_math, t_mem=t_mem,
        t_comm=t_comm, comm_bytes=0.0 if n == 1 else mb * send, memory_per_chip=(w + kv) / n,
        usable_memory=s.usable, t_idle=(max(n - mb, 0) if schedule == "steady" else n - 1) / mb * busy)


# ---------------------------------------------------------------- expert parallel

def ep_decode_step(model, hw, batch, context, n_chips, link="nvlink", *, weight_dtype="bf16", kv_dtype="bf16",
                   compute_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """One decode step of a mixture-of-experts model with the routed experts spread over ``n_chips``
    (expert parallel) and everything else copied on every chip, each chip running attention for its
    own ceil(batch / n) sequences (data-parallel attention).

    Per chip: the non-expert parts of its own sequences (all their weights, its sequences' KV cache),
    1/n of the experts' work for the whole batch (the experts any token touches, under uniform
    routing), and per MoE layer two all-to-alls (dispatch and combine): each of its tokens' hidden
    vector goes to ``experts_per_token`` experts, (n - 1)/n of them on other chips.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    s, n = _common(model, hw, n_chips, link, _options(weight_dtype, kv_dtype, compute_dtype, usable_fraction,
                                                       reserved_bytes))
    m, hw = s.model, s.hw
    if not m.moe:
        raise ValueError(f"{m.name} has no experts; expert parallelism needs a mixture-of-experts model "
                         f"(e.g. Mixtral-8x7B); use tp_decode_step or replica_decode_step")
    batch = int(positive("batch", batch, integer=True))
    context = positive("context", context, integer=True)
    own = math.ceil(batch / n)
    t_math = t_mem = 0.0
    for p in decode_step_unchecked(m, own, context, s.dt).leaves():
        if p.kind.sharding is not Sharding.EXPERTS:
            e = estimate(p, hw)
            t_math, t_mem = t_math + e.t_math, t_mem + e.t_mem
    for p in decode_step_unchecked(m, batch, context, s.dt).leaves():
        if p.kind.sharding is Sharding.EXPERTS:
            e = estimate(p, hw)
            t_math, t_mem = t_math + e.t_math / n, t_mem + e.t_mem / n
    routed = own * m.moe.experts_per_token * m.hidden_size * BYTES_PER_ELEMENT[s.dt.compute]
    sent = 2 * m.moe_layers * collectives.alltoall_bytes(routed, n)
    t_comm = 2 * m.moe_layers * collectives.alltoall_time_on(hw, link, routed, n)
    groups = m.param_groups()
    experts = groups["routed_experts"] * m.weight_bytes(s.dt.weight) / m.n_params
    held = m.weight_bytes(s.dt.weight) - experts + experts / n + m.kv_bytes_per_position(s.dt.kv) * context * own
    return MultiChipEstimate(
        name=f"{m.name} decode step, experts over {n} x {hw.name} ({link})", hw=hw, strategy="expert",
        n_chips=n, link=link, tokens=batch, t_math=t_math, t_mem=t_mem, t_comm=t_comm, comm_bytes=sent,
        memory_per_chip=held, usable_memory=s.usable)


# ---------------------------------------------------------------- replicas (data-parallel serving)

def replica_decode_step(model, hw, batch, context, n_chips, *, weight_dtype="bf16", kv_dtype="bf16",
                        compute_dtype="bf16", usable_fraction=1.0, reserved_bytes=0.0):
    """``batch`` sequences served by ``n_chips`` independent copies of the model, ceil(batch / n)
    sequences each: no communication at all, but every chip must hold the whole model.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    s = setup(model, hw, **_options(weight_dtype, kv_dtype, compute_dtype, usable_fraction, reserved_bytes))
    m, hw = s.model, s.hw
    n = int(positive("n_chips", n_chips, integer=True))
    own = math.ceil(int(positive("batch", batch, integer=True)) / n)
    context = positive("context", context, integer=True)
    e = estimate(decode_step_unchecked(m, own, context, s.dt), hw)
    w, kv = m.weight_bytes(s.dt.weight), m.kv_bytes_per_position(s.dt.kv) * context * own
    return MultiChipEstimate(
        name=f"{m.name} decode step, {n} replicas on {hw.name}", hw=hw, strategy="replicas", n_chips=n,
        link="none", tokens=batch, t_math=e.t_math, t_mem=e.t_mem, t_comm=0.0 * e.t_mem, comm_bytes=0.0,
        memory_per_chip=w + kv, usable_memory=s.usable)


__all__ = [
    "ep_decode_step", "kv_shards", "MultiChipEstimate", "pp_decode_step", "replica_decode_step", "TERMS",
    "tp_decode_step", "tp_max_batch", "tp_prefill",
]
