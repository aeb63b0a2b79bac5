"""A training step on the roofline, on one chip and on many.

One chip (``step_workload``): the forward of ``llm.blocks`` over whole sequences (causal attention, logits for
every position, no KV-cache write); the backward as twice the forward in FLOPs and bytes (each matmul's two
gradient matmuls; a small op's backward reads its input and the incoming gradient and writes one or two
gradients: 2x is the round figure), except attention, whose FlashAttention backward recomputes the scores:
five matmuls for the forward's two, 2.5x its FLOPs (hardware FLOPs: MFU does not count the extra half); a
recomputed forward where asked; and the optimizer's update, a memory-bound pass over every parameter the chip
updates (``memory.update_bytes_per_param``: AdamW in mixed precision reads and writes its three fp32 states,
reads the gradient and writes the bf16 weight, 28 bytes).
``rl.estimate`` and ``step_time_split`` put it on the roofline: kernels at the compute roof, kernels at the
memory roof.

Many chips (``train_step``), the terms of one step on one chip (seconds):

- compute: ``m`` micro-batches of ``micro_batch`` sequences, each at its roofline time on this chip (work split
  evenly over ``tp`` and ``cp``);
- pipeline bubble: (p - 1) / v micro-batch times, a fraction (p - 1) / (v m) of the compute
  (``pipeline_bubble``; 1F1B and interleaved 1F1B);
- tensor (and sequence) parallel: per layer and micro-batch two all-reduces of the activations in the forward
  and two in the backward (with sequence parallelism all-gathers and reduce-scatters of the same bytes; full
  recomputation adds the forward's two), over the node's NVLink, run under the matmuls where the software
  overlaps them (``tp_overlap``, the default) or added whole;
- context parallel: ring attention passes K and V around the ``cp`` chips (and dK, dV back in the backward),
  hidden behind the micro-batch's compute where it is shorter;
- pipeline: each micro-batch's activations sent to the next stage and its gradient back, over the NIC;
- data parallel: ZeRO-0 all-reduces the gradients once per step, under the last micro-batch's backward; ZeRO-1
  reduce-scatters them there and all-gathers the updated weights under the next step's first forward (Megatron's
  overlapped distributed optimizer); ZeRO-2 shards the gradients, so every micro-batch reduce-scatters its own
  under its backward; ZeRO-3 (FSDP) also all-gathers the weights for every micro-batch's forward and backward;
- optimizer: the update of the parameters this chip holds (1/(dp cp) of them from ZeRO-1 on).

Links: ``topology`` (``data/topologies.toml``) gives the node's bus bandwidth (NCCL's figure) and the NIC per
GPU. Chips are ranked tp fastest, then cp, then dp, then pp (Megatron's order): a group stays on NVLink while
its span fits in a node; beyond, it crosses nodes through as many NICs as it has members on each node
(``_layout``). Collectives move ring bytes (2 (n - 1)/n of the message for an all-reduce) at that
bandwidth; no latency, no congestion, no straggler, no failure: a step the hardware could reach, an optimistic
estimate, not a bound. The bound is ``records``': the compute of causal model FLOPs at the dense peak.

Left out: expert parallelism, uneven pipeline stages (the slowest, ceil(L / pp) layers, sets the pace), the
embedding and LM head's own stage costs, communication latency, and the kernels' distance from their peaks.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import dtypes as checked_dtypes
from ..core.checks import positive
from ..llm import blocks
from ..llm import parts as k
from ..multichip.collectives import ring_allreduce_bytes_unchecked as ring_bytes
from ..multichip.collectives import ring_allreduce_time_unchecked as ring_time
from ..roofline.bounds import estimate
from ..roofline.workloads import Workload, total
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from ..specs.topologies import get_topology
from .flops import RECOMPUTE, _course
from .memory import OPTIMIZERS, TrainingMemory, bytes_per_param, memory_unchecked, update_bytes_per_param

FLASH_BACKWARD = 2.5  # FlashAttention's backward: S = QK^T again, then dV, dP, dQ, dK: 5 matmuls for the forward's 2
OPTIMIZER_FLOPS_PER_PARAM = 12  # AdamW: two moments, bias corrections, a square root, a division, decay
PRECISIONS = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "mxfp8": "fp8"}
TOPOLOGY_FOR_CHIP = {"A100 80GB SXM4": "HGX A100 8-GPU", "A100 40GB SXM4": "HGX A100 8-GPU",
                     "H100 SXM5": "DGX H100", "H200 SXM": "DGX H200", "B200": "DGX B200",
                     "GB200 (per GPU)": "GB200 NVL72"}


def pipeline_bubble(p, m, v=1):
    """The pipeline's idle share: (p - 1) / (v m) of the ideal time, for p stages, m micro-batches per step and
    v model chunks per GPU (interleaved 1F1B; v = 1: plain 1F1B or GPipe). Narayanan et al. 2021, Sec. 2.2.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    p = positive("p (stages)", p, integer=True)
    m = positive("m (micro-batches)", m, integer=True)
    v = positive("v (chunks per GPU)", v, integer=True)
    return (p - 1) / (v * m)


