"""Chapter 9: communication-bound. Model shapes come from data/models, never typed here."""

import math

from ..multichip.collectives import (
    allreduce_time_on,
    ring_allreduce_bytes,
    ring_allreduce_time,
    weight_gathered_crossover_tokens,
)
from ..multichip.parallel import ep_decode_step, pp_decode_step, replica_decode_step, tp_decode_step, tp_max_batch
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .core import Question


def _allreduce_bytes():
    return ring_allreduce_bytes(64e6, 8)


def _nvlink_time():
    return ring_allreduce_time(64e6, 8, get_accelerator("H100").interconnect_bandwidth_per_direction)


def _crossover_13b():
    m = get_model("llama-2-13b")
    groups = m.param_groups()
    return weight_gathered_crossover_tokens((groups["attention"] + groups["dense_mlp"]) / m.num_layers,
                                            m.hidden_size)


def _decode_bound_pcie():
    return tp_decode_step("llama-2-70b", "H100 PCIe", 64, 4096, 8, "8 x PCIe Gen5 GPUs, two sockets").bound


def _pipeline_idle_share(n_stages=8, microbatches=3):
    # a decode server keeps its microbatches in flight: each round has max(n, m) stage-slots, n - m idle
    e = pp_decode_step("llama-2-70b", "H100 SXM", 6 * microbatches, 4096, n_stages, microbatches=microbatches)
    return float(e.t_idle / e.overlapped)


def _ep_bytes():
    return float(ep_decode_step("mixtral-8x7b", "H100 SXM", 64, 4096, 8, "nvlink").comm_bytes)


def _decode_allreduce_pcie():
    """One all-reduce of one token's Llama-2-70B activations (bf16) over 8 H100s' PCIe, NCCL's model."""
    return float(allreduce_time_on(get_accelerator("H100 SXM"), "pcie", 2 * get_model("llama-2-70b").hidden_size, 8))


def _fewest_chips_8k():
    """The fewest A100 80GB (2, 4 or 8) holding 100 sequences of 8,192 positions of Llama-3.1-70B in vLLM's 0.9
    (Llama-2-70B was trained to 4,096 positions; Llama-3.1-70B has its KV cache per position and 2 % more weights)."""
    return next((str(n) for n in (2, 4, 8)
                 if tp_max_batch("llama-3.1-70b", "A100 80GB SXM4", 2**13, n, usable_fraction=0.9) >= 100),
                "more than 8")


def _allreduce_slip():
    """The colleague's 2 x 64 MB / 900 GB/s: which of its two numbers is off (message factor, link direction)."""
    hw = get_accelerator("H100")
    right = ring_allreduce_time(64e6, 8, hw.interconnect_bandwidth_per_direction)
    factor_right = math.isclose(2 * 64e6 / hw.interconnect_bandwidth, right)
    bandwidth_only = math.isclose(2 * 64e6 / hw.interconnect_bandwidth_per_direction, right)
    message_only = math.isclose(ring_allreduce_bytes(64e6, 8) / hw.interconnect_bandwidth, right)
    return "nothing" if factor_right else ("both" if not (bandwidth_only or message_only) else "one")


def _replicas_or_tp():
    tp = tp_decode_step("llama-2-7b", "H100 SXM", 64, 4096, 8, "nvlink")
    rep = replica_decode_step("llama-2-7b", "H100 SXM", 64, 4096, 8)
    return "replicas" if rep.exposed < tp.exposed else "tensor"


