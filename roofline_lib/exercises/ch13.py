"""Chapter 13: training on many chips. Model shapes come from data/models, chip figures from data/accelerators."""

from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from ..specs.topologies import get_topology
from ..training import critical_tokens_per_chip, flops_per_token, memory, pipeline_bubble, train_step
from ..training.links import collective_latency
from .core import Question


def _zero3_bytes_70b():
    return float(train_step("llama-3.1-70b", "H100 SXM5", n_chips=64, seq_len=8192, global_batch=64,
                            zero_stage=3, recompute="full", grad_reduce="bf16").bytes_sent["data parallel"])


def _zero2_states_70b():
    return float(memory("llama-3.1-70b", 1, 8192, zero_stage=2, dp=64).model_states)


def _dp_binding_8b():
    return str(train_step("llama-3-8b", "H100 SXM5", n_chips=1024, seq_len=512, global_batch=1024,
                          zero_stage=1).binding)


def _fewest_stages():
    for p in (1, 2, 4, 8, 16):
        if train_step("llama-3.1-405b", "H100 SXM5", n_chips=16384, seq_len=8192, global_batch=2048, tp=8, pp=p,
                      zero_stage=1, recompute="full").fits:
            return str(p)
    return "none"


def _dp_bytes_8b():
    return float(train_step("llama-3.1-8b", "H100 SXM5", n_chips=64, seq_len=4096, global_batch=64,
                            zero_stage=0).bytes_sent["data parallel"])


def _sends_interleaved_70b():
    return float(train_step("llama-3.1-70b", "H100 SXM5", n_chips=1024, seq_len=8192, global_batch=1024, tp=8,
                            pp=8, virtual_stages=4, recompute="full").bytes_sent["pipeline sends"])


def _tp_latency_8b():
    # per micro-batch, without sequence parallelism: 32 layers x 4 all-reduces over 8 GPUs
    return float(32 * 4 * collective_latency(get_topology("DGX H100"), 1, 8, 2))


def _zero3_step_at_nic():
    # Table 2's reading at 1,536 GPUs: the longer of one recomputed sequence at 46 % of the A100's peak and the
    # fp16 gathers and reduce-scatter (3 x 2 bytes per parameter, (n - 1)/n of them) at a 200 Gb/s NIC's 25 GB/s
    n = 1536
    compute = 2048 * flops_per_token("gpt-3-175b", 2048, convention="megatron2021") / (
        0.46 * get_accelerator("A100 80GB SXM4").peak_flops("fp16"))
    gathers = 3 * (n - 1) / n * 2 * get_model("gpt-3-175b").n_params / 25e9
    return float(max(compute, gathers))


def _tp16_at_nic():
    # one TP collective moves a layer's activations, s b h 2 bytes; a ring of 16 sends 15/16 of them per GPU,
    # here through one 50 GB/s NIC per GPU (the NICs shared with data- and pipeline-parallel traffic)
    return float(15 / 16 * 8192 * get_model("llama-3.1-8b").hidden_size * 2 / 50e9)


def _tokens_slip():
    # the colleague divides a step's tokens by the 32 data-parallel replicas: per GPU means all 256 chips
    right = 1_048_576 / 2.0 / 256
    return "nothing" if 1_048_576 / 2.0 / 32 == right else "the divisor"


