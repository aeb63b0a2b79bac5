"""Chapter 12: one training step. Model shapes come from data/models, chip figures from data/accelerators."""

from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from ..training import (
    accumulation_steps,
    activation_bytes_per_layer,
    activation_offload,
    flops_per_token,
    matmul_params,
    memory,
    mixed_peak_flops,
    time_to_train,
    train_step,
)
from .core import Question


def _flops_qwen3():
    return float(flops_per_token("qwen3-8b", 4096, causal=True))


def _attention_share_32k():
    m, s = get_model("llama-3.1-70b"), 32768
    return float(1 - 6 * sum(matmul_params(m)) / flops_per_token(m, s, causal=True))


def _model_states_70b():
    return float(memory("llama-3.1-70b", 1, 8192, optimizer="adamw_fp32_grads").model_states)


def _smallest_zero_stage():
    """The lowest ZeRO stage at which Llama-3-8B (AdamW, bf16, fp32 gradients as Megatron-LM keeps them) fits
    8 x H100 SXM5, micro-batch 1 of 4,096: decided on the allocator's modelled peak plus the CUDA context and NCCL's
    buffers (``train_step(...).fits``), not on the kept total."""
    for stage in (0, 1, 2, 3):
        if train_step("llama-3-8b", "H100 SXM5", n_chips=8, seq_len=4096, global_batch=8, zero_stage=stage).fits:
            return str(stage)
    return "none"


def _hfu_over_mfu_full():
    m, s = "gpt-3-175b", 2048
    return float(flops_per_token(m, s, recompute="full") / flops_per_token(m, s))


def _gpt3_activations_tp8():
    return float(activation_bytes_per_layer("gpt-3-175b", 1, 2048, tp=8, flash_attention=False, dropout=True))


def _gpu_hours_7b():
    return float(time_to_train("llama-2-7b", "A100 80GB SXM4", 2e12, 1, 4096, mfu=0.4).chip_hours)


def _peak_slip():
    # the log's 324.5 TFLOP/s at "MFU 104 %" is a division by 312 TFLOP/s, the A100's dense bf16 peak (nanoGPT's
    # estimate_mfu constant), whatever the chip: the same model FLOP/s over the H100's own dense bf16 peak is the MFU
    return float(324.5e12 / get_accelerator("H100 SXM5").peak_flops("bf16"))


def _fp8_mixed_mfu():
    return float(800e12 / mixed_peak_flops("llama-3.1-70b", "H100 SXM5", 8192))


