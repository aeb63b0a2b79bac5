"""Expert-parallel serving at scale: a mixture-of-experts model's routed experts spread over many chips (EP), its
attention data-parallel (each chip decodes or prefills its own sequences), the tokens moved to their experts and
back by all-to-alls as DeepEP moves them.

    step = rl.multichip.ep_serving_step("deepseek-v3", "H100", batch_per_chip=256, context=2001, n_chips=72)
    step.t_attention, step.t_experts, step.t_comm   # per chip, seconds: its own sequences' non-expert work,
                                                    # its experts' work, its dispatch + combine
    step.time, step.tokens_per_s_per_chip, step.memory_per_chip, step.fits

Dispatch sends each token's hidden vector to the chips of its k routed experts, in FP8 with one fp32 scale per
128 channels (DeepSeek-V3's 1 x 128 activation tiles); combine brings the k expert outputs back in BF16. DeepEP's
low-latency kernels (decode) send one copy per routed expert, its normal kernels (prefill, training) one copy per
node over the NIC and fan out over NVLink inside the node. A copy to the sender itself moves nothing; one to
another GPU of its node crosses NVLink, one to another node the GPU's own NIC; the two links run at once.

Load imbalance (``imbalance``: the busiest chip's tokens over the mean, >= 1) slows the busiest chip's experts and
its share of the all-to-all; every chip waits for it. Redundant experts (EPLB) copy hot experts so that the
E + r expert slots divide evenly: DeepSeek-V3's 256 + 32 = 288 give 2 per GPU at EP144, 4 at EP72, 9 at EP32.
Two-batch overlap splits a step's batch in two, one half's all-to-all under the other's compute: the step takes
max(compute, communication) instead of their sum. Left out: kernel launches, the routing itself, busy-waiting
for the slowest rank's data, the LM head's logits, multi-token prediction.
"""

from __future__ import annotations

import dataclasses
import math

from ..core.checks import positive
from ..core.dtypes import BYTES_PER_ELEMENT
from ..llm.experts import moe_model
from ..llm.parts import Sharding
from ..llm.setup import setup
from ..llm.steps import decode_step_unchecked, prefill_unchecked
from ..roofline.bounds import estimate
from ..specs.topologies import get_topology, list_topologies

SCALE_GROUP = 128  # channels per fp32 scale of an FP8 activation tile (DeepSeek-V3 report, Sec. 3.3.2: 1 x 128)
MODES = ("low_latency", "normal")



def dispatch_bytes_per_copy(model, dtype="fp8"):
    """Bytes of one token's hidden vector sent to one expert: h in ``dtype``, plus h/128 fp32 scales in fp8.

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    m = moe_model(model, "expert-parallel serving")
    h = m.hidden_size
    scales = 4 * math.ceil(h / SCALE_GROUP) if dtype == "fp8" else 0
    return h * BYTES_PER_ELEMENT[dtype] + scales


def combine_bytes_per_copy(model, dtype="bf16"):
    """Bytes of one expert's output for one token sent back: h in ``dtype``.

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    return moe_model(model, "expert-parallel serving").hidden_size * BYTES_PER_ELEMENT[dtype]


def nodes_touched(model, n_nodes, node_limit=None):
    """Expected distinct nodes a token's k experts sit on, experts spread evenly over ``n_nodes`` nodes and routing
    uniform: N(1 - C(E - E/N, k) / C(E, k)). With ``node_limit`` M (DeepSeek-V3's group-limited routing, one group
    a node: its top-k picked among the experts of M nodes), M(1 - C(E' - E/N, k) / C(E', k)), E' = M E / N."""
    m = moe_model(model, "expert-parallel serving")
    E, k = m.moe.num_experts, m.moe.experts_per_token
    N = int(positive("n_nodes", n_nodes, integer=True))
    M = N if node_limit is None else min(N, int(positive("node_limit", node_limit, integer=True)))
    pool, per_node = M * E // N, E // N
    return M * (1 - math.comb(pool - per_node, k) / math.comb(pool, k)) if N > 1 else 1.0


