"""Chapters 7-9 exercises: expected values against hand computations on a made-up machine and datasheets."""

import pytest

import roofline_lib as rl
from roofline_lib.exercises import check

# a made-up measured machine: 100 GFLOP/s fp64, 200 fp32, 20 GB/s
MEASURED = {"peak_fp64": 100e9, "bandwidth": 20e9}


def test_ch07_on_a_made_up_machine():
    assert check("07.vector_add_time", 24e7 / 20e9, **MEASURED)
    assert check("07.smallest_compute_bound_matmul", 60, **MEASURED)  # n / 12 = 5
    assert check("07.diagnosis", "compute", t_base=1.0, t_more_flops=4.0, t_more_bytes=1.0, flop_factor=4,
                 byte_factor=4)
    assert not check("07.diagnosis", "memory", t_base=1.0, t_more_flops=4.0, t_more_bytes=1.0, flop_factor=4,
                     byte_factor=4)
    # H200 SXM datasheet: fp64 (tensor) 67 TFLOP/s, 4.8 TB/s
    assert check("07.h200_ridge_ratio", 67e12 / 4.8e12 / 5.0, **MEASURED)


def test_ch08_by_hand():
    assert check("08.calls_per_second", 2e6, overhead=0.5e-6)
    assert check("08.h100_flat_region", 5e-6 * 3.35e12 / 6)
    # 100 kernels of 3 us at 5 us per launch: first starts at 5 us, then one every 5 us, last ends 3 us later
    assert check("08.async_total", 5e-6 + 99 * 5e-6 + 3e-6)
    # H200 SXM: 4.8 TB/s. Llama-3-8B: 8.03e9 params, of which the 128256 x 4096 embedding table (0.525e9)
    # is only looked up, not read whole: 7.50e9 x 2 B = 15.01 GB of weights; KV cache at 4096:
    # 32 layers x 2 x 8 kv heads x 128 x 4096 x 2 B = 0.537 GB -> 15.55 GB / 4.8e12 = 3.24 ms over
    # 12 x 32 + 3 = 387 kernels: ~8.4 us (activations are a rounding error; 3% tolerance)
    assert check("08.decode_launch_bound", (8.03e9 - 128256 * 4096) * 2 / 4.8e12 / 387 + 0.537e9 / 4.8e12 / 387)
    # fused: 5 kernels per layer (QKV, attention, output, gate+up, down) x 32 + embedding + LM head = 162
    assert check("08.fused_graph_launch_time", 162 * 70e-6 / 80)
    assert check("08.fewer_kernels", "fusion") and not check("08.fewer_kernels", "graphs")


def test_ch09_by_hand():
    assert check("09.allreduce_bytes", 112e6)
    assert check("09.nvlink_allreduce_time", 112e6 / 450e9)
    assert not check("09.nvlink_allreduce_time", 112e6 / 900e9)  # both directions: the classic slip
    # Llama-2-13B (no GQA): 4 h^2 (q, k, v, o) + 3 h x 13,824 (gate, up, down) per layer, over 4 h
    assert rl.exercises.get_question("09.crossover_tokens_13b").expected() == \
        (4 * 5120**2 + 3 * 5120 * 13_824) / (4 * 5120) == 15_488
    # with the KV cache of 64 x 4096 positions: (137.95 GB + 85.9 GB) / 8 / 3.35 TB/s = 8.35 ms of memory
    # against 160 x (6.6 + 14 x 1.0 us + 1.75 x 1 MiB / 64 GB/s) = 7.88 ms of PCIe all-reduces
    assert check("09.decode_bound_pcie", "memory")
    assert not check("09.decode_bound_pcie", "communication")
    assert check("09.bubble_microbatches", 63)
    assert check("09.ep_alltoall_bytes", 2 * 32 * 8 * 2 * 4096 * 2 * 7 / 8)
    # tensor parallel reads 1/8 of Llama-2-7B's 13.5 GB per chip; a replica reads all of it for its 8 sequences
    # (the same KV bytes per chip either way), and the all-reduces cost less than the 11.8 GB difference
    assert check("09.replicas_or_tp", "tensor")