def _precision(precision):
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(map(repr, PRECISIONS))}, got {precision!r}")
    return PRECISIONS[precision]


def _backward(p):
    """The backward of one forward kernel: twice its FLOPs and bytes, attention 2.5x its FLOPs (FlashAttention)."""
    flops = p.flops * (FLASH_BACKWARD if p.kind is k.ATTENTION else 2)
    return Workload.trusted(f"backward of {p.name}", flops, p.bytes * 2, p.dtype, category=p.category, kind=p.kind)


def _no_cache(forward):
    """An inference forward without its KV-cache writes: training keeps K and V as the projection wrote them."""
    return total(forward.name, [p for p in forward.leaves() if p.kind is not k.KV_WRITE])


def _step_parts(m, micro_batch, seq_len, compute, recompute):
    dt = checked_dtypes("bf16", "bf16", compute)
    fwd = _no_cache(blocks.forward(m, micro_batch, seq_len, seq_len, dt, causal=True,
                                   logits_per_sequence=seq_len, name="forward"))
    parts = [fwd, total("backward", [_backward(p) for p in fwd.leaves()])]
    if recompute == "full":
        again = _no_cache(blocks.forward(m, micro_batch, seq_len, seq_len, dt, causal=True,
                                         logits_per_sequence=1, name="recomputed forward"))
        parts.append(again)
    elif recompute == "selective":
        parts.append(total("recomputed attention", [p for p in fwd.leaves() if p.kind is k.ATTENTION]))
    return parts


def _optimizer_update(params, optimizer="adamw"):
    return Workload.trusted("optimizer update", OPTIMIZER_FLOPS_PER_PARAM * params,
                            update_bytes_per_param(optimizer) * params, "fp32")


def step_workload(model, micro_batch, seq_len, *, precision="bf16", recompute="none", optimizer_params=None,
                  optimizer="adamw"):
    """One training step of ``micro_batch`` sequences of ``seq_len`` on one chip, as a Workload of parts
    (forward, backward, recomputation, optimizer update of ``optimizer_params`` parameters, default all of
    them; 0 leaves the update out). ``rl.estimate(w, hw)`` and ``step_time_split(w, hw)`` apply.

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    m = get_model(model)
    b = positive("micro_batch", micro_batch, integer=True)
    s = positive("seq_len", seq_len, integer=True)
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(map(repr, RECOMPUTE))}, got {recompute!r}")
    parts = _step_parts(m, b, s, _precision(precision), recompute)
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    params = m.n_params if optimizer_params is None else optimizer_params
    if params:
        parts.append(_optimizer_update(positive("optimizer_params", params), optimizer))
    return total("training step", parts)


def step_time_split(workload, hw, dtype=None):
    """{"compute roof": s, "memory roof": s}: the workload's kernels each at its own roofline bound, added by
    which roof holds it (a matmul of thousands of tokens is at the compute roof; norms, activations and the
    optimizer update are at the memory roof).

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    out = {"compute roof": 0.0, "memory roof": 0.0}
    for p in estimate(workload, hw, dtype).parts:
        key = "compute roof" if p.t_math >= p.t_mem else "memory roof"
        out[key] += float(p.lower)
    return out


_PER_SEQUENCE = {}


def _per_sequence(m, hw, s, compute, recompute):
    """(forward + backward (+ recompute) seconds, the backward's share of them, the forward's, attention's) for one
    sequence on one whole chip, each kernel at its roofline bound."""
    key = (id(m), m.name, hw.name, s, compute, recompute)
    if key not in _PER_SEQUENCE:
        parts = _step_parts(m, 1, s, compute, recompute)
        times = [float(sum(p.lower for p in estimate(part, hw).parts)) for part in parts]
        attention = sum(float(p.lower) for part in parts for p in estimate(part, hw).parts
                        if p.workload.kind is k.ATTENTION)
        whole = sum(times)
        _PER_SEQUENCE[key] = (whole, times[1] / whole, times[0] / whole, attention / whole)
    return _PER_SEQUENCE[key]


