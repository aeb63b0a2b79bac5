"""The best estimate of a training step, beside ``train_step``'s optimistic model and the bound: the same work,
each cost a real framework pays named as a term (seconds per step, per chip).

- ``compute``: every kernel of the slowest pipeline stage's micro-batches at the chip's *achieved* ceilings
  (its ``[measured]`` matmul and copy figures; ``achieved_rates``). A matmul reaches that ceiling only when
  its smallest per-chip dimension is large: ``matmul_efficiency`` falls off as d / (d + ``MATMUL_HALF_DIM``)
  (wide TP's narrow GEMMs); FlashAttention runs at ``ATTENTION_FORWARD_SHARE`` and its backward at
  ``ATTENTION_BACKWARD_SHARE`` of the dense peak; norms, activations, RoPE, residuals and the loss at the achieved
  bandwidth; FP8 matmuls ``FP8_MATMUL_SPEEDUP`` times faster than bf16 ones (the scaling and casting they add
  included);
- ``pipeline bubble``: (p - 1)/v of that stage's micro-batch time;
- ``tensor parallel``, ``context parallel``, ``pipeline sends``: as ``train_step`` (NCCL latency per collective and
  send; TP as Megatron-LM issues it, or under every neighbouring GEMM with ``tp_overlap="decomposed"``), on this
  estimate's GEMM times where ``"decomposed"`` hides under them;
- ``data parallel`` as frameworks schedule it: gradients reduced in buckets (Megatron-LM's ``bucket_size`` of
  ``DDP_BUCKET_PARAMS``) under the last micro-batch's backward, the last bucket always exposed; ZeRO-1 then
  all-gathers the updated weights after the optimizer, exposed (Megatron-LM's ``overlap_param_gather`` is off by
  default); ZeRO-2 reduce-scatters every micro-batch; ZeRO-3 (FSDP) gathers every layer for every forward and,
  resharded after it, again for the backward, prefetched one layer ahead: the first gather of each pass is
  exposed, the rest beyond the pass's compute;
- ``optimizer``: its update at the achieved bandwidth;
- ``host``: ``HOST_MICROBATCH_S`` per micro-batch (Python, launches and synchronisation the device waits for).

Constants marked *fitted* were fitted (``python -m roofline_lib.training.fit``) on the records named in
``FITTED_ON`` only: every other record is held out, and ``fit.error_table`` reports the two apart, by family.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..llm import parts as k
from ..multichip.collectives import ring_allreduce_time_unchecked as ring_time
from ..specs.hardware import get_accelerator, list_accelerators
from . import links
from .flops import _course
from .links import DECOMPOSED_SM_SHARE, tp_latency
from .memory import stage_params, update_bytes_per_param
from .one_chip import LOSS_BYTES_PER_LOGIT, PRECISIONS, _step_parts

# FlashAttention-2 (Dao 2023, arXiv:2307.08691, abstract): "reaching 50-73% of the theoretical maximum FLOPs/s on
# A100": the forward taken at the middle of that range, the backward (the slower pass: it recomputes the scores and
# runs five matmuls for the forward's two) at its low end. Not fitted.
ATTENTION_FORWARD_SHARE = 0.60
ATTENTION_BACKWARD_SHARE = 0.50
# Megatron-LM megatron/core/distributed/distributed_data_parallel.py: bucket_size = max(40000000, 1000000 * dp)
# parameters per bucket of the gradient buffer
DDP_BUCKET_PARAMS = 40_000_000
# the smallest per-chip GEMM dimension at which a matmul reaches half its large-shape ceiling (fitted)
MATMUL_HALF_DIM = 2048.0
# a large shape, where published ceilings are measured (ml-engineering's maximum-achievable-matmul finder sweeps
# large shapes and keeps the best): the efficiency is 1 there
CEILING_DIM = 8192.0
# FP8 matmuls (with their scaling and casts) against bf16 ones at the achieved ceiling (fitted)
FP8_MATMUL_SPEEDUP = 1.2
# host work per micro-batch the device waits for (fitted)
HOST_MICROBATCH_S = 0.01
# split 0 of fit.py (crc32 of the id even): the record ids the fitted constants saw
FITTED_ON = (
    "fmsfsdp-llama2-13b-a100-128gpu",
    "fmsfsdp-llama2-34b-h100-96gpu",
    "llmfoundry-mpt125m-a100-80gb-8gpu-s2048-amp-bf16",
    "llmfoundry-mpt1b-h100-80gb-8gpu-s512-amp-bf16",
    "llmfoundry-mpt1b-h100-80gb-8gpu-s512-amp-fp8",
    "llmfoundry-mpt30b-a100-80gb-8gpu-s2048-amp-bf16",
    "llmfoundry-mpt70b-a100-40gb-128gpu-s2048-bf16",
    "llmfoundry-mpt70b-a100-80gb-64gpu-s2048-bf16",
    "llmfoundry-mpt70b-h100-80gb-128gpu-s2048-amp-bf16",
    "llmfoundry-mpt7b-h100-80gb-8gpu-s65536-amp-bf16",
    "megatron-core-h100-2024-1.7b",
    "megatron-core-h100-2024-7.1b",
    "megatron2021-t1-18b",
    "megatron2021-t1-310b",
    "megatron2021-t1-530b",
    "megatron2021-t1-76b",
    "megatron2021-t2-ptd-174b-1536",
    "megatron2021-t2-ptd-174b-768",
    "megatron2021-t2-ptd-529b-1120",
    "megatron2021-t2-zero3-174b-1536",
    "megatron2021-t2-zero3-174b-384",
    "megatron2021-t2-zero3-529b-1120",
    "mlengineering-b200-llama31-8b-8k-zero2",
    "mlengineering-b200-llama31-8b-8k-zero3",
    "mlengineering-h200-llama31-8b-256k-zero3",
    "mlperf40-gpt3-nvidia-eos-512",
    "nemo2511-dgx-b200-llama31_405b-fp8-cs",
    "nemo2511-dgx-b200-llama31_405b-fp8-mx",
    "nemo2511-dgx-gb200-llama31_405b-fp8-cs",
    "nemo2511-dgx-gb200-llama3_70b-fp8-cs",
    "nemo2511-dgx-h100-llama31_405b-fp8-cs",
    "nemo2511-dgx-h100-llama3_8b-fp8-cs",
    "torchtitan-2024-12-405b-512gpu-1f1b",
    "torchtitan-2024-12-405b-512gpu-cp2-64k",
    "torchtitan-2024-12-405b-512gpu-cp4-128k",
    "torchtitan-2024-12-405b-512gpu-cp8-256k",
    "torchtitan-2024-12-405b-512gpu-interleaved",
    "torchtitan-2024-12-70b-256gpu-2d",
    "torchtitan-2024-12-70b-256gpu-2d-asynctp",
    "torchtitan-2024-12-8b-128gpu-fsdp",
    "torchtitan-2024-12-8b-128gpu-fsdp-compile",
    "torchtitan-2024-12-8b-8gpu-cp2-64k",
    "torchtitan-2024-12-8b-8gpu-cp4-128k",
    "torchtitan-2024-12-8b-8gpu-cp8-256k",
    "torchtitan-2024-12-8b-8gpu-fsdp",
    "torchtitan-a100-2024-l2-13b-sel-op",
    "torchtitan-a100-2024-l2-70b-full",
    "torchtitan-a100-2024-l2-70b-sel-op",
    "torchtitan-a100-2024-l3-70b-full",
    "torchtitan-a100-2024-l3-8b-sel-op",
    "torchtitan-asynctp-2025-06-70b-bf16-vanillatp",
    "torchtitan-asynctp-2025-06-70b-fp8-asynctp",
    "torchtitan-asynctp-2025-06-8b-bf16-asynctp",
    "torchtitan-asynctp-2025-06-8b-fp8-vanillatp",
    "torchtitan-trainy-h200-8b-32gpu",
    "torchtitan-trainy-h200-8b-64gpu",
)


def achieved_rates(hw):
    """(bf16 matmul FLOP/s, byte/s) that published benchmarks reach on ``hw``: its ``[measured]`` ceilings, or the
    datasheet's times the median share over the chips that have them."""
    if hw.measured:
        return hw.measured["bf16"], hw.measured["mem_bandwidth"]
    chips = [c for c in (get_accelerator(n) for n in list_accelerators()) if c.measured]
    compute = float(np.median([c.measured["bf16"] / c.peak_flops("bf16") for c in chips]))
    memory = float(np.median([c.measured["mem_bandwidth"] / c.mem_bandwidth for c in chips]))
    return hw.peak_flops("bf16") * compute, hw.mem_bandwidth * memory