def _accumulation_405b():
    dp = 16384 // (8 * 16)  # TP 8 x PP 16 (CP 1): the rest of the chips are data-parallel replicas
    return float(accumulation_steps(16777216 // 8192, 1, dp))


def _offload_hides_at():
    """The sequence length at which a Llama-3-8B layer's activations, copied over PCIe Gen5 one way (64 GB/s), take
    as long as the layer's forward at 795 TFLOP/s. Per token the copy is a constant c and the forward a + b s (the
    weights, then attention): two lengths give a and b, and c = a + b s gives s."""
    s1, s2 = 4096, 8192
    o1, o2 = (activation_offload("llama-3-8b", "H100 SXM5", 1, s, flops_per_s=795e12) for s in (s1, s2))
    b = (o2.forward_s / s2 - o1.forward_s / s1) / (s2 - s1)
    a = o1.forward_s / s1 - b * s1
    return float((o1.copy_s / s1 - a) / b)


def _checkpoint_loss_32k():
    """The share of a 32,768-GPU job's time that checkpoints cost at Young's best interval sqrt(2 C M): sqrt(2 C / M)
    (the writes' stalls C / tau plus half an interval lost per failure, tau / 2M), with writes that block for 20 s and
    Llama 3's failure rate per GPU (419 unexpected interruptions in 54 days on 16,384 GPUs; arXiv:2407.21783, Sec.
    3.3.4)."""
    mtbf_s = 54 * 24 * 3600 / 419 * 16384 / 32768
    return float((2 * 20 / mtbf_s) ** 0.5)


QUESTIONS = [
    Question("12.flops_per_token_qwen3", "FLOPs of training Qwen3-8B on one token of a 4,096-token sequence, "
             "causal attention (the course's count: 6 x the multiplying weights, plus attention).", _flops_qwen3,
             unit="FLOP", hints=("6 per weight that multiplies (the LM head is one; the embedding lookup is not), "
                                 "plus attention's share",
                                 "rl.training.matmul_params gives the weights; attention adds 12 L H d T per token, "
                                 "half of it with a causal mask")),
    Question("12.attention_share_32k", "Predict first: will attention's share of Llama-3.1-70B's training FLOPs "
             "per token at 32,768 positions (causal) be above or below Llama-3-8B's at the same length? Write the "
             "guess down, then compute the 70B's share. Answer as a fraction.", _attention_share_32k, unit="",
             hints=("per layer and token attention grows with h T (H d = h), the weights with h^2: the share goes "
                    "roughly as T / h, so a model twice as wide has less of it at the same T",
                    "6 L H d T (causal) over 6 N + 6 L H d T, with N the multiplying weights")),
    Question("12.model_states_70b", "Bytes of Llama-3.1-70B's model states (weights, gradients, optimizer) for "
             "AdamW as Megatron-LM runs bf16 (gradients accumulated in fp32), nothing sharded.", _model_states_70b,
             unit="B", hints=("every parameter of the checkpoint, times bytes per parameter",
                              "2 (bf16 weights) + 4 (fp32 gradients) + 4 + 4 + 4 (fp32 master, momentum, variance)")),
    Question("12.smallest_zero_stage", "Design: Llama-3-8B, AdamW in mixed precision with the gradients accumulated "
             "in fp32 (Megatron-LM's recipe), micro-batch 1 of 4,096 tokens (FlashAttention, no recomputation) on "
             "8 x H100 SXM5 in data parallel. The lowest ZeRO stage whose peak memory (what the allocator reports, "
             "plus the CUDA context and NCCL's buffers) fits the driver's 81,559 MiB: '0', '1', '2', '3' or "
             "'none'?", _smallest_zero_stage, kind="choice", choices=("0", "1", "2", "3", "none"),
             hints=("the activations do not shrink with ZeRO; the model states do, stage by stage, and the fp32 "
                    "gradients stay whole until a stage shards them",
                    "rl.training.train_step('llama-3-8b', hw, n_chips=8, seq_len=4096, global_batch=8, "
                    "zero_stage=s).fits for s = 0, 1, 2, 3; its memory.peak_terms say why"),
             why={"0": "unsharded, the model states alone are 145 GB (18 bytes per parameter).",
                  "1": "ZeRO-1 leaves the fp32 gradients whole: 2 + 4 + 12 / 8 = 7.5 bytes per parameter, 60 GB, "
                       "and with the activations, the loss and fragmentation the peak is 92 GB.",
                  "3": "a lower stage already fits: sharding the gradients too is enough."}),
    Question("12.hfu_over_mfu_full", "GPT-3 175B at 2,048 tokens with full recomputation: HFU / MFU (hardware FLOPs "
             "over model FLOPs per token).", _hfu_over_mfu_full, unit="",
             hints=("full recomputation runs the forward twice",
                    "(6N + 12 L h s + 2 N_layers + 4 L h s) / (6N + 12 L h s): a little under 4/3, because the LM "
                    "head is not recomputed")),
    Question("12.gpt3_activations_tp8", "Korthikanti et al.'s activations of one GPT-3 175B layer (s = 2048, "
             "micro-batch 1, 16-bit, dropout, no FlashAttention) under 8-way tensor parallelism WITHOUT sequence "
             "parallelism: bytes per chip.", _gpt3_activations_tp8, unit="B",
             hints=("without sequence parallelism the norms' inputs, block inputs and dropout masks stay whole",
                    "s b h (10 + 24 / t + 5 a s / (h t))")),
    Question("12.gpu_hours_7b", "Chip-hours to train Llama-2-7B on 2 trillion tokens of 4,096 on A100 80GB SXM4 at "
             "40 % MFU (causal count).", _gpu_hours_7b, unit="GPU-hours",
             hints=("tokens x FLOPs per token = the work; one chip does 0.4 x its dense bf16 peak per second",
                    "2e12 x rl.training.flops_per_token('llama-2-7b', 4096, causal=True) / (0.4 x 312e12) / 3600")),
    Question("12.peak_slip", "Find the mistake: a training script prints '324.5 TFLOP/s per GPU, MFU 104 %' for a "
             "run on H100 SXM5s, counting PaLM's 6N + 12 L H Q T FLOPs per token. What should it print as the "
             "run's MFU (PaLM)? Answer as a fraction.", _peak_slip, unit="",
             hints=("an MFU above 1 means the denominator is not this chip's peak: divide the TFLOP/s by the MFU to "
                    "see which peak the script used (PaLM's count itself is a published convention)",
                    "324.5 / 1.04 = 312 TFLOP/s, an A100's dense bf16 peak: divide the run's TFLOP/s by the H100 "
                    "SXM5's dense bf16 peak (hw.peak_flops('bf16')) instead")),
    Question("12.fp8_mixed_mfu", "Find the mistake: a log prints '800 TFLOP/s per GPU, MFU 81 %' for an FP8 run "
             "of Llama-3.1-70B (8,192-token sequences, causal model FLOPs) on H100 SXM5s. What is its MFU (causal) "
             "against the peak its formats allow (the layers' weight matmuls in FP8; attention and the LM head in "
             "bf16)? Answer as a fraction.", _fp8_mixed_mfu, unit="",
             hints=("divide the TFLOP/s by the MFU to see which peak the log used; for mixed formats neither the "
                    "bf16 nor the FP8 peak is right: weigh each peak by the FLOPs that run at it",
                    "the mixed peak is the causal FLOPs per token over (6 x the layers' weights / FP8 peak + the rest "
                    "/ bf16 peak); rl.training.mixed_peak_flops computes it")),
    Question("12.accumulation_405b", "Design: Llama 3 405B trained on 16,777,216 tokens per step in 8,192-token "
             "sequences on 16,384 H100s with TP 8 and PP 16 (no context parallelism). With micro-batches of one "
             "sequence, how many micro-batches does each data-parallel replica run per optimizer step?",
             _accumulation_405b, unit="micro-batches",
             hints=("global batch = micro-batch x accumulation x data-parallel replicas, all in sequences",
                    "the replicas are the chips over TP x PP; the global batch is the tokens per step over the "
                    "sequence length")),
    Question("12.offload_hides_at", "Predict, then check: section 7 showed that over PCIe Gen5 (64 GB/s one way) "
             "only 27 % of a Llama-3-8B layer's activations hide under its forward at 4,096 tokens (micro-batch 1, "
             "FlashAttention, matmuls at 795 TFLOP/s). At what sequence length does all of the copy just hide? "
             "Answer in tokens.", _offload_hides_at, unit="tokens",
             hints=("the bytes a layer keeps grow like s; its forward's FLOPs like s (the weights) plus s^2 "
                    "(attention)",
                    "per token: bytes from activation_bytes_per_layer(m, 1, s) / s; FLOPs 2 x the layer's weights + "
                    "2 H d s; solve FLOPs / 795e12 = bytes / 64e9 for s")),
    Question("12.checkpoint_loss_32k", "Predict, then check: a job on 32,768 H100s fails at Llama 3's rate per GPU "
             "(419 unexpected interruptions in 54 days on 16,384 GPUs), and its checkpoint writes block for 20 s. "
             "Checkpointing at Young's best interval, what share of its time do the writes and the lost work cost? "
             "Answer as a fraction.", _checkpoint_loss_32k, unit="",
             hints=("twice the GPUs at the same rate per GPU: half the mean time between failures M",
                    "at the best interval sqrt(2 C M) the share lost is sqrt(2 C / M), C and M in seconds")),
]