@dataclasses.dataclass(frozen=True)
class TrainStep:
    """One configuration's step on one chip: its terms (seconds; numbers or arrays), tokens/s per chip, MFU,
    memory and whether it fits; ``bytes_sent``: what the chip sends per step in each kind of collective.
    ``binding``: the largest term."""

    terms: dict
    step_time_s: object
    tokens_per_s_per_chip: object
    mfu: object
    memory: TrainingMemory
    fits: object
    config: dict
    bytes_sent: dict = dataclasses.field(default_factory=dict)

    def __repr__(self):
        c = self.config
        layout = f"tp {c['tp']}, pp {c['pp']}, cp {c['cp']}, dp {c['dp']}, ZeRO-{c['zero_stage']}"
        if np.ndim(self.step_time_s):
            return f"TrainStep({c['n_chips']} chips, {layout}: array {np.shape(self.step_time_s)})"
        return (f"TrainStep({c['n_chips']} chips of {c['topology']}, {layout}: step {float(self.step_time_s):.4g} s, "
                f"{float(self.tokens_per_s_per_chip):.4g} tokens/s per chip, MFU {float(self.mfu):.1%}, "
                f"{self.binding}-bound, {self.memory.total / 1e9:.4g} GB per chip, "
                f"{'fits' if self.fits else 'does NOT fit'})")

    @property
    def binding(self):
        """The name of the largest term (an array of names for array inputs)."""
        names = list(self.terms)
        stacked = np.stack([np.broadcast_to(self.terms[n], np.shape(self.step_time_s)) for n in names])
        which = np.argmax(stacked, axis=0)
        return names[int(which)] if np.ndim(which) == 0 else np.array(names)[which]


