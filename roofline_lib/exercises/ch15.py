"""Chapter 15: diagnose a real trace. Each answer is computed with the trace room's own functions (the union of
intervals, their overlap, a GEMM's count) or the roofline, from the figures the prompt gives."""

from ..roofline.workloads import matmul
from ..specs.hardware import get_accelerator
from .core import Question

REGIMES = ("overhead", "memory", "compute", "communication")


def _busy_share(intervals=((0, 30e-6), (70e-6, 100e-6), (20e-6, 50e-6))):
    from ..trace.intervals import length

    starts, ends = zip(*intervals, strict=True)
    return length(starts, ends) / (max(ends) - min(starts))


def _exposed(comm=(50e-6, 90e-6), compute=((0, 60e-6), (80e-6, 120e-6))):
    from ..trace.intervals import overlap

    hidden = overlap(([comm[0]], [comm[1]]), tuple(zip(*compute, strict=True)))
    return comm[1] - comm[0] - hidden


def _gemm_rate(m=2048, n=14336, k=4096, seconds=400e-6):
    return matmul(m, n, k, "bf16").flops / seconds


def _graph_decode_regime(batch=8, chip="H100"):
    """A graph-replayed decode step keeps the GPU busy: its GEMMs' side of the ridge decides."""
    w = matmul(batch, 14336, 4096, "bf16")
    return "memory" if w.intensity < get_accelerator(chip).ridge_point("bf16") else "compute"


def _launch_bound_busy(kernels=1000, duration=4e-6, launch=7e-6):
    from ..measure.launch import simulate_queue

    q = simulate_queue([duration] * kernels, launch)
    return q.busy / float(q.end[-1] - q.start[0])  # a trace's window: first kernel's start to last one's end


def _overlapped_step(compute=1.0, last_bucket=0.04):
    return compute + last_bucket


QUESTIONS = [
    Question("15.busy_share", "Stream 7 runs kernels from 0 to 30 us and from 70 to 100 us; stream 13 one from 20 to "
             "50 us. What share of the 100 us window is the GPU busy?", _busy_share, rtol=0.01,
             hints=("busy means at least one kernel runs, on any stream: two kernels at once count once",
                    "merge the three intervals into disjoint ones, add their lengths, divide by the window")),
    Question("15.exposed_comm", "An all-reduce runs from 50 to 90 us on stream 20; compute kernels run from 0 to 60 us "
             "and from 80 to 120 us on stream 7. How much of the all-reduce is exposed (nothing else running)?",
             _exposed, rtol=0.01, unit="s",
             hints=("hidden is the part of the all-reduce during which a compute kernel runs; exposed is the rest",
                    "intersect [50, 90] us with each compute interval, add the overlaps, subtract from its length")),
    Question("15.gemm_rate", "A trace records aten::mm with Input Dims [[2048, 4096], [4096, 14336]] in bf16; its "
             "kernel ran 400 us. At what rate did it compute?", _gemm_rate, rtol=0.02, unit="FLOP/s",
             hints=("[m, k] @ [k, n]: which number is m, which n, which k? A multiply-add is two FLOPs",
                    "2 m n k FLOPs divided by the kernel's seconds")),
    Question("15.predict_graph_decode", "Predict, then check: a decode step at batch 8 on an H100, replayed as a CUDA "
             "graph, keeps the GPU busy 98 % of its window with no communication; its GEMMs are 8 x 14336 x 4096 in "
             "bf16. Which bottleneck dominates: 'overhead', 'memory', 'compute' or 'communication'?",
             _graph_decode_regime, kind="choice", choices=REGIMES,
             why={"overhead": "a GPU busy 98 % of the time has almost no idle time to charge to overhead",
                  "compute": "compare the GEMM's intensity, about 2 m FLOPs per weight byte, with the H100's ridge"},
             hints=("the GPU is busy, so not overhead; what does the roofline say about a GEMM with only 8 rows?",
                    "rl.matmul(8, 14336, 4096).intensity against rl.get_accelerator('H100').ridge_point('bf16')")),
    Question("15.predict_launch_bound", "Predict, then check with rl.launch.simulate_queue: 1000 kernels of 4 us each, "
             "launched asynchronously at 7 us apiece. What share of the window will a trace show the GPU busy?",
             _launch_bound_busy, rtol=0.02,
             hints=("which is slower, a launch or a kernel? That one sets the pace of the window",
                    "busy = 1000 x 4 us; a trace's window runs from the first kernel's start (after the first "
                    "launch, at 7 us) to the last one's end: 999 launches of 7 us, plus the last kernel")),
    Question("15.mistake_split_gap", "Find the mistake: \"SGLang's decode trace shows the GPU busy 2 % of its 474 ms "
             "window: the engine is overhead-bound.\" The trace holds one gap of 463 ms. What is wrong: "
             "'split gap', 'launch cost', 'streams overlap' or 'nothing'?", lambda: "split gap", kind="choice",
             choices=("split gap", "launch cost", "streams overlap", "nothing"),
             why={"nothing": "is a 463 ms gap in a decode step of a few ms idle time, or a trace that was cut?"},
             hints=("how long is one decode step, and how long is the gap?",
                    "a gap far longer than the work around it is where the trace was split: leave it out "
                    "(rl.trace's split_gaps) and take the busy share of the rest")),
    Question("15.mistake_nccl_rate", "Find the mistake: \"An all-reduce of 26.6 MB between 2 GPUs ran 2.37 ms in the "
             "trace: the wire carried 11 GB/s, 4 % of NVLink's 300 GB/s, so the link is faulty.\" What is wrong: "
             "'waiting', 'bytes', 'units' or 'nothing'?", lambda: "waiting", kind="choice",
             choices=("waiting", "bytes", "units", "nothing"),
             why={"bytes": "2 ranks: a ring all-reduce sends 2 (n - 1) / n = 1 message each; the bytes are right",
                  "nothing": "does an NCCL kernel start sending when it starts, or when the other rank arrives?"},
             hints=("what does an NCCL kernel do from its start until the other rank has launched its own?",
                    "a collective's kernel spins until every rank joins: its time is wait plus wire; the "
                    "rate it implies is a floor on the link's, not its measure")),
    Question("15.explain_sum_exceeds_busy", "Explain: a trace's time_by_category() sums to 1.15 s, but busy_s is "
             "1.00 s. Why: 'streams overlap', 'split gap', 'idle time' or 'launch cost'?",
             lambda: "streams overlap", kind="choice",
             choices=("streams overlap", "split gap", "idle time", "launch cost"),
             hints=("which of the two counts a moment twice when two kernels run at once?",
                    "time_by_category adds each kernel's own time; busy_s is the union over every stream")),
    Question("15.design_overlapped_step", "Design: a data-parallel step runs 1.0 s of compute kernels, then 0.36 s of "
             "all-reduce with nothing else running. Launching each bucket's all-reduce on its own stream as soon as "
             "its gradients are ready hides all of it but the last bucket's 0.04 s. How long is the step then?",
             _overlapped_step, rtol=0.01, unit="s",
             hints=("which part of the communication still runs with no compute beside it?",
                    "the compute kernels' time plus the exposed part only")),
]
