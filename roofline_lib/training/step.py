"""A training step on the roofline, on one chip and on many.

One chip (``one_chip``): the step as workloads, ``step_workload``; each kernel at its roofline, ``step_time_split``.

Many chips (``train_step``), the terms of one step on one chip (seconds):

- compute: ``m`` micro-batches of ``micro_batch`` sequences through the slowest pipeline stage, each kernel at its
  roofline time (work split evenly over ``tp`` and ``cp``); stages hold ceil(L / pp) layers and the last also the
  LM head and the loss (``LOSS_BYTES_PER_LOGIT``), which for Llama 3 405B is 0.6 of a layer;
- pipeline bubble: (p - 1) / v times that stage's micro-batch time (``pipeline_bubble``; 1F1B, interleaved 1F1B);
- tensor (and sequence) parallel: per layer and micro-batch two all-reduces of the activations in the forward
  and two in the backward (with sequence parallelism all-gathers and reduce-scatters of the same bytes, and the
  backward gathers the column-parallel inputs again: five all-reduces' worth; full recomputation adds the
  forward's two), over the node's NVLink. As Megatron-LM's linear layers issue them
  (``LinearWithGradAccumulationAndAsyncCommunication``), the forward's collectives and the backward's gathers of
  the output gradients sit between dependent matmuls, exposed (``tp_overlap="none"``); each column-parallel
  linear's backward runs its input-gradient reduce-scatter (all-reduce without sequence parallelism) under its
  weight-gradient matmul and its input's second gather under its input-gradient matmul, so only what outlasts
  those matmuls shows. ``"decomposed"`` hides every collective under its neighbouring matmul (Transformer
  Engine's userbuffers, PyTorch's async TP), at a cost in SMs;
- context parallel: ring attention passes K and V around the ``cp`` chips (and dK, dV back in the backward),
  hidden behind the attention kernels where it is shorter;
- pipeline: each micro-batch's activations sent to the next stage and its gradient back, at each of the ``v``
  chunk boundaries of an interleaved schedule, over the NIC, each send with its latency;
- data parallel: gradients on the wire in fp32 (``grad_reduce``; Megatron-LM, NeMo and torchtitan reduce in fp32,
  fms-fsdp in bf16). ZeRO-0 all-reduces them once per step, under the last micro-batch's backward; ZeRO-1
  reduce-scatters them there and all-gathers the updated bf16 weights under the next step's first forward;
  ZeRO-2 shards the gradients, so every micro-batch reduce-scatters its own under its backward; ZeRO-3 (FSDP)
  also all-gathers the weights for every micro-batch's forward and backward;
- optimizer: the update of the parameters this chip holds (1/(dp cp) of them from ZeRO-1 on).

Links (``links``): ``topology`` (``data/topologies.toml``) gives the node's bus bandwidth (NCCL's figure) and the
NIC per GPU. Chips are ranked tp fastest, then cp, then dp, then pp (Megatron's order): a group stays on NVLink
while its span fits in a node; beyond, it crosses nodes through as many NICs as it has members on each node.
Collectives move ring bytes (2 (n - 1)/n of the message for an all-reduce) at that bandwidth, after NCCL's own
latency per collective and per send. No congestion, no straggler, no failure, kernels at their datasheet roofs:
a step the hardware could reach, optimistic. ``TrainStep.estimate`` is the best estimate (``estimate``); the
bound is ``records``': the compute of causal model FLOPs at the dense peak.

Left out: expert parallelism.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import positive
from ..llm import parts as k
from ..multichip.collectives import ring_allreduce_bytes_unchecked as ring_bytes
from ..multichip.collectives import ring_allreduce_time_unchecked as ring_time
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from ..specs.topologies import get_topology
from . import links
from .estimate import estimate_step
from .flops import RECOMPUTE_MODES, _course
from .links import DECOMPOSED_SM_SHARE, tp_latency
from .memory import (
    GRAD_REDUCE_BYTES,
    OPTIMIZERS,
    TrainingMemory,
    bytes_per_param,
    memory_unchecked,
    stage_params,
    update_bytes_per_param,
)
from .one_chip import (
    FLASH_BACKWARD,
    LOSS_BYTES_PER_LOGIT,
    PRECISIONS,
    _precision,
    _step_parts,
    step_time_split,
    step_workload,
)
from .peak import peak_memory

TOPOLOGY_FOR_CHIP = {"A100 80GB SXM4": "HGX A100 8-GPU", "A100 40GB SXM4": "HGX A100 8-GPU",
                     "H100 SXM5": "DGX H100",
                     "H100 SXM5 96GB HBM2e (500 W)": "Grand Teton H100", "H200 SXM": "DGX H200", "B200": "DGX B200",
                     "GB200 (per GPU)": "GB200 NVL72"}


def pipeline_bubble(p, m, v=1):
    """The pipeline's idle share: (p - 1) / (v m) of the ideal time, for p stages, m micro-batches per step and
    v model chunks per GPU (interleaved 1F1B; v = 1: plain 1F1B or GPipe). Narayanan et al. 2021, Sec. 2.2.
    Interleaving needs m to be a multiple of p: Megatron-LM's interleaved schedule runs the micro-batches in groups
    of p (2021; Megatron-Core's default ``microbatch_group_size_per_vp_stage``, which can be set up to m, so that any
    m >= p interleaves there); with fewer than p, a chunk waits for the whole pipeline and nothing is gained.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    p = positive("p (stages)", p, integer=True)
    m = positive("m (micro-batches)", m, integer=True)
    v = positive("v (chunks per GPU)", v, integer=True)
    _check_interleaving(p, m, v)
    return (p - 1) / (v * m)


