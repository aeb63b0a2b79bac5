"""Bytes a training step keeps on each chip: weights, gradients, optimizer states and activations.

Model states, bytes per parameter (``OPTIMIZERS``; each row's inventory is in ``bytes_per_param``):

- ``"adamw"``: mixed precision with 16-bit gradients: bf16 weights 2 + bf16 gradients 2 + fp32 master weights,
  momentum and variance 4 + 4 + 4 = 16 (ZeRO, Rajbhandari et al. 2020: "2Ψ + 2Ψ + KΨ", K = 12);
- ``"adamw_fp32_grads"``: Megatron-LM's bf16 training, gradients accumulated in fp32: 2 + 4 + 12 = 18;
- ``"adamw_fp16"``: fp16 weights and gradients plus an fp32 copy of the gradients: 2 + 2 + 16 = 20;
- ``"adamw_fp32"``: everything in fp32, no master copy: 4 + 4 + 8 = 16.

The last three are the rows of Megatron-LM's distributed-optimizer table (18, 20, 16 bytes; sharded 6 + 12/d,
4 + 16/d, 8 + 8/d). ZeRO shards them over the ``dp x cp`` data-parallel chips: stage 1 the optimizer states
(Megatron's distributed optimizer), stage 2 the gradients too, stage 3 (FSDP) the weights too. Tensor
parallelism splits every state over ``tp``; a pipeline gives each stage ceil(L / pp) layers, and the first stage
the embedding, the last the LM head, or with tied embeddings a copy of the embedding that its gradients are
all-reduced with (Megatron-LM's ``share_embeddings_and_output_weights``): the first (or last) stage holds the
most, ``stage_params``. Without a pipeline a tied table is held once.

Activations per layer (Korthikanti et al. 2022, Sec. 4; their GPT layer stores s b h (34 + 5 a s / h) bytes in
16-bit with dropout, ``activation_bytes_per_layer``), term by term, so that other layers count too:

- attention block: its input (for the q, k, v projection) 2sbh, Q, K and V (2 bytes each element; with GQA, K
  and V have the K/V heads only), the input of the output projection 2sbh, and without FlashAttention the
  scores' softmax 2 a s^2 b; with dropout, a mask sbh after attention (and, without FlashAttention, a mask
  a s^2 b and the dropped-out softmax 2 a s^2 b). FlashAttention keeps only a log-sum-exp per head and
  position (4 a s b bytes) and recomputes the scores in the backward;
- MLP: its input 2sbh and 2 s b i for each intermediate it keeps (GELU's input and output: 2 of them; SwiGLU's
  gate, up and their product: 3), a dropout mask sbh with dropout;
- two norms' inputs, 2sbh each.

Tensor parallelism splits the attention and MLP interiors over ``tp``; the norms' inputs, the blocks' inputs
and the dropout masks are whole on every chip unless sequence parallelism (``sp``) splits them too (the "10 +
24/t" of the paper). Context parallelism splits the sequence over ``cp``. Selective recomputation drops the
scores (FlashAttention already has); full recomputation keeps only each layer's input (2sbh, split with sp)
and rebuilds one layer at a time, whose full activations are added once.

With pipeline parallelism the first stage binds: under 1F1B it holds ``min(pp, microbatches)`` micro-batches
of its layers, interleaving (``virtual_stages`` v > 1) 1 + (p - 1)/(p v) times more. The logits for the loss
(fp32, 4 s b V / tp) are on the last stage; they count in the total only without a pipeline.

Not counted: temporary buffers (ZeRO-3's gathered layer, communication buckets, the allocator's fragmentation),
the CUDA context, the embedding's output and the loss's gradient of the logits.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.checks import positive
from ..specs.models import get_model
from .flops import RECOMPUTE_MODES

OPTIMIZERS = {
    "adamw": {"weights (bf16)": 2, "gradients (bf16)": 2, "master weights (fp32)": 4, "momentum (fp32)": 4,
              "variance (fp32)": 4},
    "adamw_fp32_grads": {"weights (bf16)": 2, "gradients (fp32)": 4, "master weights (fp32)": 4,
                         "momentum (fp32)": 4, "variance (fp32)": 4},
    "adamw_fp16": {"weights (fp16)": 2, "gradients (fp16)": 2, "gradients (fp32 copy)": 4,
                   "master weights (fp32)": 4, "momentum (fp32)": 4, "variance (fp32)": 4},
    "adamw_fp32": {"weights (fp32)": 4, "gradients (fp32)": 4, "momentum (fp32)": 4, "variance (fp32)": 4},
}
# the gradients' format on the wire, bytes: fp32 as Megatron-LM (arguments.py: accumulate_allreduce_grads_in_fp32
# for bf16), NeMo and torchtitan (mixed_precision_reduce = "float32") reduce them; bf16 as fms-fsdp does
GRAD_REDUCE_BYTES = {"fp32": 4, "bf16": 2}
OPTIMIZER_SOURCES = (
    "Rajbhandari et al. 2020, 'ZeRO: Memory Optimizations Toward Training Trillion Parameter Models', Sec. 3.1 "
    "(mixed-precision Adam: 2 + 2 + 12 = 16 bytes per parameter); NVIDIA/Megatron-LM docs, distributed optimizer: "
    "18 (bf16 parameters, fp32 gradients), 20 (fp16, fp16) and 16 (fp32, fp32) bytes per parameter")


def _optimizer(name):
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(OPTIMIZERS)}")
    return OPTIMIZERS[name]


def bytes_per_param(optimizer="adamw"):
    """``(weights, gradients, optimizer states)`` bytes per parameter; optimizer states include the fp32 master
    weights (and the fp32 gradient copy of ``"adamw_fp16"``). Their sum is the optimizer's row of ``OPTIMIZERS``.

    Taught in chapter 14 (notebooks/14_mixture_of_experts.ipynb)."""
    items = _optimizer(optimizer)
    weights = sum(v for k, v in items.items() if k.startswith("weights"))
    grads = sum(v for k, v in items.items() if k.startswith("gradients (") and "copy" not in k)
    return weights, grads, sum(items.values()) - weights - grads


def update_bytes_per_param(optimizer="adamw"):
    """Bytes the optimizer's update moves per parameter it updates: it reads and writes every fp32 state
    (master weights, momentum, variance), reads the gradient (the fp32 copy where there is one) and writes the
    weights the matmuls read (with no master copy, the weights are read and written as states). AdamW in mixed
    precision: 2 x 12 + 2 + 2 = 28; with fp32 gradients 30.

    Taught in chapter 12 (notebooks/12_training_step.ipynb)."""
    items = _optimizer(optimizer)
    states = sum(v for k, v in items.items() if not k.startswith(("weights", "gradients")))
    copy = items.get("gradients (fp32 copy)")
    grad = copy or next(v for k, v in items.items() if k.startswith("gradients ("))
    weights = next(v for k, v in items.items() if k.startswith("weights"))
    has_master = "master weights (fp32)" in items
    return 2 * states + grad + (weights if has_master else 2 * weights)


def _layer_activations(m, b, s, tp, sp, cp, recompute, flash, dropout):
    """Bytes one layer keeps for the backward, on one chip (a float or array)."""
    h, a, d, g, i = m.hidden_size, m.num_heads, m.head_dim, m.num_kv_heads, m.intermediate_size
    s_local = s / cp
    sbh = s_local * b * h
    whole = 4 * sbh + 2 * sbh + 2 * sbh + (2 * sbh if dropout else 0)  # norms, two block inputs, masks
    split = 2 * s_local * b * (a * d + 2 * g * d) + 2 * s_local * b * a * d  # Q, K, V; output proj input
    if flash:
        split = split + 4 * a * s_local * b
        scores = 0
    else:
        scores = (5 if dropout else 2) * a * s_local * s * b
    kept = 3 if m.mlp == "gated" else 2
    mlp_i = m.moe.expert_intermediate_size * (m.moe.experts_per_token + m.moe.shared_experts) if m.moe else i
    split = split + kept * 2 * s_local * b * mlp_i
    if recompute == "full":
        return 2 * sbh / np.where(sp, tp, 1)
    if recompute == "every_other":  # torchtitan's per-op policy keeps about half a layer's tensors
        return (_layer_activations(m, b, s, tp, sp, cp, "none", flash, dropout)
                + _layer_activations(m, b, s, tp, sp, cp, "full", flash, dropout)) / 2
    if recompute == "selective":
        scores = 0
    return np.where(sp, whole / tp, whole) + (split + scores) / tp


def stage_params(m, tp, pp):
    """Parameters on one chip of the pipeline stage that holds the most: all of them over ``tp`` without a
    pipeline; with one, ceil(L / pp) layers' share of the layers' parameters plus the embedding table (the first
    stage's; the last holds as many for the LM head or the tied copy). Vectorised over ``tp`` and ``pp``."""
    groups = m.param_groups()
    outer = groups["embedding"]  # (V + positions) x h: at least the V x h the last stage holds
    body = m.n_params - outer - groups["lm_head"]
    staged = body * np.ceil(m.num_layers / np.asarray(pp)) / m.num_layers + outer
    return np.where(np.asarray(pp) == 1, m.n_params, staged) / tp


def _checked_layout(micro_batch, seq_len, tp, pp, cp, dp, microbatches, virtual_stages):
    b = positive("micro_batch", micro_batch, integer=True)
    s = positive("seq_len", seq_len, integer=True)
    tp, pp, cp, dp = (positive(n, v, integer=True) for n, v in (("tp", tp), ("pp", pp), ("cp", cp), ("dp", dp)))
    mb = pp if microbatches is None else positive("microbatches", microbatches, integer=True)
    v = positive("virtual_stages", virtual_stages, integer=True)
    return b, s, tp, pp, cp, dp, mb, v


def _choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def activation_bytes_per_layer(model, micro_batch, seq_len, *, tp=1, sp=False, cp=1, recompute="none",
                               flash_attention=True, dropout=False):
    """Bytes of activations one layer keeps for the backward pass, per chip, 16-bit (module docstring).
    With ``flash_attention=False, dropout=True`` a GPT layer gives Korthikanti's s b h (34 + 5 a s / h).

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapter 13."""
    m = get_model(model)
    b, s, tp, _, cp, _, _, _ = _checked_layout(micro_batch, seq_len, tp, 1, cp, 1, None, 1)
    return _layer_activations(m, b, s, tp, bool(sp), cp, _choice("recompute", recompute, RECOMPUTE_MODES),
                              bool(flash_attention), bool(dropout))


@dataclasses.dataclass(frozen=True)
class TrainingMemory:
    """Bytes per chip (numbers, or arrays for arrays in). ``activations`` is the first pipeline stage's (the
    most), ``logits`` the last stage's fp32 logits, in ``total`` only without a pipeline."""

    weights: object
    grads: object
    optimizer: object
    activations: object
    logits: object
    total: object
    bytes_per_param: int
    peak: object = None  # bytes an allocator reports at the step's peak (training.peak), where train_step set it
    peak_terms: dict = None  # its terms, bytes (training.peak.PeakMemory.terms)

    def __repr__(self):
        if np.ndim(self.total):
            return f"TrainingMemory(per chip, array {np.shape(self.total)})"
        parts = ", ".join(f"{name} {float(getattr(self, field)) / 1e9:.4g} GB" for name, field in (
            ("weights", "weights"), ("gradients", "grads"), ("optimizer", "optimizer"),
            ("activations", "activations"), ("logits", "logits")))
        return f"TrainingMemory(per chip: {parts}; total {float(self.total) / 1e9:.4g} GB)"

    @property
    def model_states(self):
        """Weights, gradients and optimizer states: bytes per chip."""
        return self.weights + self.grads + self.optimizer


def memory_unchecked(m, b, s, *, zero_stage, dp, tp, pp, cp, sp, recompute, flash, optimizer, microbatches,
                     virtual_stages, dropout):
    """``memory`` for a Model and checked sizes (what ``train_step`` calls; the layout may be arrays)."""
    w, g, o = bytes_per_param(optimizer)
    params = stage_params(m, tp, pp)
    shards = dp * cp
    zero = np.asarray(zero_stage)
    weights = params * w / np.where(zero >= 3, shards, 1)
    grads = params * g / np.where(zero >= 2, shards, 1)
    states = params * o / np.where(zero >= 1, shards, 1)
    per_layer = _layer_activations(m, b, s, tp, sp, cp, recompute, flash, dropout)
    layers = np.ceil(m.num_layers / pp)
    in_flight = np.minimum(pp, microbatches)
    interleave = np.where(virtual_stages > 1, 1 + (pp - 1) / (pp * virtual_stages), 1.0)
    activations = per_layer * layers * in_flight * interleave
    if recompute == "full":  # one layer rebuilt at a time holds everything
        activations = activations + _layer_activations(m, b, s, tp, sp, cp, "none", flash, dropout)
    logits = 4 * (s / cp) * b * m.vocab_size / tp
    total = weights + grads + states + activations + np.where(pp == 1, logits, 0)
    return TrainingMemory(weights, grads, states, activations, logits, total, w + g + o)


def memory(model, micro_batch, seq_len, *, zero_stage=0, dp=1, tp=1, pp=1, cp=1, sp=False, recompute="none",
           flash_attention=True, optimizer="adamw", microbatches=None, virtual_stages=1, dropout=False):
    """Bytes per chip of one training configuration: a ``TrainingMemory`` (``.weights .grads .optimizer
    .activations .total``). ``microbatches``: micro-batches per step per pipeline (default ``pp``: 1F1B full).
    Vectorised over the sizes.

    Taught in chapter 12 (notebooks/12_training_step.ipynb); also used in chapter 13."""
    m = get_model(model)
    b, s, tp, pp, cp, dp, mb, v = _checked_layout(micro_batch, seq_len, tp, pp, cp, dp, microbatches,
                                                  virtual_stages)
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3 (3 = FSDP's full sharding), got {zero_stage!r}")
    _optimizer(optimizer)
    return memory_unchecked(m, b, s, zero_stage=zero_stage, dp=dp, tp=tp, pp=pp, cp=cp, sp=bool(sp),
                            recompute=_choice("recompute", recompute, RECOMPUTE_MODES), flash=bool(flash_attention),
                            optimizer=optimizer, microbatches=mb, virtual_stages=v, dropout=bool(dropout))


__all__ = [
    "GRAD_REDUCE_BYTES", "OPTIMIZERS", "OPTIMIZER_SOURCES", "TrainingMemory", "activation_bytes_per_layer",
    "bytes_per_param", "memory", "stage_params", "update_bytes_per_param"
]