def matmul_efficiency(dim):
    """Share of the achieved ceiling a matmul reaches whose smallest per-chip dimension is ``dim``: d / (d + d_half),
    relative to the ceiling's own 8192-wide shape, at most 1.

    Taught in chapter 13 (notebooks/13_training_parallel.ipynb)."""
    d = np.asarray(dim, float)
    return np.minimum(d / (d + MATMUL_HALF_DIM) / (CEILING_DIM / (CEILING_DIM + MATMUL_HALF_DIM)), 1.0)


def _sharded_dim(m, kind, tp):
    """The smaller of a matmul's N and K on one chip of ``tp``: column-parallel split N, row-parallel K."""
    h, a, g, d, i = m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim, m.intermediate_size
    gated = 2 if m.mlp == "gated" else 1
    dims = {k.QKV_PROJECTION: ((a + 2 * g) * d / tp, h), k.OUTPUT_PROJECTION: (h, a * d / tp),
            k.MLP_GATE_UP: (gated * i / tp, h), k.MLP_DOWN: (h, i / tp), k.LM_HEAD_MATMUL: (m.vocab_size / tp, h)}
    return min(dims.get(kind, (h / tp, h)))


_KERNELS = {}


def _kernels(m, hw, s, precision, recompute, tp, cp, micro_batch):
    """(seconds of one layer, of the head + loss, of one layer's GEMMs, of one layer's attention) for one
    micro-batch on one chip, at this estimate's rates."""
    key = (id(m), m.name, hw.name, s, precision, recompute, tp, cp, micro_batch, _constants())
    if key not in _KERNELS:
        _KERNELS[key] = _kernels_now(m, hw, s, precision, recompute, tp, cp, micro_batch)
    return _KERNELS[key]


