"""Chapter 12: one training step. Model shapes come from data/models, chip figures from data/accelerators."""

from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from ..training import activation_bytes_per_layer, flops_per_token, matmul_params, memory, time_to_train
from .core import Question


def _flops_qwen3():
    return float(flops_per_token("qwen3-8b", 4096, causal=True))


def _attention_share_32k():
    m, s = get_model("llama-3.1-70b"), 32768
    return float(1 - 6 * sum(matmul_params(m)) / flops_per_token(m, s, causal=True))


def _model_states_70b():
    return float(memory("llama-3.1-70b", 1, 8192, optimizer="adamw_fp32_grads").model_states)


def _smallest_zero_stage():
    """The lowest ZeRO stage at which Llama-3-8B (AdamW, bf16) fits 8 x H100 SXM5, micro-batch 1 of 4,096."""
    hw = get_accelerator("H100 SXM5")
    for stage in (0, 1, 2, 3):
        if memory("llama-3-8b", 1, 4096, zero_stage=stage, dp=8).total <= hw.mem_capacity:
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
    # nanoGPT's estimate_mfu divides by 312e12, the A100's bf16 peak, whatever the chip: on an H100 a run at
    # 325 TFLOP/s of model FLOPs reads 104 %. The FLOPs per token (6N + 12 L H Q T) are a published convention.
    return "the peak"


QUESTIONS = [
    Question("12.flops_per_token_qwen3", "FLOPs of training Qwen3-8B on one token of a 4,096-token sequence, "
             "causal attention (the course's count: 6 x the multiplying weights, plus attention).", _flops_qwen3,
             unit="FLOP", hints=("6 per weight that multiplies (the LM head is one; the embedding lookup is not), "
                                 "plus attention's share",
                                 "rl.training.matmul_params gives the weights; attention adds 12 L H d T per token, "
                                 "half of it with a causal mask")),
    Question("12.attention_share_32k", "Predict: what share of Llama-3.1-70B's training FLOPs per token is "
             "attention at 32,768 positions (causal)? Answer as a fraction.", _attention_share_32k, unit="",
             hints=("attention grows with the sequence, the weights' 6N does not",
                    "6 L H d T (causal) over 6 N + 6 L H d T, with N the multiplying weights")),
    Question("12.model_states_70b", "Bytes of Llama-3.1-70B's model states (weights, gradients, optimizer) for "
             "AdamW as Megatron-LM runs bf16 (gradients accumulated in fp32), nothing sharded.", _model_states_70b,
             unit="B", hints=("every parameter of the checkpoint, times bytes per parameter",
                              "2 (bf16 weights) + 4 (fp32 gradients) + 4 + 4 + 4 (fp32 master, momentum, variance)")),
    Question("12.smallest_zero_stage", "Design: Llama-3-8B, AdamW in mixed precision, micro-batch 1 of 4,096 "
             "tokens (FlashAttention, no recomputation) on 8 x H100 SXM5 in data parallel. The lowest ZeRO stage that "
             "fits the driver's 81,559 MiB: '0', '1', '2', '3' or 'none'?", _smallest_zero_stage, kind="choice",
             choices=("0", "1", "2", "3", "none"),
             hints=("the activations do not shrink with ZeRO; the model states do, stage by stage",
                    "rl.training.memory(..., zero_stage=s, dp=8).total against hw.mem_capacity, s = 0, 1, 2, 3"),
             why={"0": "unsharded, the model states alone are 128 GB.",
                  "2": "a lower stage already fits: sharding the 12 bytes of optimizer states is enough.",
                  "3": "a lower stage already fits: sharding the 12 bytes of optimizer states is enough."}),
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
    Question("12.peak_slip", "Find the mistake: a training script prints 'MFU 104 %' on an H100 SXM5. It counts "
             "6N + 12 L H Q T FLOPs per token and divides by 312 TFLOP/s. Which is wrong: 'the peak', 'the FLOPs per "
             "token' or 'nothing'?", _peak_slip, kind="choice", choices=("the peak", "the FLOPs per token", "nothing"),
             hints=("MFU above 1 means the denominator is not this chip's",
                    "312 TFLOP/s is an A100's dense bf16 peak; an H100 SXM5's is 989.4"),
             why={"the FLOPs per token": "6N + 12 L H Q T is PaLM's published count (it counts attention full, so "
                                         "it is a little high for a causal model, but not three times).",
                  "nothing": "an MFU above 1 is impossible: the run cannot beat the chip's peak."}),
    Question("12.explain_h100_mfu", "Explain: the same 7B training step reaches a lower MFU bound on an H100 SXM5 "
             "than on an A100 80GB. The main reason: 'ridge' (the memory-bound kernels weigh more where the ridge "
             "point is higher), 'capacity' (less memory per FLOP), 'communication' or 'clock'?",
             lambda: "ridge", kind="choice", choices=("ridge", "capacity", "communication", "clock"),
             hints=("the matmuls speed up 3.2x from A100 to H100; what speeds up only 1.6x?",
                    "norms, activations and the optimizer run at the memory roof: 2.04 -> 3.35 TB/s"),
             why={"capacity": "both chips hold 80 GB; memory capacity sets what fits, not the time of a step.",
                  "communication": "the question is one chip's step: no link in it.",
                  "clock": "the bound divides by the datasheet peaks, clocks included: what moves it is the ratio "
                           "of peak to bandwidth."}),
]