def _check_interleaving(p, m, v):
    if v > 1 and m % p:
        raise ValueError(f"interleaving (v = {v} chunks per GPU) needs the micro-batches per step ({m:g}) to be a "
                         f"multiple of the pipeline stages ({p}), as Megatron-Core's default grouping requires; "
                         "use v = 1 or more micro-batches")


_PER_SEQUENCE = {}

def _per_sequence(m, hw, s, compute, recompute):
    """(forward + backward (+ recompute) seconds, the backward's share of them, the forward's, attention's, the
    share that is not per layer (embedding, final norm, LM head and loss), the layers' matmuls', and the forward
    QKV and MLP gate/up (column-parallel) matmuls' shares) for one sequence on one whole chip, each kernel at its
    roofline bound."""
    key = (id(m), m.name, hw.name, s, compute, recompute)
    if key not in _PER_SEQUENCE:
        parts = _step_parts(m, 1, s, compute, recompute)
        bounds = [list(estimate(part, hw).parts) for part in parts]
        times = [float(sum(p.lower for p in b)) for b in bounds]
        attention = sum(float(p.lower) for b in bounds for p in b if p.workload.kind is k.ATTENTION)
        loss = LOSS_BYTES_PER_LOGIT * s * m.vocab_size / hw.mem_bandwidth
        head = sum(float(p.lower) for b in bounds for p in b if not p.workload.kind.per_layer) + loss
        gemms = sum(float(p.lower) for b in bounds for p in b
                    if p.workload.kind.kernel and p.workload.kind.per_layer and p.workload.kind is not k.ATTENTION)
        # the column-parallel linears' forward matmuls; each one's input- and weight-gradient matmul is as long
        columns = tuple(sum(float(p.lower) for p in bounds[0] if p.workload.kind is kind)
                        for kind in (k.QKV_PROJECTION, k.MLP_GATE_UP))
        whole = sum(times) + loss
        _PER_SEQUENCE[key] = (whole, times[1] / whole, times[0] / whole, attention / whole, head / whole,
                              gemms / whole, tuple(c / whole for c in columns))
    return _PER_SEQUENCE[key]


@dataclasses.dataclass(frozen=True)
class TrainStep:
    """One configuration's step on one chip: its terms (seconds; numbers or arrays), tokens/s per chip, MFU,
    memory (``memory.peak``: the bytes an allocator reports, ``memory.peak_terms`` its terms, ``training.peak``)
    and whether it fits, decided on that
    peak; ``bytes_sent``: what the chip sends per step in each kind of collective. ``binding``: the largest term;
    ``estimate``: the best estimate (``training.estimate``)."""

    terms: dict
    step_time_s: object
    tokens_per_s_per_chip: object
    mfu: object
    memory: TrainingMemory
    fits: object
    config: dict
    bytes_sent: dict = dataclasses.field(default_factory=dict)
    _inputs: tuple = dataclasses.field(default=(), repr=False, compare=False)

    @property
    def estimate(self):
        """The best estimate of this step beside the bound (``training.estimate``): kernels at achieved ceilings,
        collectives with their latency, overlap as frameworks schedule it, host overhead: a ``StepEstimate``."""
        return estimate_step(self)


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