QUESTIONS = [
    Question("09.allreduce_bytes", "Bytes each of 8 chips sends in a ring all-reduce of a 64 MB message.",
             _allreduce_bytes, unit="B",
             hints=("a ring all-reduce is a reduce-scatter then an all-gather: what share does a chip send in each?",
                    "2 (N - 1) / N of the message, with N = 8; rl.comms.ring_allreduce_bytes(64e6, 8) checks it")),
    Question("09.nvlink_allreduce_time", "Time of that all-reduce over H100 SXM NVLink, bandwidth term only.",
             _nvlink_time, unit="s",
             hints=("NVLink's 900 GB/s adds both directions: a ring sends one way",
                    "the bytes each chip sends / (900e9 / 2) byte/s, i.e. over "
                    "h100.interconnect_bandwidth_per_direction")),
    Question("09.crossover_tokens_13b", "Tokens per step above which gathering Llama-2-13B's weights moves fewer "
             "bytes than moving activations (per layer).", _crossover_13b, unit="tokens",
             hints=("count one layer's weight-matrix parameters (no GQA); then weights' bytes against activations' "
                    "bytes per token",
                    "T* = P_layer / (4 x hidden), P_layer = 4 h^2 + 3 h x intermediate_size of "
                    "rl.get_model('llama-2-13b')")),
    Question("09.decode_bound_pcie", "Llama-2-70B bf16 decode on 8 x H100 PCIe in a two-socket PCIe box (the "
             "topology '8 x PCIe Gen5 GPUs, two sockets': 22.2 GB/s of bus bandwidth, shared), batch 64, context "
             "4096 (KV cache included): which term is largest, 'compute', 'memory' or 'communication'?",
             _decode_bound_pcie, kind="choice", choices=("compute", "memory", "communication"),
             hints=("compare the step's terms: its FLOPs at the peak, each chip's bytes at HBM speed, the all-reduces "
                    "on the shared bus",
                    "160 all-reduces of 64 tokens' activations (1 MiB each) at NCCL's best protocol on a shared "
                    "22.2 GB/s, against 1/8 of the weights and KV cache at 2 TB/s")),
    Question("09.pipeline_idle_share", "Predict: a decode server runs Llama-2-70B on 8 pipeline stages (8 x H100 SXM) "
             "and keeps 3 microbatches of 6 sequences in flight, step after step. What share of each chip's time "
             "is idle?", _pipeline_idle_share, rtol=0.01, unit="",
             hints=("a microbatch's next token needs all 8 stages; while it goes round, how many stages have work?",
                    "a round is max(8, 3) stage-slots and a chip works in 3 of them: idle (8 - 3) / 8")),
    Question("09.ep_alltoall_bytes", "Mixtral-8x7B decode, batch 64 (8 sequences per chip), experts spread over "
             "8 x H100, uniform routing: 1/8 of the routed copies stay on their own chip. Bytes each chip sends per "
             "step in the all-to-alls (bf16 activations).", _ep_bytes, unit="B",
             hints=("2 all-to-alls per MoE layer; each token's hidden vector goes to 2 experts, and 7/8 of those "
                    "copies leave the chip",
                    "8 tokens x 2 experts x 7/8 x hidden x 2 bytes x 2 all-to-alls x num_layers; "
                    "rl.parallel.ep_decode_step(...).comm_bytes checks it")),
    Question("09.replicas_or_tp", "Llama-2-7B, batch 64, context 4096 on 8 x H100 SXM (NVLink): is a decode step "
             "faster as 8 'replicas' (8 sequences each) or 'tensor' parallel over 8 (communication not hidden)?",
             _replicas_or_tp, kind="choice", choices=("replicas", "tensor"),
             hints=("decide from the bytes each chip reads: its weights and its sequences' KV caches, in each layout",
                    "compare .exposed of rl.parallel.replica_decode_step and tp_decode_step('llama-2-7b', 'H100 SXM', "
                    "64, 4096, 8)")),
    Question("09.predict_allreduce_pcie", "Predict, then check: one all-reduce of one token's Llama-2-70B activations "
             "(8,192 bf16 values) on 8 x H100 SXM over PCIe, NCCL's latency model included. Within 5 % counts.",
             _decode_allreduce_pcie, rtol=0.05, unit="s",
             hints=("16 kB is a small message: count NCCL's fixed latencies first, then the ring's bandwidth term",
                    "NCCL's ring with its LL protocol: 6.6 us + 2(N - 1) steps x 1.0 us over PCIe, plus "
                    "2(N - 1)/N x 16 kB at LL's half of NCCL's 0.75 share of 64 GB/s per direction")),
    Question("09.design_chips_8k", "Design: the fewest A100 80GB SXM4 in tensor parallel ('2', '4', '8' or 'more than "
             "8') that hold 100 sequences of 8,192 positions of Llama-3.1-70B (bf16) inside vLLM's 0.9 share.",
             _fewest_chips_8k, kind="choice", choices=("2", "4", "8", "more than 8"),
             hints=("each chip holds 1/N of the weights and 1/N of every sequence's KV cache, in 0.9 of its memory",
                    "rl.parallel.tp_max_batch('llama-3.1-70b', 'A100 80GB SXM4', 2**13, n, "
                    "usable_fraction=0.9) >= 100, n = 2, 4, 8"),
             why={"2": "each chip holds 70.6 GB of weights in its 77.3 GB share: 6.7 GB left, room for 5 sequences "
                            "of 8,192 positions (1.3 GB each per chip).",
                       "4": "4 chips hold about 125 sequences of 4,096 positions (Llama-2-70B's 127 in the table "
                            "above, a little less for Llama-3.1-70B's larger vocabulary), but a sequence of "
                            "8,192 needs twice the KV cache: 62 fit.",
                       "more than 8": "on 8 chips each holds 17.6 GB of weights in its 77.3 GB share and 0.34 GB of "
                                      "each sequence's KV cache: count again."}),
    Question("09.explain_efficiency", "Explain: Llama-2-7B decode at batch 1 on A100s over NVLink keeps 0.88 of each "
             "chip's worth on 2 chips but 0.49 on 8. The main reason: 'latency' (every all-reduce pays a fixed "
             "latency that does not shrink with N), 'bandwidth' (the all-reduced bytes grow with N), 'kv cache' (each "
             "chip reads the whole KV cache) or 'compute'?", lambda: "latency", kind="choice",
             choices=("latency", "bandwidth", "kv cache", "compute"),
             hints=("how many bytes does one token's all-reduce move, and how long do they take at NVLink speed?",
                    "step ~ T_mem / N + 2 x layers x (latency + bytes / bandwidth): which term does not shrink as N "
                    "grows?"),
             why={"bandwidth": "one token's activations are 8 kB: 2(N - 1)/N of it takes nanoseconds; and the "
                                    "factor grows only from 1 to 1.75.",
                       "kv cache": "the KV cache is split by KV head: each chip reads 1/N of it.",
                       "compute": "batch-1 decode does 2 FLOPs per weight: compute is a few percent of the step."}),
    Question("09.mistake_allreduce_time", "Find the mistake: 'the 64 MB all-reduce on 8 x H100 takes 2 x 64 MB / "
             "900 GB/s = 142 us.' Is 'one' of its two numbers wrong (the factor 2, the 900 GB/s), are 'both' wrong, "
             "or 'nothing'?", _allreduce_slip, kind="choice", choices=("one", "both", "nothing"),
             hints=("check the two numbers separately: the share of the message a chip sends, and the bandwidth used",
                    "a ring sends 2(N - 1)/N of the message per chip over interconnect_bandwidth_per_direction: "
                    "compare with 2 and 900 GB/s"),
             why={"one": "check both: a ring sends 2(N - 1)/N = 1.75 of the message per chip, not 2, and it sends "
                              "one way on each link: 450 GB/s, not the 900 that adds both directions.",
                       "nothing": "the time is 1.75 x 64 MB / 450 GB/s = 249 us, not 142 us."}),
]


__all__ = ["QUESTIONS"]
