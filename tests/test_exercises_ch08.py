"""Chapter 08's questions (overhead-bound) against hand computations: launch queues worked out by hand, kernel
counts of a Llama-3-8B step (12 per layer x 32 + 3 eager, 5 x 32 + 2 fused), and datasheet figures: H200 SXM
989.4 TFLOP/s bf16, 4.8 TB/s; H100 SXM5 3.35 TB/s."""

import pytest
from exercise_hand import LLAMA_3_8B, chapter_tests, decode_step_bytes, memory_bound_time

import roofline_lib as rl
from roofline_lib.exercises import check

H200 = (989.4e12, 4.8e12)
EAGER_KERNELS, FUSED_KERNELS = 12 * 32 + 3, 5 * 32 + 2
ASYNC_TOTAL = 1000 * 5e-6 + 1.5e-6     # 1000 launches of 5 us set the pace; the last 1.5 us kernel ends it

HAND = {
    "08.calls_per_second": 1 / 0.5e-6,                   # a measured 0.5 us per call
    "08.h100_flat_region": 5e-6 * 3.35e12 / 6,           # fp16 add: 2 + 2 + 2 bytes per element
    "08.async_total": 100 * 5e-6 + 3e-6,                 # last launch at 500 us, its 3 us kernel after it
    "08.decode_launch_bound": memory_bound_time(LLAMA_3_8B, 1, 4096, *H200) / EAGER_KERNELS,
    "08.fused_graph_boundary_time": (FUSED_KERNELS - 1) * 5e-6,  # a graph keeps the 5 us boundaries
    "08.fewer_kernels": "fusion",
    "08.predict_async_idle": (ASYNC_TOTAL - 1000 * 1.5e-6) / ASYNC_TOTAL,
    # the smallest batch whose step (memory-bound) takes at least the 387 eager launches of 10 us
    "08.design_batch_hides_launches": next(b for b in range(1, 100)
                                           if decode_step_bytes(LLAMA_3_8B, b, 4096) / 4.8e12 >= EAGER_KERNELS * 10e-6),
    "08.explain_more_overhead": "int4 weights",          # test_thinking_questions_by_hand
    "08.mistake_added_launches": "overlap",
}
CONTEXT = {"08.calls_per_second": {"overhead": 0.5e-6}}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("08", HAND, CONTEXT)


def test_launch_questions_by_hand():
    assert check("08.calls_per_second", 2e6, overhead=0.5e-6)
    assert check("08.h100_flat_region", 5e-6 * 3.35e12 / 6)
    # 100 kernels of 3 us at 5 us per launch: first starts at 5 us, then one every 5 us, last ends 3 us later
    assert check("08.async_total", 5e-6 + 99 * 5e-6 + 3e-6)
    # H200 SXM: 4.8 TB/s. Llama-3-8B: 8.03e9 params, of which the 128256 x 4096 embedding table (0.525e9)
    # is only looked up, not read whole: 7.50e9 x 2 B = 15.01 GB of weights; KV cache at 4096:
    # 32 layers x 2 x 8 kv heads x 128 x 4096 x 2 B = 0.537 GB -> 15.55 GB / 4.8e12 = 3.24 ms over
    # 12 x 32 + 3 = 387 kernels: ~8.4 us (activations are a rounding error; 3% tolerance)
    assert check("08.decode_launch_bound", (8.03e9 - 128256 * 4096) * 2 / 4.8e12 / 387 + 0.537e9 / 4.8e12 / 387)
    # fused: 5 kernels per layer (QKV, attention, output, gate+up, down) x 32 + embedding + LM head = 162,
    # so 161 boundaries between them
    assert check("08.fused_graph_boundary_time", 161 * 5e-6)
    assert not check("08.fused_graph_boundary_time", 162 * 70e-6 / 80)  # the old premise: CPU launch per kernel
    assert check("08.fewer_kernels", "fusion") and not check("08.fewer_kernels", "graphs")
    assert rl.launch.decode_kernel_count("llama-3-8b") == EAGER_KERNELS
    assert rl.launch.decode_kernel_count("llama-3-8b", fused=True) == FUSED_KERNELS


def test_thinking_questions_by_hand():
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