@dataclasses.dataclass(frozen=True)
class AllToAll:
    """Bytes one chip sends in one MoE layer's dispatch and combine, over NVLink and over its NIC."""

    dispatch_nvlink: float
    dispatch_nic: float
    combine_nvlink: float
    combine_nic: float

    def time(self, nvlink_bandwidth, nic_bandwidth):
        """Seconds of dispatch + combine: in each, NVLink and the NIC carry their bytes at once."""
        nic = nic_bandwidth or math.inf
        return (max(self.dispatch_nvlink / nvlink_bandwidth, self.dispatch_nic / nic)
                + max(self.combine_nvlink / nvlink_bandwidth, self.combine_nic / nic))


def alltoall_bytes_per_layer(model, tokens_per_chip, n_chips, *, gpus_per_node=8, mode="low_latency",
                             dispatch_dtype="fp8", combine_dtype="bf16", node_limit=None):
    """``AllToAll``: the bytes one chip sends per MoE layer for its ``tokens_per_chip`` tokens, experts spread
    evenly over ``n_chips`` (``gpus_per_node`` a node). low_latency: k copies a token, (g - 1)/n of them to its
    node's other GPUs, (n - g)/n to other nodes. normal: one copy per other node touched over the NIC, the k
    copies fanned out over NVLink inside the nodes ((g - 1)/g of them cross it); ``node_limit`` as in
    ``nodes_touched``.

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    m = moe_model(model, "expert-parallel serving")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    t = positive("tokens_per_chip", tokens_per_chip)
    n = int(positive("n_chips", n_chips, integer=True))
    g = min(int(positive("gpus_per_node", gpus_per_node, integer=True)), n)
    k = m.moe.experts_per_token
    d, c = dispatch_bytes_per_copy(m, dispatch_dtype), combine_bytes_per_copy(m, combine_dtype)
    if mode == "low_latency" or n <= g:
        in_node, off_node = t * k * (g - 1) / n, t * k * (n - g) / n
        return AllToAll(in_node * d, off_node * d, in_node * c, off_node * c)
    nodes = n // g
    remote = nodes_touched(m, nodes, node_limit) * (nodes - 1) / nodes  # other nodes a token's experts sit on
    fan_out = t * k * (g - 1) / g
    return AllToAll(fan_out * d, t * remote * d, fan_out * c, t * remote * c)


def experts_per_chip(model, n_chips, redundant=0):
    """Routed expert slots each chip holds: (E + redundant) / n, which must divide evenly."""
    m = moe_model(model, "expert-parallel serving")
    n = int(positive("n_chips", n_chips, integer=True))
    slots = m.moe.num_experts + int(redundant)
    if redundant < 0 or slots % n:
        raise ValueError(f"{m.moe.num_experts} experts + {redundant} redundant do not divide over {n} chips; choose "
                         f"redundant >= 0 with (E + redundant) a multiple of n_chips (e.g. 32 for 288 over 72 or 144)")
    return slots // n


@dataclasses.dataclass(frozen=True)
class ExpertParallelStep:
    """One step of an expert-parallel pool, per chip, in seconds (the busiest chip where they differ)."""

    name: str
    phase: str
    n_chips: int
    tokens_per_chip: float  # tokens each chip computes attention for (decode: its sequences; prefill: theirs x length)
    t_attention: float  # its own sequences' non-expert parts (attention, shared experts, dense layers, LM head)
    t_experts: float  # its routed experts' share of the pool's tokens, x imbalance
    t_comm: float  # dispatch + combine of every MoE layer, x imbalance
    two_batch_overlap: bool
    comm_bytes: float  # bytes the chip sends per step (NVLink + NIC)
    memory_per_chip: float  # weights it holds + its sequences' KV cache
    usable_memory: float

    @property
    def t_compute(self):
        """Seconds of the chip's kernels: its attention side plus its experts."""
        return self.t_attention + self.t_experts

    @property
    def time(self):
        """The step: communication under compute with two-batch overlap, after it without."""
        if self.two_batch_overlap:
            return max(self.t_compute, self.t_comm)
        return self.t_compute + self.t_comm

    @property
    def tokens_per_s_per_chip(self):
        """Tokens the chip produces (decode) or prefills per second."""
        return self.tokens_per_chip / self.time

    @property
    def fits(self):
        """Whether its weights and KV cache fit the memory it has for them."""
        return self.memory_per_chip <= self.usable_memory


