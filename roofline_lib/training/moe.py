"""Training a mixture of experts with expert parallelism (EP): the all-to-alls of every MoE layer forward and
backward, the expert gradients' reduction over the EP groups' replicas, grouped-GEMM efficiency at small per-expert
batches, DeepSeek-V3's DualPipe as arithmetic, and FP8 training's bytes per parameter.

An EP group of ``ep`` chips holds each routed expert once; data parallelism copies the group ``dp / ep`` times, so
an expert's gradient is reduced over those copies only, while the non-expert weights' are reduced over all ``dp``.
Per MoE layer a micro-batch runs four all-to-alls: forward dispatch (FP8) and combine (BF16), and backward the
combine's gradient (a dispatch, FP8: the report's Sec. 3.3.3 quantizes 'the activation gradient before MoE
down-projections' like the forward dispatch) and the dispatch's gradient (a combine, BF16), as DeepEP's normal
kernels move them (``multichip.expert_serving``). DualPipe (DeepSeek-V3 report, Sec. 3.2.1) runs one
micro-batch's forward chunk beside another's backward chunk so that each one's all-to-all hides under the other's
compute: the pair takes max(compute, communication) instead of their sum; its bubble is (PP/2 - 1)(F&B + B - 3W)
against 1F1B's (PP - 1)(F + B) (the report's Table 2).
"""

from __future__ import annotations

import dataclasses

from ..core.checks import positive
from ..multichip.expert_serving import alltoall_bytes_per_layer
from ..roofline.bounds import estimate
from ..roofline.workloads import matmul
from ..specs.hardware import get_accelerator
from ..specs.models import get_model

# DeepSeek-V3 report, Sec. 3.3.3: AdamW moments in BF16; 'the master weights (stored by the optimizer) and gradients
# (used for batch size accumulation) are still retained in FP32'. Bytes per parameter held for the whole run.
FP8_TRAINING_BYTES = {"fp32 master weights": 4, "fp32 gradients": 4, "bf16 Adam first moment": 2,
                      "bf16 Adam second moment": 2}


def _moe(model):
    m = get_model(model)
    if not m.moe:
        raise ValueError(f"{m.name} has no routed experts; expert parallelism needs a mixture-of-experts model")
    return m


def fp8_training_bytes_per_param():
    """Bytes per parameter of DeepSeek-V3's FP8 training (FP32 master weights and gradients, BF16 moments): 12,
    against mixed-precision AdamW's 16 (``training.bytes_per_param``).

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    return sum(FP8_TRAINING_BYTES.values())


def grouped_gemm_efficiency(model, hw, tokens_per_expert, dtype="fp8"):
    """The share of the peak one expert's gate/up GEMM can reach at ``tokens_per_expert`` rows: its time at peak
    compute over its roofline lower bound (weights read once per expert). Vectorised. Small per-expert batches leave
    the experts memory-bound: the reason an MoE step needs many tokens per expert.

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    m = _moe(model)
    hw = get_accelerator(hw)
    t = positive("tokens_per_expert", tokens_per_expert)
    w = matmul(t, 2 * m.moe.expert_intermediate_size, m.hidden_size, dtype, out_dtype="bf16")
    e = estimate(w, hw)
    return e.t_math / e.lower


def alltoall_bytes_per_step(model, tokens_per_chip, ep, *, gpus_per_node=8, node_limit=None):
    """Bytes one chip sends in one training step's all-to-alls, every MoE layer forward and backward (each an FP8
    dispatch and a BF16 combine), for ``tokens_per_chip`` tokens over an EP group of ``ep`` chips."""
    m = _moe(model)
    fwd = alltoall_bytes_per_layer(m, tokens_per_chip, ep, gpus_per_node=gpus_per_node, mode="normal",
                                   node_limit=node_limit)
    bwd = alltoall_bytes_per_layer(m, tokens_per_chip, ep, gpus_per_node=gpus_per_node, mode="normal",
                                   dispatch_dtype="fp8", node_limit=node_limit)
    one = sum(dataclasses.astuple(fwd)) + sum(dataclasses.astuple(bwd))
    return m.moe_layers * one