TP_OVERLAPS = ("none", "decomposed")
def tp_overlap_mode(tp_overlap):
    """``"none"`` or ``"decomposed"`` (True and False are accepted for them)."""
    mode = {True: "decomposed", False: "none"}.get(tp_overlap, tp_overlap) if isinstance(tp_overlap, bool) \
        else tp_overlap
    if mode not in TP_OVERLAPS:
        raise ValueError(f"tp_overlap must be one of {', '.join(map(repr, TP_OVERLAPS))} (or True/False), got "
                         f"{tp_overlap!r}")
    return mode


def _stage_time(per_seq, head_share, micro_batch, tp, cp, pp, num_layers):
    """Seconds of one micro-batch through the slowest pipeline stage (and of one layer's share): stages of
    ceil(L / pp) layers, the last also running the LM head and the loss (Megatron's even split of the layers)."""
    layer = per_seq * (1 - head_share) / num_layers * micro_batch / (tp * cp)
    head = per_seq * head_share * micro_batch / (tp * cp)
    return np.ceil(num_layers / pp) * layer + head, layer


def train_step_unchecked(m, hw, topo, *, n_chips, seq_len, global_batch, micro_batch, tp, pp, cp, zero_stage,
                         recompute, sp, virtual_stages, precision, optimizer, flash_attention=True, tp_overlap="none",
                         grad_reduce="fp32"):
    """``train_step`` for a Model, an Accelerator, a Topology and a checked layout (what ``search`` calls with
    arrays)."""
    compute = PRECISIONS[precision]
    s = seq_len
    dp = n_chips // (tp * pp * cp)
    mb = global_batch / (dp * micro_batch)  # micro-batches per step per pipeline
    per_seq, bwd_share, fwd_share, attention_share, head_share, gemm_share, column_shares = _per_sequence(
        m, hw, s, compute, recompute)
    layers = np.ceil(m.num_layers / pp)
    t_mb, t_layer = _stage_time(per_seq, head_share, micro_batch, tp, cp, pp, m.num_layers)
    bw_tp, bw_cp, bw_dp, bw_pp = links.group_bandwidths(topo, tp, cp, dp, pp)
    act = micro_batch * (s / cp) * m.hidden_size * 2  # one activation tensor of a micro-batch, bytes
    # per layer, in all-reduces' worth: 2 forward, 2 backward (as all-gathers and reduce-scatters with sequence
    # parallelism, whose backward also gathers the column-parallel inputs again for the weight gradients: 1 more);
    # full recomputation runs the forward's 2 again
    n_tp = 4 + np.where(sp, 1, 0) + np.where(recompute == "full", 2, 0)
    one_tp = ring_time(act, tp, bw_tp) + tp_latency(topo, tp, sp)
    columns = [share * per_seq * micro_batch / (tp * cp) / m.num_layers for share in column_shares]
    tp_all = np.where(tp > 1, mb * layers * _tp_exposed(one_tp, sp, recompute, columns), 0.0)
    if tp_overlap == "decomposed":  # each collective hides under its neighbouring GEMM only, at a cost in SMs
        gemm = t_layer * gemm_share / (1 - head_share) / n_tp
        tp_comm = np.where(tp > 1, mb * layers * (n_tp * np.maximum(one_tp - gemm, 0.0)
                                                  + DECOMPOSED_SM_SHARE * n_tp * gemm), 0.0)
    else:  # the forward's and the output gradients' collectives exposed, the column-parallel backward's overlapped
        tp_comm = tp_all
    # ring attention passes this chip's K and V chunk (its TP rank's K/V heads) around the cp chips: forward,
    # and again with dK, dV in the backward; it hides behind the attention kernels only
    kv = micro_batch * (s / cp) * 2 * m.num_kv_heads / np.minimum(tp, m.num_kv_heads) * m.head_dim * 2
    cp_mb = np.where(cp > 1, layers * 3 * (cp - 1) * (kv / bw_cp + links.p2p_latency(topo, tp, cp)), 0.0)
    cp_comm = mb * np.maximum(cp_mb - attention_share * per_seq * micro_batch / (tp * cp) * layers
                              / m.num_layers, 0.0)
    # every micro-batch crosses each of the v chunk boundaries of a stage forward and back
    sends = 2 * virtual_stages * (act / (tp * bw_pp) + links.p2p_latency(topo, tp * cp * dp, pp))
    pp_comm = np.where(pp > 1, mb * sends, 0.0)
    params = stage_params(m, tp, pp)
    w_bytes = bytes_per_param(optimizer)[0]
    g_bytes = GRAD_REDUCE_BYTES[grad_reduce]
    shards = dp * cp
    zero = np.asarray(zero_stage)
    inner = tp

    def gather(nbytes):  # one all-gather (or reduce-scatter) of nbytes over the data-parallel chips, latency too
        return np.where(shards > 1, ring_time(nbytes, shards, bw_dp) / 2
                        + links.collective_latency(topo, inner, shards, 1), 0.0)

    half, gather_w = gather(params * g_bytes), gather(params * w_bytes)
    bwd_mb, fwd_mb = bwd_share * per_seq * micro_batch / (tp * cp) * layers / m.num_layers, \
        fwd_share * per_seq * micro_batch / (tp * cp) * layers / m.num_layers
    # ZeRO-0: the all-reduce runs under the last micro-batch's backward; ZeRO-1: its reduce-scatter there, the
    # all-gather of the updated weights under the next step's first forward (Megatron's overlapped distributed
    # optimizer); ZeRO-2: gradients are sharded, so every micro-batch reduce-scatters under its own backward;
    # ZeRO-3 (FSDP) also gathers the weights for every forward and backward
    exposed0 = np.maximum(2 * half - bwd_mb, 0.0)
    exposed1 = np.maximum(half - bwd_mb, 0.0) + np.maximum(gather_w - fwd_mb, 0.0)
    exposed2 = mb * np.maximum(half - bwd_mb, 0.0) + np.maximum(gather_w - fwd_mb, 0.0)
    exposed3 = mb * (np.maximum(gather_w - fwd_mb, 0.0) + np.maximum(gather_w + half - bwd_mb, 0.0))
    dp_comm = np.select([zero == 0, zero == 1, zero == 2], [exposed0, exposed1, exposed2], exposed3)
    updated = params / np.where(zero >= 1, shards, 1)
    optimizer_s = updated * update_bytes_per_param(optimizer) / hw.mem_bandwidth
    compute_s = mb * t_mb
    bubble = (pp - 1) / virtual_stages * t_mb
    terms = {"compute": compute_s, "pipeline bubble": bubble, "tensor parallel": tp_comm,
             "context parallel": cp_comm, "pipeline sends": pp_comm, "data parallel": dp_comm,
             "optimizer": optimizer_s}
    ring = (shards - 1) / shards
    dp_bytes = np.select([zero <= 1, zero == 2], [ring * params * (g_bytes + np.where(zero == 1, w_bytes, g_bytes)),
                                                  mb * ring * params * g_bytes + ring * params * w_bytes],
                         mb * ring * params * (2 * w_bytes + g_bytes))
    wire = {"tensor parallel": np.where(tp > 1, mb * layers * n_tp * ring_bytes(act, tp), 0.0),
            "context parallel": np.where(cp > 1, mb * layers * 3 * (cp - 1) * kv, 0.0),
            "pipeline sends": np.where(pp > 1, mb * 2 * virtual_stages * act / tp, 0.0),
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
                  precision=precision, optimizer=optimizer, topology=topo.name, tp_overlap=tp_overlap,
                  grad_reduce=grad_reduce)
    peak = peak_memory(m, hw, **config)
    return TrainStep(terms, step, tokens, mfu, dataclasses.replace(mem, peak=peak.peak, peak_terms=peak.terms),
                     peak.fits, config, wire,
                     _inputs=(m, hw, topo))