def _kernels_now(m, hw, s, precision, recompute, tp, cp, micro_batch):
    peak, bandwidth = achieved_rates(hw)
    fp8 = PRECISIONS[precision] == "fp8"
    tokens = micro_batch * s / cp
    layer = head = gemms = attention = 0.0
    for index, part in enumerate(_step_parts(m, micro_batch, s, PRECISIONS[precision], recompute)):
        for p in part.leaves():
            flops, nbytes = p.flops / (tp * cp), p.bytes / (tp * cp)
            if p.kind is k.ATTENTION:
                share = ATTENTION_BACKWARD_SHARE if index == 1 else ATTENTION_FORWARD_SHARE
                t = max(flops / (hw.peak_flops("bf16") * share), nbytes / bandwidth)
                attention += t / m.num_layers
            elif p.kind.kernel and p.kind is not k.EMBEDDING:
                rate = peak * matmul_efficiency(min(_sharded_dim(m, p.kind, tp), tokens))
                t = max(flops / rate / (FP8_MATMUL_SPEEDUP if fp8 else 1.0), nbytes / bandwidth)
                if p.kind.per_layer:
                    gemms += t / m.num_layers
            else:
                t = nbytes / bandwidth
            if p.kind.per_layer:
                layer += t / m.num_layers
            else:
                head += t
    head += LOSS_BYTES_PER_LOGIT * tokens * m.vocab_size / tp / bandwidth
    return layer, head, gemms, attention


