"""The peak memory a PyTorch training step reports per GPU (``torch.cuda.max_memory_reserved``, what torchtitan
prints as "Memory(GiB)"), term by term: the theory's model states and activations (``memory``) as frameworks
actually keep them, plus what they add.

- weights, gradients, optimizer states. ZeRO 0-2 as Megatron-LM keeps them: bf16 weights, the gradient buffer in
  the reduction's format (fp32 by default: ``main_grad``, megatron/core/distributed/param_and_grad_buffer.py),
  fp32 master weights, momentum and variance (sharded over dp x cp from ZeRO-1, the gradients from ZeRO-2). ZeRO-3
  as FSDP2 keeps them: the sharded parameters stay fp32 (torch.distributed.fsdp MixedPrecisionPolicy: "FSDP ...
  keeps the high-precision sharded parameters in memory anyway"), their fp32 gradients and AdamW's two states,
  16 bytes per parameter over dp x cp, plus ``FSDP_UNSHARDED_LAYERS`` layers gathered in bf16 at a time (the one
  computing and the one prefetched) and one layer's unsharded bf16 gradients and fp32 reduce-scatter buffer;
- activations: ``memory``'s (Korthikanti's terms, the pipeline's in-flight micro-batches), on the first stage;
- the loss: the last stage holds the bf16 logits, their fp32 copy (torchtitan's loss upcasts them) and the fp32
  gradient of it: 10 bytes per logit of a micro-batch, beside its own layers' activations of the one micro-batch
  it has in flight under 1F1B; with a pipeline the peak is that of the first or the last stage, whichever holds
  more (both hold ``stage_params`` parameters: the embedding, or the LM head or a tied embedding's copy);
- the largest op's temporaries: the MLP's backward holds the gradient of its intermediate beside it (two bf16
  tensors of the micro-batch's intermediate width);
- fragmentation: the caching allocator reserves more than it has allocated: ``FRAGMENTATION`` times the sum
  (an assumption, not fitted).

Known misses (``tests/test_training_estimate.py`` prints every published figure's ratio): torchtitan's
"selective" checkpointing, a per-op policy that recomputes every other matmul of a block (``recompute=
"every_other"``, which its records use), keeps about half a layer's tensors here: its 8B runs on H100 come out
within 6 % of their published peak, the H200 ones 1.4x; its 405B pipeline runs, about half.

Outside the allocator, so outside the reported peak but not outside the GPU: the CUDA context and NCCL's
buffers (``CUDA_CONTEXT_BYTES``, ``NCCL_BYTES``). ``fits`` decides on the peak plus them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .memory import GRAD_REDUCE_BYTES, memory_unchecked, stage_params

GIB = 2 ** 30
FSDP_UNSHARDED_LAYERS = 2  # torchtitan: reshard_after_forward, one layer prefetched ahead of the one computing
LOSS_BYTES_PER_LOGIT = 2 + 4 + 4  # bf16 logits, their fp32 copy, its fp32 gradient
# PyTorch's CUDA semantics notes: the CUDA context (kernels, cuBLAS/cuDNN handles) is allocated outside the caching
# allocator; on an H100 with PyTorch 2.x it is about 0.5 GiB
CUDA_CONTEXT_BYTES = 0.5 * GIB
# NCCL's buffers per communicator: NCCL_BUFFSIZE 4 MiB per channel and peer direction (NCCL docs, env variables);
# a few communicators (tp, dp, pp) of up to 32 channels: about 1 GiB
NCCL_BYTES = 1.0 * GIB
# reserved / allocated at the peak: the caching allocator rounds blocks up and keeps freed ones for reuse; 10 % is
# an assumption, not fitted (tests/test_training_peak.py prints the published figures' ratios against it)
FRAGMENTATION = 1.10


@dataclasses.dataclass(frozen=True)
class PeakMemory:
    """Bytes per GPU: ``terms`` (allocated at the peak, on the stage that binds), ``peak`` (what the allocator
    reports: their sum times the fragmentation), ``outside`` (CUDA context and NCCL, not in the peak) and ``fits``."""

    terms: dict
    peak: object
    outside: float
    fits: object

    def __repr__(self):
        if np.ndim(self.peak):
            return f"PeakMemory(array {np.shape(self.peak)})"
        parts = ", ".join(f"{n} {float(v) / GIB:.3g}" for n, v in self.terms.items())
        verdict = "fits" if self.fits else "does NOT fit"
        return f"PeakMemory(peak {float(self.peak) / GIB:.4g} GiB per GPU: {parts} GiB; {verdict})"

    @property
    def peak_gib(self):
        """The peak in GiB, as frameworks print it."""
        return self.peak / GIB


def peak_memory(m, hw, *, n_chips, seq_len, global_batch, micro_batch, tp, pp, cp, dp, zero_stage, recompute, sp,
                virtual_stages, precision, optimizer, topology=None, tp_overlap="none", grad_reduce="fp32"):
    """The peak allocator memory (``PeakMemory``) of the configuration ``train_step`` was given (its ``config``);
    ``train_step`` puts it in ``TrainStep.memory.peak`` and decides ``fits`` on it. Vectorised over the layout."""
    s, b = seq_len, micro_batch
    zero = np.asarray(zero_stage)
    shards = dp * cp
    params = stage_params(m, tp, pp)
    layer_params = params / np.ceil(m.num_layers / pp)
    g = GRAD_REDUCE_BYTES[grad_reduce]
    fsdp = zero >= 3
    weights = np.where(fsdp, 4 * params / shards + FSDP_UNSHARDED_LAYERS * 2 * layer_params, 2 * params)
    grads = np.where(fsdp, 4 * params / shards + (2 + 4) * layer_params,
                     g * params / np.where(zero >= 2, shards, 1))
    states = np.where(fsdp, 8 * params / shards, 12 * params / np.where(zero >= 1, shards, 1))
    mb = global_batch / (dp * micro_batch)
    layout = dict(zero_stage=zero, dp=dp, tp=tp, pp=pp, cp=cp, sp=sp, recompute=recompute, flash=True,
                  optimizer=optimizer, dropout=False)
    mem = memory_unchecked(m, b, s, microbatches=mb, virtual_stages=virtual_stages, **layout)
    last_stage = memory_unchecked(m, b, s, microbatches=1, virtual_stages=1, **layout).activations  # 1 in flight
    logits = LOSS_BYTES_PER_LOGIT * b * (s / cp) * m.vocab_size / tp
    width = m.moe.expert_intermediate_size * m.moe.experts_per_token if m.moe else m.intermediate_size
    temporaries = 2 * 2 * b * (s / cp) * width / tp
    # the first stage holds the most activations, the last its one micro-batch's and the logits; without a
    # pipeline one stage holds both
    activations = np.where(pp == 1, mem.activations + logits, np.maximum(mem.activations, last_stage + logits))
    terms = {"weights": weights, "gradients": grads, "optimizer states": states, "activations and loss": activations,
             "largest op's temporaries": temporaries}
    allocated = sum(terms.values())
    terms["fragmentation"] = (FRAGMENTATION - 1) * allocated
    peak = allocated * FRAGMENTATION
    outside = CUDA_CONTEXT_BYTES + NCCL_BYTES
    return PeakMemory(terms, peak, outside, peak + outside <= hw.mem_capacity)


__all__ = ["CUDA_CONTEXT_BYTES", "FRAGMENTATION", "FSDP_UNSHARDED_LAYERS", "GIB",
           "LOSS_BYTES_PER_LOGIT", "NCCL_BYTES", "PeakMemory", "peak_memory"]