def test_ch09_thinking_questions_by_hand():
    # NCCL's ring model (NVIDIA/nccl src/graph/tuning.cc): 6.6 us + 14 steps x 1.0 us over PCIe, plus
    # 1.75 x 16,384 bytes at 64 GB/s per direction (PCIe Gen5 x16's 128 GB/s counts both)
    hand = 6.6e-6 + 14 * 1.0e-6 + 1.75 * 16_384 / 64e9
    assert rl.exercises.get_question("09.predict_allreduce_pcie").expected() == pytest.approx(hand, rel=1e-9)
    assert check("09.predict_allreduce_pcie", 21e-6) and not check("09.predict_allreduce_pcie", 1.75 * 16_384 / 64e9)
    # 09.design_chips_8k: per chip, 0.9 x 81,920 MiB less 1/n of Llama-2-70B's 68,976,648,192 x 2 bytes, over 1/n of a
    # sequence's KV cache (2 x 80 layers x 8 KV heads x 128 x 8,192 positions x 2 bytes)
    share, weights, kv = 0.9 * 81_920 * 2**20, 68_976_648_192 * 2, 2 * 80 * 8 * 128 * 8_192 * 2
    held = {n: int((share - weights / n) // (kv / n)) for n in (2, 4, 8)}
    assert held == {2: 6, 4: 63, 8: 179}
    assert check("09.design_chips_8k", "8") and "63 fit" in check("09.design_chips_8k", "4").message
    # 09.mistake_allreduce_time: 2 x 64 MB / 900 GB/s = 142 us against 1.75 x 64 MB / 450 GB/s = 249 us; fixing
    # either number alone gives 284 us or 124 us
    assert 2 * 64e6 / 900e9 == pytest.approx(142.2e-6, rel=1e-3)
    assert 1.75 * 64e6 / 450e9 == pytest.approx(248.9e-6, rel=1e-3)
    assert check("09.mistake_allreduce_time", "both") and not check("09.mistake_allreduce_time", "one")
    assert check("09.explain_efficiency", "latency")
    for wrong in ("bandwidth", "kv cache", "compute"):
        assert "Hint" not in check("09.explain_efficiency", wrong).message


def test_every_new_question_has_a_prompt():
    for prefix in ("07.", "08.", "09."):
        qs = rl.exercises.questions(prefix)
        assert len(qs) >= 4
        assert all(q.prompt for q in qs)


def test_ch07_thinking_questions_by_hand():
    # 07.predict_knee_bytes: at 3 x the ridge T_math = 3 T_mem; no overlap: (3 + 2) / (3 + 1)
    assert rl.exercises.get_question("07.predict_knee_bytes").expected() == pytest.approx(5 / 4, rel=1e-9)
    assert not check("07.predict_knee_bytes", 2.0)  # as if bytes-bound
    assert not check("07.predict_knee_bytes", 1.0)  # as if overlapped
    # 07.design_stream_elements: a 480 MiB cache needs 3 x 8 x n >= 4 x 480 x 2^20 bytes: n = 83,886,080
    assert check("07.design_stream_elements", 83_886_080, llc_bytes=480 * 2**20)
    assert not check("07.design_stream_elements", 83_886_080 / 3, llc_bytes=480 * 2**20)  # one array, not three
    # 07.mistake_vector_add: 1 FLOP over 3 x 8 bytes
    assert (rl.vector_add(1, "fp64").flops, rl.vector_add(1, "fp64").bytes) == (1, 24)
    assert check("07.mistake_vector_add", "bytes") and "multiply-add" in check("07.mistake_vector_add", "flops").message
    # 07.explain_small_matmul: three 8 x 8 fp64 matrices are 1,536 bytes
    assert check("07.explain_small_matmul", "overhead")
    assert "1,536 bytes" in check("07.explain_small_matmul", "cache").message


def test_ch08_thinking_questions_by_hand():
    # 08.predict_async_idle: the launches set the pace, 1000 x 5 us, plus the last kernel's 1.5 us; the GPU works
    # 1000 x 1.5 us of it
    total = 1000 * 5e-6 + 1.5e-6
    assert rl.exercises.get_question("08.predict_async_idle").expected() == pytest.approx(
        (total - 1000 * 1.5e-6) / total, rel=1e-9)
    assert not check("08.predict_async_idle", 1 - 1.5 / 6.5)  # the synchronous idle share
    # 08.design_batch_hides_launches: Llama-3-8B's weights but the embedding, 2 x 7,504,924,672 bytes, plus 131,072
    # bytes of KV per position and sequence, at 4.8 TB/s against 387 x 10 us: 6 sequences 3.80 ms, 7 sequences 3.91 ms
    weights, kv = 2 * (8_030_261_248 - 128_256 * 4_096), 4_096 * 131_072
    step = {b: (weights + b * kv) / 4.8e12 for b in (6, 7)}
    assert step[6] < 387 * 10e-6 <= step[7]
    assert check("08.design_batch_hides_launches", 7) and not check("08.design_batch_hides_launches", 6)
    # 08.explain_more_overhead: int4 weights, 3.75 GB + 0.54 GB of KV at 4.8 TB/s = 0.89 ms under 3.87 ms of launches
    assert (weights / 4 + kv) / 4.8e12 < 0.25 * 387 * 10e-6
    assert check("08.explain_more_overhead", "int4 weights")
    assert "162 kernels" in check("08.explain_more_overhead", "fusion").message
    # 08.mistake_added_launches: asynchronously 1000 x 5 us + 2 us = 5.002 ms, not the synchronous 7 ms
    assert rl.launch.simulate_queue([2e-6] * 1000, 5e-6).total == pytest.approx(1000 * 5e-6 + 2e-6, rel=1e-9)
    assert check("08.mistake_added_launches", "overlap") and not check("08.mistake_added_launches", "nothing")
