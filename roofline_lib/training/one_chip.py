"""One training step on one chip as workloads (``step_workload``), and its time on the roofline
(``step_time_split``).

The forward of ``llm.blocks`` over whole sequences (causal attention, logits for every position, no KV-cache
write); the backward as twice the forward in FLOPs and bytes (each matmul's two gradient matmuls; a small op's
backward reads its input and the incoming gradient and writes one or two gradients: 2x is the round figure),
except attention, whose FlashAttention backward recomputes the scores: five matmuls for the forward's two, 2.5x
its FLOPs (hardware FLOPs: MFU does not count the extra half); a recomputed forward where asked; and the
optimizer's update, a memory-bound pass over every parameter the chip updates (``memory.update_bytes_per_param``:
AdamW in mixed precision reads and writes its three fp32 states, reads the gradient and writes the bf16 weight,
28 bytes).
"""

from __future__ import annotations

from ..core.checks import dtypes as checked_dtypes
from ..core.checks import positive
from ..llm import blocks
from ..llm import parts as k
from ..roofline.bounds import estimate
from ..roofline.workloads import Workload, total
from ..specs.models import get_model
from .flops import RECOMPUTE_MODES, every_other_share
from .memory import OPTIMIZERS, update_bytes_per_param

FLASH_BACKWARD = 2.5  # FlashAttention's backward: S = QK^T again, then dV, dP, dQ, dK: 5 matmuls for the forward's 2
OPTIMIZER_FLOPS_PER_PARAM = 12  # AdamW: two moments, bias corrections, a square root, a division, decay
# the loss on the logits (PyTorch's cross_entropy = log_softmax + nll_loss on the upcast logits): the forward reads
# the bf16 logits (2 bytes) and writes fp32 log-probabilities (4), the backward reads them (4) and writes the bf16
# gradient of the logits (2): 12 bytes per logit, at the memory roof
LOSS_BYTES_PER_LOGIT = 12
PRECISIONS = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "mxfp8": "fp8"}


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
    elif recompute == "every_other":  # torchtitan's selective checkpointing: every other matmul of a layer
        again = [(p, every_other_share(m, p.kind)) for p in fwd.leaves() if p.kind.kernel and p.kind.per_layer]
        parts.append(total("recomputed matmuls", [
            Workload.trusted(f"recomputed {p.name}", p.flops * f, p.bytes * f, p.dtype, category=p.category,
                             kind=p.kind) for p, f in again if f > 0]))
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
    if recompute not in RECOMPUTE_MODES:
        raise ValueError(f"recompute must be one of {', '.join(map(repr, RECOMPUTE_MODES))}, got {recompute!r}")
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



__all__ = ["FLASH_BACKWARD", "LOSS_BYTES_PER_LOGIT", "OPTIMIZER_FLOPS_PER_PARAM", "PRECISIONS", "step_time_split",
           "step_workload"]