def expert_gradient_bytes(model, ep, dp, *, grad_dtype="bf16"):
    """Bytes one chip sends reducing its experts' gradients in one step: a ring all-reduce, 2(r - 1)/r of them,
    over the r = dp / ep copies of its EP group (nothing when dp == ep)."""
    m = _moe(model)
    ep = int(positive("ep", ep, integer=True))
    dp = int(positive("dp", dp, integer=True))
    if dp % ep:
        raise ValueError(f"dp ({dp}) must be a multiple of ep ({ep}): each EP group spans ep of the dp replicas")
    r = dp // ep
    held = m.param_groups()["routed_experts"] / ep * {"bf16": 2, "fp32": 4}[grad_dtype]
    return 2 * (r - 1) / r * held


@dataclasses.dataclass(frozen=True)
class MoELayerTimes:
    """One MoE layer of one micro-batch, forward and backward, per chip, in seconds."""

    t_compute: float  # 6 x its active parameters per token (attention projections, shared and routed experts)
    t_comm: float  # its four all-to-alls over NVLink and the NIC

    @property
    def sequential(self):
        """Compute, then communication: nothing overlapped."""
        return self.t_compute + self.t_comm

    @property
    def dualpipe(self):
        """Forward of one micro-batch beside the backward of another: each one's all-to-all under the other."""
        return max(self.t_compute, self.t_comm)

    @property
    def ratio(self):
        """Communication over computation (DeepSeek-V3 report, Sec. 3.2.1: 'approximately 1:1' across nodes)."""
        return self.t_comm / self.t_compute


def moe_layer_times(model, hw, tokens_per_chip, ep, *, gpus_per_node=8, nic_bandwidth=50e9, mfu=1.0,
                    dtype="fp8", node_limit=None):
    """``MoELayerTimes`` of one MoE layer for ``tokens_per_chip`` tokens: compute at ``mfu`` of the ``dtype`` peak
    (6 FLOPs per active weight per token); all-to-alls at the chip's NVLink (per direction) and ``nic_bandwidth``,
    both dispatches in FP8, both combines in BF16.

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    m = _moe(model)
    hw = get_accelerator(hw)
    t = positive("tokens_per_chip", tokens_per_chip)
    share = positive("mfu", mfu)
    if share > 1:
        raise ValueError(f"mfu is a share of the peak, at most 1; got {mfu}")
    e = m.moe
    active = m.attention_params_per_layer() + (e.experts_per_token + e.shared_experts) * 3 * m.hidden_size \
        * e.expert_intermediate_size
    t_compute = 6 * active * t / (share * hw.peak_flops(dtype))
    kw = dict(gpus_per_node=gpus_per_node, mode="normal", node_limit=node_limit)
    fwd = alltoall_bytes_per_layer(m, t, ep, **kw)
    bwd = alltoall_bytes_per_layer(m, t, ep, dispatch_dtype="fp8", **kw)  # the combine's gradient, sent in FP8
    nvlink = hw.interconnect_bandwidth / 2
    t_comm = fwd.time(nvlink, nic_bandwidth) + bwd.time(nvlink, nic_bandwidth)
    return MoELayerTimes(t_compute, t_comm)


def pipeline_bubble(schedule, pp, f, b, w=0.0):
    """Idle time of one pipeline flush (DeepSeek-V3 report, Table 2), with f, b, w the times of a forward chunk,
    a full backward chunk and its weight-gradient part: 1F1B (PP - 1)(F + B); ZB1P (PP - 1)(F + B - 2W);
    DualPipe (PP/2 - 1)(F&B + B - 3W), F&B the two overlapped chunks (taken as F + B, their no-overlap sum).

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    pp = int(positive("pp", pp, integer=True))
    forms = {"1f1b": (pp - 1) * (f + b), "zb1p": (pp - 1) * (f + b - 2 * w),
             "dualpipe": (pp / 2 - 1) * ((f + b) + b - 3 * w)}
    if schedule not in forms:
        raise ValueError(f"schedule must be one of {', '.join(forms)}; got {schedule!r}")
    if schedule == "dualpipe" and pp % 2:
        raise ValueError(f"DualPipe needs an even number of pipeline stages; got {pp}")
    return forms[schedule]


__all__ = ["alltoall_bytes_per_step", "expert_gradient_bytes", "FP8_TRAINING_BYTES", "fp8_training_bytes_per_param",
           "grouped_gemm_efficiency", "moe_layer_times", "MoELayerTimes", "pipeline_bubble"]