def _lower(parts, hw, share=1.0):
    return sum(float(estimate(p, hw).lower) for p in parts) * share


def ep_serving_step(model, hw, batch_per_chip, context, n_chips, *, phase="decode", topology=None, imbalance=1.0,
                    redundant_experts=0, two_batch_overlap=True, mode=None, weight_dtype="fp8", kv_dtype="bf16",
                    compute_dtype="fp8", usable_fraction=1.0, reserved_bytes=0.0):
    """One decode step (``context`` positions) or prefill (``context`` prompt tokens) of ``batch_per_chip``
    sequences on each of ``n_chips`` chips, experts spread over all of them (see the module docstring).
    ``topology`` (default: the chip's 8-GPU board in data/topologies.toml) gives the NVLink and NIC bandwidths;
    ``mode`` DeepEP's kernels (default: low_latency for decode, normal for prefill).

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    s = setup(model, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, compute_dtype=compute_dtype,
              n_chips=n_chips, usable_fraction=usable_fraction, reserved_bytes=reserved_bytes)
    m, hw, n = moe_model(s.model, "expert-parallel serving"), s.hw, s.n_chips
    if phase not in ("decode", "prefill"):
        raise ValueError(f"phase must be 'decode' or 'prefill'; got {phase!r}")
    b = int(positive("batch_per_chip", batch_per_chip, integer=True))
    ctx = int(positive("context", context, integer=True))
    imbalance = float(positive("imbalance", imbalance))
    if imbalance < 1:
        raise ValueError(f"imbalance is the busiest chip's tokens over the mean, so at least 1; got {imbalance}")
    board = get_topology(topology) if topology is not None else _board(hw)
    slots = experts_per_chip(m, n, redundant_experts)
    run = decode_step_unchecked if phase == "decode" else prefill_unchecked
    own, pool = run(m, b, ctx, s.dt).leaves(), run(m, b * n, ctx, s.dt).leaves()
    t_attention = _lower([p for p in own if p.kind.sharding is not Sharding.EXPERTS], hw)
    t_experts = _lower([p for p in pool if p.kind.sharding is Sharding.EXPERTS], hw, imbalance / n)
    tokens = b * (1 if phase == "decode" else ctx)
    a2a = alltoall_bytes_per_layer(m, tokens, n, gpus_per_node=board.gpus_per_node,
                                   mode=mode or ("low_latency" if phase == "decode" else "normal"))
    nvlink = hw.interconnect_bandwidth / 2  # the datasheet's both-ways figure, per direction
    t_comm = m.moe_layers * a2a.time(nvlink, board.nic_bandwidth) * imbalance
    sent = m.moe_layers * (a2a.dispatch_nvlink + a2a.dispatch_nic + a2a.combine_nvlink + a2a.combine_nic)
    groups = m.param_groups()
    w = BYTES_PER_ELEMENT[s.dt.weight]
    routed = groups["routed_experts"]
    held = (m.n_params - routed + routed * slots / m.moe.num_experts) * w
    kv = m.kv_bytes_per_position(s.dt.kv) * (ctx + (1 if phase == "decode" else 0)) * b
    return ExpertParallelStep(
        name=f"{m.name} {phase}, EP{n} on {hw.name} ({board.name})", phase=phase, n_chips=n, tokens_per_chip=tokens,
        t_attention=t_attention, t_experts=t_experts, t_comm=t_comm, two_batch_overlap=bool(two_batch_overlap),
        comm_bytes=sent, memory_per_chip=held + kv, usable_memory=s.usable)


def _board(hw):
    boards = [t for t in map(get_topology, list_topologies()) if t.chip == hw.name and t.gpus_per_node <= 8]
    if not boards:
        raise ValueError(f"data/topologies.toml has no 8-GPU board of {hw.name}; name a topology "
                         "(e.g. topology='DGX H100')")
    return boards[0]


__all__ = ["AllToAll", "alltoall_bytes_per_layer", "combine_bytes_per_copy", "dispatch_bytes_per_copy",
           "ep_serving_step", "experts_per_chip", "ExpertParallelStep", "MODES", "nodes_touched", "SCALE_GROUP"]