def _constants():
    return (MATMUL_HALF_DIM, FP8_MATMUL_SPEEDUP, ATTENTION_FORWARD_SHARE, ATTENTION_BACKWARD_SHARE)


def _per_config(fn, *arrays):
    """``fn`` of each configuration (arrays broadcast together), computed once per distinct one."""
    shaped = np.broadcast_arrays(*[np.asarray(a) for a in arrays])
    out = [fn(*(x.item() for x in row)) for row in zip(*[a.ravel() for a in shaped], strict=True)]
    out = np.array(out, float).reshape(shaped[0].shape + (-1,))
    return [out[..., i] if out.ndim > 1 else out[i] for i in range(out.shape[-1])]


@dataclasses.dataclass(frozen=True)
class StepEstimate:
    """The best estimate of one step on one chip: its terms (seconds), their sum, tokens/s per chip and MFU (the
    causal count over the dense peak); ``mfu_terms``: the share of the step each term takes."""

    terms: dict
    step_time_s: object
    tokens_per_s_per_chip: object
    mfu: object

    def __repr__(self):
        if np.ndim(self.step_time_s):
            return f"StepEstimate(array {np.shape(self.step_time_s)})"
        parts = ", ".join(f"{n} {float(v):.3g} s" for n, v in self.terms.items() if float(v) > 0)
        return (f"StepEstimate(step {float(self.step_time_s):.4g} s, {float(self.tokens_per_s_per_chip):.4g} "
                f"tokens/s per chip, MFU {float(self.mfu):.1%}: {parts})")

    @property
    def mfu_terms(self):
        """Each term's share of the step (they add to 1): where the MFU the compute alone would reach goes."""
        return {n: v / self.step_time_s for n, v in self.terms.items()}


def estimate_step(optimistic):
    """The best estimate (``StepEstimate``) of the configuration a ``TrainStep`` holds (``train_step``'s optimistic
    model of it; arrays allowed, as ``search`` passes them). ``TrainStep.estimate`` calls it."""
    m, hw, topo = optimistic._inputs
    c = optimistic.config
    s, global_batch, micro_batch, n_chips = c["seq_len"], c["global_batch"], c["micro_batch"], c["n_chips"]
    tp, pp, cp, dp, zero_stage = c["tp"], c["pp"], c["cp"], c["dp"], c["zero_stage"]
    recompute, sp, virtual_stages, precision = c["recompute"], c["sp"], c["virtual_stages"], c["precision"]
    optimizer, tp_overlap, grad_reduce = c["optimizer"], c["tp_overlap"], c["grad_reduce"]
    layer, head, gemms, attention = _per_config(
        lambda t, c, b: _kernels(m, hw, s, precision, recompute, int(t), int(c), int(b)), tp, cp, micro_batch)
    mb = global_batch / (dp * micro_batch)
    layers = np.ceil(m.num_layers / pp)
    t_mb = layers * layer + head
    terms = {"compute": mb * t_mb, "pipeline bubble": (pp - 1) / virtual_stages * t_mb}
    # TP: the bound's exposed collectives, or under this estimate's neighbouring GEMMs
    terms["tensor parallel"] = _tensor_parallel(optimistic, topo, m, s, micro_batch, tp, cp, sp, recompute, mb,
                                                layers, gemms, tp_overlap)
    bw_tp, bw_cp, bw_dp, bw_pp = links.group_bandwidths(topo, tp, cp, dp, pp)
    cp_bound = optimistic.terms["context parallel"]
    terms["context parallel"] = np.where(cp > 1, np.maximum(cp_bound, 0.0), 0.0)
    terms["pipeline sends"] = optimistic.terms["pipeline sends"]
    terms["data parallel"] = _data_parallel(m, topo, optimizer, grad_reduce, tp, pp, cp, dp, zero_stage, mb,
                                            layers * layer, bw_dp)
    _, bandwidth = achieved_rates(hw)
    params = stage_params(m, tp, pp)
    updated = params / np.where(np.asarray(zero_stage) >= 1, dp * cp, 1)
    terms["optimizer"] = updated * update_bytes_per_param(optimizer) / bandwidth
    terms["host"] = HOST_MICROBATCH_S * mb
    step = sum(terms.values())
    tokens = global_batch * s / (step * n_chips)
    mfu = tokens * _course(m, s, True, "none") / hw.peak_flops(PRECISIONS[precision])
    return StepEstimate(terms, step, tokens, mfu)


