"""Chapter 8: overhead-bound. Questions on measured numbers take the reader's overhead and bandwidth."""

from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from .core import Question


def _calls_per_second(overhead):
    return 1.0 / overhead


def _async_total(kernels=100, duration=3e-6, launch=5e-6):
    from ..measure.launch import simulate_queue

    return simulate_queue([duration] * kernels, launch).total


def _decode_launch_bound(model="llama-3-8b", chip="H200", context=4096):
    from ..llm.steps import decode_step
    from ..measure.launch import decode_kernel_count

    return float(estimate(decode_step(model, 1, context), get_accelerator(chip)).lower) / decode_kernel_count(model)


def _fused_graph_boundary_time(model="llama-3-8b", boundary=5e-6):
    from ..measure.launch import decode_kernel_count

    return (decode_kernel_count(model, fused=True) - 1) * boundary  # one boundary between each two kernels


def _h100_flat_region(launch=5e-6):
    return launch * get_accelerator("H100").mem_bandwidth / 6  # fp16 add: 2 + 2 + 2 bytes per element


def _idle_fraction(kernels=1000, duration=1.5e-6, launch=5e-6):
    from ..measure.launch import simulate_queue

    return simulate_queue([duration] * kernels, launch).idle_fraction


def _batch_hiding_launches(model="llama-3-8b", chip="H200", context=4096, launch=10e-6):
    """Smallest batch whose decode step's roofline time is at least its eager launches (one per kernel)."""
    from ..llm.steps import decode_step
    from ..measure.launch import decode_kernel_count

    launches = decode_kernel_count(model) * launch
    hw = get_accelerator(chip)
    return next(b for b in range(1, 4097) if estimate(decode_step(model, b, context), hw).lower >= launches)


def _launches_matter_more(model="llama-3-8b", context=4096, launch=10e-6, graph_launch=70e-6 / 80):
    """Of four changes to the batch-1 H200 step, the one after which eager launches cost the largest share."""
    from ..measure.launch import decode_kernel_times, simulate_queue

    def share(times, cost):
        return simulate_queue(times, cost).total / times.sum()

    return max({"int4 weights": share(decode_kernel_times(model, "H200", 1, context, weight_dtype="int4"), launch),
                "cuda graphs": share(decode_kernel_times(model, "H200", 1, context), graph_launch),
                "fusion": share(decode_kernel_times(model, "H200", 1, context, fused=True), launch),
                "larger batch": share(decode_kernel_times(model, "H200", 64, context), launch)}.items(),
               key=lambda kv: kv[1])[0]


def _added_launches(kernels=1000, duration=2e-6, launch=5e-6):
    """The colleague's 1000 x (5 + 2) us: the synchronous sum, where asynchronous launches overlap the kernels."""
    from ..measure.launch import simulate_queue

    claimed = kernels * (launch + duration)
    return "overlap" if simulate_queue([duration] * kernels, launch).total < 0.9 * claimed else "nothing"


