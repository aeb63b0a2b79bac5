"""Chapter 15's questions (diagnose a real trace) against hand computations: intervals merged and intersected by
hand, a GEMM's 2mnk, a launch queue worked out by hand, and the H100 SXM's datasheet ridge (989.4 TFLOP/s bf16
over 3.35 TB/s = 295 FLOP/byte)."""

from exercise_hand import chapter_tests

from roofline_lib.exercises import check

HAND = {
    # 0-30, 20-50 and 70-100 us merge to 0-50 and 70-100: 80 us busy of 100 (the sum, 90 us, counts 20-30 twice)
    "15.busy_share": 80 / 100,
    # the all-reduce's 50-90 us meets compute at 50-60 and 80-90: 20 us hidden, 20 us exposed
    "15.exposed_comm": 20e-6,
    "15.gemm_rate": 2 * 2048 * 14336 * 4096 / 400e-6,
    # 8 rows: 2 x 8 x 14336 x 4096 FLOPs over 2 x (8 x 4096 + 4096 x 14336 + 8 x 14336) bytes = 8.0 FLOP/byte,
    # far under the ridge's 295: memory
    "15.predict_graph_decode": "memory",
    # launches at 7 us set the pace: kernel i starts at 7 (i + 1) us, so the trace's window runs from 7 us to
    # 7000 + 4 us: 999 x 7 + 4 = 6997 us; busy 1000 x 4 us
    "15.predict_launch_bound": 1000 * 4e-6 / (999 * 7e-6 + 4e-6),
    "15.mistake_split_gap": "split gap",
    "15.mistake_nccl_rate": "waiting",
    "15.explain_sum_exceeds_busy": "streams overlap",
    "15.design_overlapped_step": 1.0 + 0.04,
}

test_hand_values, test_every_question_has_a_hand_value = chapter_tests("15", HAND)


def test_the_traps_are_rejected():
    assert not check("15.busy_share", 0.9)                # the kernels' summed time over the window
    assert not check("15.exposed_comm", 40e-6)            # the all-reduce's whole length
    assert not check("15.gemm_rate", 2048 * 14336 * 4096 / 400e-6)   # one FLOP per multiply-add
    assert not check("15.predict_launch_bound", 4 / 11)  # launches and kernels added, as if synchronous
    assert not check("15.design_overlapped_step", 1.36)   # nothing hidden
    assert not check("15.predict_graph_decode", "compute")