def _tensor_parallel(optimistic, topo, m, s, b, tp, cp, sp, recompute, mb, layers, gemms, tp_overlap):
    if tp_overlap != "decomposed":
        return optimistic.terms["tensor parallel"]

    bw_tp = links.group_bandwidths(topo, tp, 1, 1, 1)[0]
    n_tp = 4 + np.where(sp, 1, 0) + np.where(recompute == "full", 2, 0)
    one = ring_time(b * (s / cp) * m.hidden_size * 2, tp, bw_tp) + tp_latency(topo, tp, sp)
    neighbour = gemms / n_tp
    return np.where(tp > 1, mb * layers * n_tp * (np.maximum(one - neighbour, 0.0)
                                                  + DECOMPOSED_SM_SHARE * neighbour), 0.0)


def _data_parallel(m, topo, optimizer, grad_reduce, tp, pp, cp, dp, zero_stage, mb, t_stage_layers, bw_dp):
    """Exposed data-parallel seconds per step, as Megatron-LM (ZeRO 0-2) and FSDP (ZeRO-3) schedule them."""
    from .memory import GRAD_REDUCE_BYTES, bytes_per_param

    shards = dp * cp
    params = stage_params(m, tp, pp)
    g, w = GRAD_REDUCE_BYTES[grad_reduce], bytes_per_param(optimizer)[0]
    zero = np.asarray(zero_stage)

    def pass_time(nbytes, steps=1):  # one all-gather or reduce-scatter (steps 1) or all-reduce (2) of nbytes
        return np.where(shards > 1, ring_time(nbytes, shards, bw_dp) * steps / 2
                        + links.collective_latency(topo, tp, shards, steps), 0.0)

    backward, forward = 2 / 3 * t_stage_layers, 1 / 3 * t_stage_layers  # of one micro-batch on this stage
    bucket = np.minimum(np.maximum(DDP_BUCKET_PARAMS, 1_000_000 * shards), params)
    allreduce, last_ar = pass_time(params * g, 2), pass_time(bucket * g, 2)
    scatter, last_rs = pass_time(params * g), pass_time(bucket * g)
    gather_w = pass_time(params * w)
    zero0 = np.maximum(allreduce - backward, last_ar)
    zero1 = np.maximum(scatter - backward, last_rs) + gather_w
    zero2 = mb * np.maximum(scatter - backward, last_rs) + gather_w
    per_layer = np.ceil(m.num_layers / pp)
    first = pass_time(params * w / per_layer)  # one layer's gather, before anything can hide it
    zero3 = mb * (2 * first + np.maximum(gather_w - forward, 0.0) + np.maximum(gather_w + scatter - backward, 0.0))
    return np.where(shards > 1, np.select([zero == 0, zero == 1, zero == 2], [zero0, zero1, zero2], zero3), 0.0)


__all__ = ["ATTENTION_BACKWARD_SHARE", "ATTENTION_FORWARD_SHARE", "CEILING_DIM", "DDP_BUCKET_PARAMS",
           "FITTED_ON", "FP8_MATMUL_SPEEDUP", "HOST_MICROBATCH_S", "MATMUL_HALF_DIM", "StepEstimate",
           "achieved_rates", "estimate_step", "matmul_efficiency"]
