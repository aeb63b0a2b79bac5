"""Chapter 09's questions (communication-bound) against hand computations: the ring all-reduce's 2 (N - 1) / N,
NCCL's latency model (NVIDIA/nccl src/graph/tuning.cc), shapes from the model cards, and link figures: H100 SXM5
NVLink 900 GB/s both directions (450 each way), PCIe Gen5 x16 128 GB/s both (64 each way)."""

import pytest
from exercise_hand import chapter_tests

import roofline_lib as rl
from roofline_lib.exercises import check

HAND = {
    "09.allreduce_bytes": 2 * (8 - 1) / 8 * 64e6,                     # 112 MB per chip
    "09.nvlink_allreduce_time": 2 * (8 - 1) / 8 * 64e6 / 450e9,       # one direction's bandwidth
    # Llama-2-13B (no GQA): 4 h^2 (q, k, v, o) + 3 h x 13,824 (gate, up, down) per layer, over 4 h
    "09.crossover_tokens_13b": (4 * 5120**2 + 3 * 5120 * 13_824) / (4 * 5120),
    # 8 x H100 PCIe, shared 22.2 GB/s: an all-reduce of 64 x 8192 x 2 B = 1 MiB is cheapest as NCCL's ring with
    # Simple (no LL128 over PCIe), 8.4 + 14 x 5.7 us + 1 MiB / (22.2 GB/s x 8/14) = 170.8 us; x 160 = 27.3 ms against
    # the memory term: (137.96e9 / 8 + 64 x 4096 x 327,680 B / 8) / 2.0 TB/s = 14.0 ms
    "09.decode_bound_pcie": "communication",
    "09.pipeline_idle_share": 5 / 8,            # steady state: a round of max(8, 3) slots, the chip works in 3
    # dispatch and combine, 32 layers, 64 / 8 = 8 tokens per chip, top-2 of h = 4,096 in bf16, 7 / 8 off the chip
    "09.ep_alltoall_bytes": 2 * 32 * 8 * 2 * 4096 * 2 * 7 / 8,
    "09.replicas_or_tp": "tensor",
    # one token's Llama-2-70B activations, 8,192 x 2 bytes, over PCIe: 6.6 us + 14 steps x 1.0 us + 1.75 x 16 kB
    # at 64 GB/s
    "09.predict_allreduce_pcie": 6.6e-6 + 14 * 1.0e-6 + 1.75 * 16_384 / (0.5 * 0.75 * 64e9),  # NCCL ring LL
    "09.design_chips_8k": "8",                  # test_thinking_questions_by_hand
    "09.explain_efficiency": "latency",
    "09.mistake_allreduce_time": "both",
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("09", HAND)


def test_collective_questions_by_hand():
    assert check("09.allreduce_bytes", 112e6)
    assert check("09.nvlink_allreduce_time", 112e6 / 450e9)
    assert not check("09.nvlink_allreduce_time", 112e6 / 900e9)  # both directions: the classic slip
    # Llama-2-13B (no GQA): 4 h^2 (q, k, v, o) + 3 h x 13,824 (gate, up, down) per layer, over 4 h
    assert rl.exercises.get_question("09.crossover_tokens_13b").expected() == \
        (4 * 5120**2 + 3 * 5120 * 13_824) / (4 * 5120) == 15_488
    # with the KV cache of 64 x 4096 positions: (137.95 GB + 85.9 GB) / 8 / 3.35 TB/s = 8.35 ms of memory
    # against 160 x (6.6 + 14 x 1.0 us + 1.75 x 1 MiB / 64 GB/s) = 7.88 ms of PCIe all-reduces
    memory = (2 * 68_976_648_192 + 64 * 4096 * 2 * 80 * 8 * 128 * 2) / 8 / 3.35e12
    allreduces = 160 * (6.6e-6 + 14 * 1.0e-6 + 1.75 * 2 * 8192 * 64 / 64e9)
    assert memory == pytest.approx(8.35e-3, abs=0.01e-3) and allreduces == pytest.approx(7.88e-3, abs=0.01e-3)
    assert check("09.decode_bound_pcie", "communication")
    assert not check("09.decode_bound_pcie", "memory")
    assert check("09.pipeline_idle_share", 0.625)
    assert not check("09.pipeline_idle_share", 7 / (3 + 7))  # the flushed (GPipe) bubble, not a server's
    assert check("09.ep_alltoall_bytes", 2 * 32 * 8 * 2 * 4096 * 2 * 7 / 8)
    # tensor parallel reads 1/8 of Llama-2-7B's 13.5 GB per chip; a replica reads all of it for its 8 sequences
    # (the same KV bytes per chip either way), and the all-reduces cost less than the 11.8 GB difference
    assert check("09.replicas_or_tp", "tensor")


def test_thinking_questions_by_hand():
    # NCCL's model (NVIDIA/nccl src/graph/tuning.cc): the cheapest option for 16 kB is the ring with LL, 6.6 us +
    # 14 steps x 1.0 us over PCIe, plus 1.75 x 16,384 bytes at LL's half of NCCL's 0.75 share of 64 GB/s per
    # direction (PCIe Gen5 x16's 128 GB/s counts both; topo.h PCI_BW 12 of a Gen3 link's 16)
    hand = 6.6e-6 + 14 * 1.0e-6 + 1.75 * 16_384 / (0.5 * 0.75 * 64e9)
    assert rl.exercises.get_question("09.predict_allreduce_pcie").expected() == pytest.approx(hand, rel=1e-9)
    assert check("09.predict_allreduce_pcie", 21e-6) and not check("09.predict_allreduce_pcie", 1.75 * 16_384 / 64e9)
    # 09.design_chips_8k: per chip, 0.9 x 81,920 MiB less 1/n of Llama-3.1-70B's 70,553,706,496 x 2 bytes, over 1/n of
    # a sequence's KV cache (2 x 80 layers x 8 KV heads x 128 x 8,192 positions x 2 bytes); 8,192 positions are
    # within its trained context (131,072), not Llama-2-70B's (4,096)
    share, weights, kv = 0.9 * 81_920 * 2**20, 70_553_706_496 * 2, 2 * 80 * 8 * 128 * 8_192 * 2
    held = {n: int((share - weights / n) // (kv / n)) for n in (2, 4, 8)}
    assert held == {2: 5, 4: 62, 8: 177}
    assert check("09.design_chips_8k", "8") and "62 fit" in check("09.design_chips_8k", "4").message
    # 09.mistake_allreduce_time: 2 x 64 MB / 900 GB/s = 142 us against 1.75 x 64 MB / 450 GB/s = 249 us; fixing
    # either number alone gives 284 us or 124 us
    h100 = rl.get_accelerator("H100 SXM")
    assert 2 * 64e6 / h100.interconnect_bandwidth == pytest.approx(142.2e-6, rel=1e-3)
    ring = rl.comms.ring_allreduce_bytes(64e6, 8)  # 2 (n - 1) / n = 1.75 x the message
    assert ring / h100.interconnect_bandwidth_per_direction == pytest.approx(248.9e-6, rel=1e-3)
    assert check("09.mistake_allreduce_time", "both") and not check("09.mistake_allreduce_time", "one")
    assert check("09.explain_efficiency", "latency")
    for wrong in ("bandwidth", "kv cache", "compute"):
        assert "Hint" not in check("09.explain_efficiency", wrong).message