def _layout(topology, tp, cp, dp, pp):
    """Bus bandwidths (byte/s per GPU) of the tp, cp, dp and pp groups. A group inside one node runs at the
    node's bus bandwidth. One that spans nodes has k members on each node (the node's GPUs over the span of the
    faster groups), and NCCL's rings then cross nodes through k NICs at once: min(k x NIC, bus) (with k = 1 when
    tensor parallelism fills the node, one NIC per GPU). Point-to-point traffic (ring attention, pipeline sends)
    leaves through the sending GPU's own NIC."""
    node = topology.gpus_per_node
    nic = topology.nic_bandwidth or 0.0
    bus = topology.bus_bandwidth

    def link(inner, size, p2p=False):
        inside = (inner * size <= node) | (size == 1)
        if nic == 0 and np.any(~inside):
            raise ValueError(f"{topology.name}: a group spans more than one node of {node} GPUs, but the "
                             "topology gives no NIC bandwidth (nic_GBps)")
        per_node = 1 if p2p else np.minimum(np.maximum(node // inner, 1), size)
        return np.where(inside, bus, np.minimum(per_node * nic, bus))

    # ring attention and pipeline sends are point to point: one GPU's traffic leaves through its own NIC
    return link(1, tp), link(tp, cp, p2p=True), link(tp * cp, dp), link(tp * cp * dp, pp, p2p=True)


def train_step_unchecked(m, hw, topo, *, n_chips, seq_len, global_batch, micro_batch, tp, pp, cp, zero_stage,
                         recompute, sp, virtual_stages, precision, optimizer, flash_attention=True, tp_overlap=True):
    """``train_step`` for a Model, an Accelerator, a Topology and a checked layout (what ``search`` calls with
    arrays)."""
    compute = PRECISIONS[precision]
    s = seq_len
    dp = n_chips // (tp * pp * cp)
    mb = global_batch / (dp * micro_batch)  # micro-batches per step per pipeline
    per_seq, bwd_share, fwd_share, attention_share = _per_sequence(m, hw, s, compute, recompute)
    layers = np.ceil(m.num_layers / pp)  # the slowest stage's layers set the pace
    t_mb = per_seq * micro_batch / (tp * cp) * layers / m.num_layers  # one micro-batch through one stage
    bw_tp, bw_cp, bw_dp, bw_pp = _layout(topo, tp, cp, dp, pp)
    act = micro_batch * (s / cp) * m.hidden_size * 2  # one activation tensor of a micro-batch, bytes
    # per layer: 2 all-reduces forward, 2 backward (as all-gathers and reduce-scatters with sequence parallelism,
    # whose backward also gathers the column-parallel inputs again for the weight gradients: 1 more); full
    # recomputation runs the forward's 2 again
    n_tp_collectives = 4 + np.where(sp, 1, 0) + np.where(recompute == "full", 2, 0)
    tp_all = np.where(tp > 1, mb * layers * n_tp_collectives * ring_time(act, tp, bw_tp), 0.0)
    tp_comm = np.maximum(tp_all - mb * t_mb, 0.0) if tp_overlap else tp_all  # overlapped with the matmuls
    # ring attention passes this chip's K and V chunk (its TP rank's K/V heads) around the cp chips: forward,
    # and again with dK, dV in the backward; it hides behind the attention kernels only
    kv = micro_batch * (s / cp) * 2 * m.num_kv_heads / np.minimum(tp, m.num_kv_heads) * m.head_dim * 2
    cp_mb = np.where(cp > 1, layers * 3 * (cp - 1) * kv / bw_cp, 0.0)
    cp_comm = mb * np.maximum(cp_mb - attention_share * t_mb, 0.0)
    pp_comm = np.where(pp > 1, mb * 2 * act / (tp * bw_pp), 0.0)
    params = m.n_params / (tp * pp)
    w_bytes, g_bytes, _ = bytes_per_param(optimizer)
    shards = dp * cp
    zero = np.asarray(zero_stage)
    half = np.where(shards > 1, ring_time(params * g_bytes, shards, bw_dp) / 2, 0.0)  # a reduce-scatter's time
    gather_w = np.where(shards > 1, ring_time(params * w_bytes, shards, bw_dp) / 2, 0.0)  # an all-gather of weights
    # ZeRO-0: the all-reduce runs under the last micro-batch's backward; ZeRO-1: its reduce-scatter there, the
    # all-gather of the updated weights under the next step's first forward; ZeRO-2: gradients are sharded, so
    # every micro-batch reduce-scatters under its own backward; ZeRO-3 (FSDP) also gathers the weights for every
    # forward and backward
    exposed0 = np.maximum(2 * half - bwd_share * t_mb, 0.0)
    exposed1 = np.maximum(half - bwd_share * t_mb, 0.0) + np.maximum(gather_w - fwd_share * t_mb, 0.0)
    exposed2 = mb * np.maximum(half - bwd_share * t_mb, 0.0) + np.maximum(gather_w - fwd_share * t_mb, 0.0)
    exposed3 = mb * (np.maximum(gather_w - fwd_share * t_mb, 0.0)
                     + np.maximum(gather_w + half - bwd_share * t_mb, 0.0))
    dp_comm = np.select([zero == 0, zero == 1, zero == 2], [exposed0, exposed1, exposed2], exposed3)
    updated = params / np.where(zero >= 1, shards, 1)
    optimizer_s = updated * update_bytes_per_param(optimizer) / hw.mem_bandwidth
    compute_s = mb * t_mb
    bubble = (pp - 1) / virtual_stages * t_mb
    terms = {"compute": compute_s, "pipeline bubble": bubble, "tensor parallel": tp_comm,
             "context parallel": cp_comm, "pipeline sends": pp_comm, "data parallel": dp_comm,
             "optimizer": optimizer_s}
    ring = (shards - 1) / shards
    dp_bytes = np.select([zero <= 1, zero == 2], [2 * ring * params * g_bytes,
                                                  mb * ring * params * g_bytes + ring * params * w_bytes],
                         mb * ring * params * (2 * w_bytes + g_bytes))
    wire = {"tensor parallel": np.where(tp > 1, mb * layers * n_tp_collectives * ring_bytes(act, tp), 0.0),
            "context parallel": np.where(cp > 1, mb * layers * 3 * (cp - 1) * kv, 0.0),
            "pipeline sends": np.where(pp > 1, mb * 2 * act / tp, 0.0),
            "data parallel": np.where(shards > 1, dp_bytes, 0.0)}
    step = sum(terms.values())
    tokens = global_batch * s / (step * n_chips)
    model_flops = _course(m, s, True, "none")  # the causal count: what the model needs
    mfu = tokens * model_flops / hw.peak_flops(compute)
    mem = memory_unchecked(m, micro_batch, s, zero_stage=zero, dp=dp, tp=tp, pp=pp, cp=cp, sp=sp,
                           recompute=recompute, flash=flash_attention, optimizer=optimizer, microbatches=mb,
                           virtual_stages=virtual_stages, dropout=False)
    config = dict(n_chips=n_chips, seq_len=s, global_batch=global_batch, micro_batch=micro_batch, tp=tp, pp=pp,
                  cp=cp, dp=dp, zero_stage=zero_stage, recompute=recompute, sp=sp, virtual_stages=virtual_stages,
                  precision=precision, optimizer=optimizer, topology=topo.name)
    return TrainStep(terms, step, tokens, mfu, mem, mem.total <= hw.mem_capacity, config, wire)


def _topology_for(hw, topology):
    if topology is not None:
        return get_topology(topology)
    if hw.name not in TOPOLOGY_FOR_CHIP:
        raise ValueError(f"no default topology for {hw.name}; pass topology= one of data/topologies.toml's "
                         f"systems ({', '.join(sorted(set(TOPOLOGY_FOR_CHIP.values())))} ...)")
    return get_topology(TOPOLOGY_FOR_CHIP[hw.name])


def _check_layout(n_chips, global_batch, micro_batch, tp, pp, cp, m, virtual_stages):
    if n_chips % (tp * pp * cp):
        raise ValueError(f"n_chips ({n_chips}) must be a multiple of tp x pp x cp ({tp} x {pp} x {cp} = "
                         f"{tp * pp * cp}): the rest is the data-parallel degree")
    dp = n_chips // (tp * pp * cp)
    if global_batch % (dp * micro_batch):
        raise ValueError(f"global_batch ({global_batch} sequences) must be a multiple of dp x micro_batch "
                         f"({dp} x {micro_batch}): every data-parallel replica runs whole micro-batches")
    if pp > m.num_layers:
        raise ValueError(f"pp ({pp}) exceeds the model's {m.num_layers} layers")
    if m.num_heads % tp:
        raise ValueError(f"tp ({tp}) must divide the model's {m.num_heads} attention heads")
    if virtual_stages > 1 and pp == 1:
        raise ValueError("virtual_stages > 1 interleaves pipeline stages: it needs pp > 1")


def train_step(model, hw, *, n_chips, seq_len, global_batch, micro_batch=1, tp=1, pp=1, cp=1, zero_stage=1,
               recompute="none", sp=True, virtual_stages=1, precision="bf16", optimizer="adamw", topology=None,
               tp_overlap=True):
    """One training step of ``global_batch`` sequences of ``seq_len`` tokens on ``n_chips`` chips
    (dp = n_chips / (tp pp cp)), as the terms of the module docstring: a ``TrainStep``. ``tp_overlap``: the
    tensor-parallel collectives run under the matmuls (Transformer Engine's overlap, async TP), exposed only
    beyond the compute; False: none of them hidden (vanilla TP). MFU: the causal count over the dense peak.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    m, hw = get_model(model), get_accelerator(hw)
    ints = {name: positive(name, v, integer=True) for name, v in (
        ("n_chips", n_chips), ("seq_len", seq_len), ("global_batch", global_batch), ("micro_batch", micro_batch),
        ("tp", tp), ("pp", pp), ("cp", cp), ("virtual_stages", virtual_stages))}
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3 (3 = FSDP's full sharding), got {zero_stage!r}")
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(map(repr, RECOMPUTE))}, got {recompute!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    _precision(precision)
    if PRECISIONS[precision] not in hw.peak_flops_by_dtype:
        raise ValueError(f"{hw.name} has no {precision} peak; its formats: {', '.join(hw.dtypes)}")
    _check_layout(ints["n_chips"], ints["global_batch"], ints["micro_batch"], ints["tp"], ints["pp"], ints["cp"],
                  m, ints["virtual_stages"])
    return train_step_unchecked(m, hw, _topology_for(hw, topology), zero_stage=zero_stage, recompute=recompute,
                                sp=bool(sp), precision=precision, optimizer=optimizer, tp_overlap=bool(tp_overlap),
                                **ints)


def critical_tokens_per_chip(hw, link_bandwidth, *, zero_stage=0, grad_bytes=2, dtype="bf16"):
    """Tokens per chip per step below which data parallelism is communication-bound (How to Scale Your Model's
    critical batch): 6 N FLOPs per token of compute against the bytes of N parameters on the wire, the
    all-reduce's two passes of ``grad_bytes`` (ZeRO-3: three passes, two all-gathers and a reduce-scatter).
    N cancels: peak / bandwidth x bytes per parameter moved / 6.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    hw = get_accelerator(hw)
    w = positive("link_bandwidth", link_bandwidth)
    passes = 3 if zero_stage == 3 else 2
    return hw.peak_flops(dtype) / w * passes * positive("grad_bytes", grad_bytes) / 6


__all__ = [
    "FLASH_BACKWARD", "PRECISIONS", "TOPOLOGY_FOR_CHIP", "TrainStep", "critical_tokens_per_chip",
    "pipeline_bubble", "step_time_split", "step_workload", "train_step"
]