QUESTIONS = [
    Question("13.critical_tokens_b200", "Critical tokens per chip of plain data parallelism (bf16 gradients), B200 "
             "behind one 400 Gb/s NIC.", lambda: float(critical_tokens_per_chip("B200", 50e9, grad_bytes=2)),
             unit="tokens",
             hints=("compute 6 N per token against 2 x 2 N bytes on the wire: N cancels",
                    "peak / bandwidth x 4 / 6, with the B200's dense bf16 peak")),
    Question("13.zero3_bytes_70b", "Bytes each of 64 chips sends per step under ZeRO-3 for Llama-3.1-70B, one "
             "micro-batch, gradients reduced in bf16.", _zero3_bytes_70b, unit="B",
             hints=("two all-gathers of the bf16 weights and one reduce-scatter of the bf16 gradients",
                    "3 x (n - 1)/n x 2 bytes x every parameter")),
    Question("13.zero2_states_70b", "Model states per chip of Llama-3.1-70B under ZeRO-2 over 64 chips.",
             _zero2_states_70b, unit="B",
             hints=("stage 2 shards the gradients and optimizer states, not the weights",
                    "(2 + (2 + 12) / 64) bytes x every parameter")),
    Question("13.bubble_interleaved", "Predict: the bubble share of 16 stages, 32 micro-batches, 4 chunks per GPU.",
             lambda: float(pipeline_bubble(16, 32, 4)), unit="",
             hints=("the bubble is (p - 1) micro-batch times of a chunk; interleaving makes a chunk 1/v as long",
                    "(p - 1) / (v m)")),
    Question("13.mistake_tokens_tp", "Find the mistake: 1,048,576 tokens per 2.0 s step over 256 GPUs (TP 8 x DP 32) "
             "said to be 16,384 tokens/s per GPU: 'the divisor', 'the tokens' or 'nothing'?", _tokens_slip,
             kind="choice", choices=("the divisor", "the tokens", "nothing"),
             hints=("how many chips share those tokens?",
                    "every one of the 256 chips works on the step: tensor parallelism splits each token's work"),
             why={"the tokens": "a step's tokens are the global batch, counted once: 1,048,576 is right.",
                  "nothing": "the 8 chips of a tensor-parallel group share one replica's tokens: dividing by the "
                             "32 replicas counts each token 8 times over."}),
    Question("13.dp_binding_8b", "Predict, then check: the largest term of Llama-3-8B's step in DP with ZeRO-1 "
             "(distributed optimizer) on 1,024 H100s, one 512-token sequence per chip: 'compute' or "
             "'data parallel'?", _dp_binding_8b,
             kind="choice", choices=("compute", "data parallel"),
             hints=("compare 512 tokens with the critical tokens per chip at the model's 370.8 GB/s (8 DP chips "
                    "per node: the smaller of 8 NICs and NVLink)",
                    "compute 6 N x 512 / peak against 2 x 4 N / 370.8 GB/s (fp32 gradients), less the backward it "
                    "hides behind"),
             why={"compute": "512 tokens per chip are far below the critical ~3,600 at 370.8 GB/s (a DGX H100's "
                             "8 NICs, fp32 gradients): the gradients' all-reduce outlasts the backward."}),
    Question("13.design_fewest_stages", "Design: Llama-3.1-405B on 16,384 H100 SXM5, 2,048 sequences of 8,192, TP 8, "
             "ZeRO-1, full recomputation, micro-batch 1, 1F1B: the fewest pipeline stages that fit.", _fewest_stages,
             kind="choice", choices=("1", "2", "4", "8", "16", "none"),
             hints=("with full recomputation the activations are small: the model states decide, as Megatron-LM "
                    "keeps them (bf16 weights, an fp32 gradient buffer)",
                    "weights and gradients 2 + 4 bytes per parameter of the first stage (ceil(126 / p) layers and "
                    "the embedding) over tp chips, the optimizer 12 / dp, then what the allocator adds: "
                    "rl.training.train_step(..., pp=p, recompute='full').fits"),
             why={"2": "at 2 stages the weights and gradients alone are 6 bytes x 405.9e9 / 16 = 152 GB.",
                  "1": "at 1 stage the weights and gradients alone are 6 bytes x 405.9e9 / 8 = 304 GB.",
                  "4": "at 4 stages the first stage's weights and fp32 gradients alone (32 layers and the "
                       "embedding, 104.1e9 parameters) are 6 x 104.1e9 / 8 = 78 GB; the activations, the "
                       "allocator's 10 % and the CUDA context pass 80 GB.",
                  "16": "fewer stages already fit: at 8, the peak is about 50 GB per chip."}),
    Question("13.mistake_dp_bytes_8b", "Find the mistake: a colleague prices Llama-3.1-8B's gradient all-reduce "
             "on 64 H100s (plain DP, Megatron-LM's defaults) at 2 x 63/64 x 2 bytes x N per chip per step. What "
             "does each chip send?", _dp_bytes_8b, unit="B",
             hints=("in which format do Megatron-LM, NeMo and torchtitan put the gradients on the wire in bf16 "
                    "training?",
                    "an all-reduce sends 2 (n - 1)/n of its message; the message is N gradients of 4 bytes")),
    Question("13.predict_sends_interleaved", "Predict: the bytes one chip sends per step to its pipeline "
             "neighbours for Llama-3.1-70B on 1,024 H100s, TP 8, PP 8 with 4 chunks per GPU (interleaved), 1,024 "
             "sequences of 8,192 tokens, micro-batch 1.", _sends_interleaved_70b, unit="B",
             hints=("every micro-batch crosses each of a chip's v chunk boundaries, forward and back; sequence "
                    "parallelism splits each activation over the TP group",
                    "micro-batches per step x 2 x v x s h 2 bytes / tp, with dp = 1,024 / (8 x 8)")),
    Question("13.predict_tp_latency_8b", "Compute: the seconds of NCCL latency alone (no bytes) that TP 8's "
             "collectives pay in one micro-batch of Llama-3.1-8B (32 layers, no sequence parallelism, no "
             "recomputation) on a DGX H100, in NCCL's Simple protocol, whose tuner prices a ring collective over "
             "NVLink at a base 8.4 us plus 3.4 us per step.", _tp_latency_8b, unit="s",
             hints=("count the collectives: four all-reduces per layer (two in the forward, two in the backward), "
                    "over 32 layers",
                    "a ring all-reduce over 8 GPUs takes 2 x 7 = 14 steps: 8.4 + 14 x 3.4 us each, x 4 x 32")),
    Question("13.predict_zero3_nic", "Predict, by the chapter's reading of Table 2 (each ZeRO-3 step the longer "
             "of its compute and its gathers and reduce-scatter, 3 x 2 bytes per parameter per GPU in fp16; the "
             "compute at 46 % of the A100's peak): GPT-3 175B's step time at 1,536 GPUs, one recomputed sequence "
             "per GPU, had each GPU's traffic run at a full 200 Gb/s NIC (25 GB/s) instead of the 16 GB/s "
             "implied.", _zero3_step_at_nic, unit="s",
             hints=("which is longer at 1,536 GPUs: one recomputed sequence at 46 % of peak (a quarter of the 4 "
                    "sequences' 37.6 s at peak, over 0.46), or the traffic at 25 GB/s?",
                    "the traffic: 3 x (1,535 / 1,536) x 2 bytes x 174.6e9 parameters / 25e9 B/s; it is longer, "
                    "so it is the step")),
    Question("13.predict_tp16_nic", "Predict: the transfer time (no latency) of one TP 16 collective of "
             "Llama-3.1-8B, one sequence of 8,192 tokens, when the group spans two nodes and each GPU's share "
             "crosses through one 50 GB/s NIC (the NICs shared with data- and pipeline-parallel traffic).",
             _tp16_at_nic, unit="s",
             hints=("one TP collective moves a layer's activations, s b h 2 bytes; in a ring of 16 each GPU sends "
                    "15/16 of them; the 8B's h is half the 70B's",
                    "15/16 x 8,192 x 4,096 x 2 bytes / 50e9 B/s")),
]