QUESTIONS = [
    Question("08.calls_per_second", "How many tiny numpy calls per second can your machine dispatch?",
             _calls_per_second, rtol=0.03, unit="calls/s",
             hints=("the measured overhead is seconds per call; the question asks for calls per second",
                    "1 / overhead, with overhead your measured per-call time in seconds")),
    Question("08.h100_flat_region", "On an H100 SXM with a 5 us launch cost, below how many elements is an fp16 "
             "vector add launch-bound?", _h100_flat_region, rtol=0.03, unit="elements",
             hints=("launch-bound while the launch outlasts the data movement: how many bytes move in one launch?",
                    "5e-6 s x 3.35e12 B/s / 6 bytes per element")),
    Question("08.async_total", "Total time of 100 kernels of 3 us each launched asynchronously at 5 us apiece.",
             _async_total, unit="s", hints=("the first kernel starts after one launch; then the slower of launch "
                                            "and kernel sets the pace; the last kernel still has to run",
                                            "5e-6 + 99 x max(5e-6, 3e-6) + 3e-6 s; "
                                            "rl.launch.simulate_queue([3e-6] * 100, 5e-6).total checks it")),
    Question("08.decode_launch_bound", "Launch cost per kernel above which a Llama-3-8B decode step (batch 1, "
             "context 4096) on an H200 SXM is launch-bound.", _decode_launch_bound, rtol=0.03, unit="s",
             hints=("the step's roofline time divided by its number of kernels",
                    "rl.estimate(rl.decode_step('llama-3-8b', 1, 4096), 'H200').lower / "
                    "rl.launch.decode_kernel_count('llama-3-8b')")),
    Question("08.fused_graph_boundary_time", "Device time the kernel boundaries of one fused Llama-3-8B decode step "
             "cost when it is replayed as a CUDA graph, at 5 us per boundary.", _fused_graph_boundary_time, rtol=0.03,
             unit="s", hints=("a graph removes the CPU's launches, not the device's boundaries: one boundary "
                              "between each two of the step's fused kernels, 5 us each",
                              "(rl.launch.decode_kernel_count('llama-3-8b', fused=True) - 1) x 5e-6 s")),
    Question("08.fewer_kernels", "Which remedy makes fewer, larger kernels by folding operations together: "
             "'batching', 'fusion' or 'graphs'?", lambda: "fusion", kind="choice",
             choices=("batching", "fusion", "graphs"),
             hints=("which remedy changes the number of kernels, and which change only a launch's cost or a kernel's "
                    "work?",
                    "graphs keep the kernels and make launches cheaper; batching gives each kernel more sequences")),
    Question("08.predict_async_idle", "Predict, then check: 1000 kernels of 1.5 us launched asynchronously at 5 us "
             "apiece. What fraction of the total time is the GPU idle?", _idle_fraction, rtol=0.02,
             hints=("which is slower, a launch or a kernel? That one sets the pace, and the GPU waits the rest",
                    "total = 1000 x 5e-6 + 1.5e-6 s (the last kernel still runs); idle = (total - 1000 x 1.5e-6) / "
                    "total")),
    Question("08.design_batch_hides_launches", "Design: Llama-3-8B decode at context 4096 on an H200 SXM, launched "
             "eagerly at 10 us per kernel (387 kernels). The smallest batch whose roofline time is at least the "
             "3.87 ms of launches.", _batch_hiding_launches, rtol=0, unit="sequences", rounding="up",
             hints=("the step stays memory-bound: which bytes grow with the batch, and which are read once?",
                    "the weights' 15 GB once, plus 0.54 GB of KV cache per sequence, at 4.8 TB/s: the smallest b "
                    "reaching 3.87 ms")),
    Question("08.explain_more_overhead", "Explain: Llama-3-8B at batch 1 on an H200, eager launches at 10 us. After "
             "which change do the launches cost the largest share of the step: 'int4 weights', 'cuda graphs', "
             "'fusion' or 'larger batch'?", _launches_matter_more, kind="choice",
             choices=("int4 weights", "cuda graphs", "fusion", "larger batch"), aliases={},
             hints=("the share compares the launches' time with the step's own work: how does each change move each?",
                    "rl.launch.simulate_queue(times, cost).total / times.sum(), times from "
                    "rl.launch.decode_kernel_times(..., 'H200', b, 4096, ...)"),
             why={"cuda graphs": "graphs make each launch cheap (under 1 us): the launches hide again.",
                       "fusion": "fusion launches 162 kernels instead of 387: less launch time for the same bytes.",
                       "larger batch": "a batch of 64 reads the same weights and 64 KV caches: more memory time to "
                                       "hide the same launches under."}),
    Question("08.mistake_added_launches", "Find the mistake: '1000 kernels of 2 us launched on a CUDA stream at 5 us "
             "each take 1000 x (5 + 2) us = 7 ms.' What is wrong: 'overlap' (asynchronous launches overlap the "
             "kernels), 'launch cost', 'kernel count' or 'nothing'?", _added_launches, kind="choice",
             choices=("overlap", "launch cost", "kernel count", "nothing"), aliases={},
             hints=("on a CUDA stream, does the CPU wait for each kernel to finish before it launches the next?",
                    "asynchronous: about n x max(launch, kernel) plus the last kernel; "
                    "rl.launch.simulate_queue([2e-6] * 1000, 5e-6).total"),
             why={"launch cost": "5 us per launch is the premise; the sum is the slip.",
                       "kernel count": "1000 kernels is the premise; the sum is the slip.",
                       "nothing": "7 ms is the synchronous time; a stream lets the CPU launch the next kernel while "
                                  "the GPU runs this one."}),
]


__all__ = ["QUESTIONS"]