def _tp_exposed(one, sp, recompute, column_gemms):
    """Exposed seconds of one layer's tensor-parallel collectives for one micro-batch, as Megatron-LM's linear
    layers issue them, given ``one`` all-reduce's worth (ring time and latency) and the forward times of the
    layer's column-parallel matmuls (QKV, MLP gate/up; each one's backward matmuls are as long). Exposed: the
    forward's 2 (4 with full recomputation) and, with sequence parallelism, the backward's gathers of the
    output gradients (1). Overlapped: each column-parallel linear's input-gradient reduce-scatter (all-reduce
    without sequence parallelism) under its weight-gradient matmul, and its input's second gather (sequence
    parallelism) under its input-gradient matmul; only what outlasts the matmul shows."""
    sp = np.asarray(sp)
    piece = np.where(sp, one / 2, one)  # an all-gather or reduce-scatter is half an all-reduce's worth
    behind = sum(np.maximum(piece - t, 0.0) for t in column_gemms)
    exposed = 2 + np.where(sp, 1, 0) + np.where(np.asarray(recompute) == "full", 2, 0)
    return exposed * one + np.where(sp, 2, 1) * behind


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
    _check_interleaving(pp, global_batch // (dp * micro_batch), virtual_stages)


def train_step(model, hw, *, n_chips, seq_len, global_batch, micro_batch=1, tp=1, pp=1, cp=1, zero_stage=1,
               recompute="none", sp=True, virtual_stages=1, precision="bf16", optimizer="adamw", topology=None,
               tp_overlap="none", grad_reduce="fp32"):
    """One training step of ``global_batch`` sequences of ``seq_len`` tokens on ``n_chips`` chips
    (dp = n_chips / (tp pp cp)), as the terms of the module docstring: a ``TrainStep``. ``tp_overlap``:
    ``"none"`` (no matmul split: the forward's collectives and the output gradients' gathers exposed, the
    column-parallel backward's under their own matmuls, as Megatron-LM issues them) or ``"decomposed"`` (each
    hidden under its neighbouring matmul, Transformer Engine's userbuffers or PyTorch's async TP, at a cost in
    SMs). ``grad_reduce``: the format of the gradients on the wire, ``"fp32"`` (Megatron-LM, NeMo, torchtitan) or
    ``"bf16"`` (fms-fsdp). MFU: the causal count over the dense peak. ``.estimate``: the best estimate.

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapter 13."""
    m, hw = get_model(model), get_accelerator(hw)
    ints = {name: positive(name, v, integer=True) for name, v in (
        ("n_chips", n_chips), ("seq_len", seq_len), ("global_batch", global_batch), ("micro_batch", micro_batch),
        ("tp", tp), ("pp", pp), ("cp", cp), ("virtual_stages", virtual_stages))}
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3 (3 = FSDP's full sharding), got {zero_stage!r}")
    if recompute not in RECOMPUTE_MODES:
        raise ValueError(f"recompute must be one of {', '.join(map(repr, RECOMPUTE_MODES))}, got {recompute!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    _precision(precision)
    if grad_reduce not in GRAD_REDUCE_BYTES:
        raise ValueError(f"grad_reduce must be one of {', '.join(map(repr, GRAD_REDUCE_BYTES))}, got {grad_reduce!r}")
    if PRECISIONS[precision] not in hw.peak_flops_by_dtype:
        raise ValueError(f"{hw.name} has no {precision} peak; its formats: {', '.join(hw.dtypes)}")
    _check_layout(ints["n_chips"], ints["global_batch"], ints["micro_batch"], ints["tp"], ints["pp"], ints["cp"],
                  m, ints["virtual_stages"])
    return train_step_unchecked(m, hw, _topology_for(hw, topology), zero_stage=zero_stage, recompute=recompute,
                                sp=bool(sp), precision=precision, optimizer=optimizer,
                                tp_overlap=tp_overlap_mode(tp_overlap), grad_reduce=grad_reduce, **ints)


def critical_tokens_per_chip(hw, link_bandwidth, *, zero_stage=0, grad_bytes=4, dtype="bf16", weight_bytes=2):
    """Tokens per chip per step below which data parallelism is communication-bound (How to Scale Your Model's
    critical batch): 6 N FLOPs per token of compute against the bytes of N parameters on the wire: an
    all-reduce's two passes of ``grad_bytes`` (4: fp32, as Megatron-LM, NeMo and torchtitan reduce; 2: bf16, as
    fms-fsdp does); ZeRO-3 two all-gathers of ``weight_bytes`` and one reduce-scatter of ``grad_bytes`` (with fp32
    gradients the same 8 bytes as DP). N cancels: peak / bandwidth x bytes per parameter moved / 6.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    hw = get_accelerator(hw)
    w = positive("link_bandwidth", link_bandwidth)
    g = positive("grad_bytes", grad_bytes)
    moved = 2 * positive("weight_bytes", weight_bytes) + g if zero_stage == 3 else 2 * g
    return hw.peak_flops(dtype) / w * moved / 6


__all__ = [
    "DECOMPOSED_SM_SHARE", "FLASH_BACKWARD", "GRAD_REDUCE_BYTES", "LOSS_BYTES_PER_LOGIT", "PRECISIONS",
    "TOPOLOGY_FOR_CHIP", "TP_OVERLAPS", "TrainStep", "critical_tokens_per_chip", "pipeline_bubble",
    "step_time_split", "step_workload", "train_step", "tp_overlap_mode"
]
