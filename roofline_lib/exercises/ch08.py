"""Chapter 8: overhead-bound. Questions on measured numbers take the reader's overhead and bandwidth."""

from .. import estimate, get_accelerator
from .core import Question


def _calls_per_second(overhead):
    return 1.0 / overhead


def _flat_region_end(overhead, bandwidth):
    # fp64 vector add moves 24 bytes per element; memory time equals overhead at n = o * B / 24
    return overhead * bandwidth / 24


def _fused_speedup(overhead, bandwidth, calls=1000, n=16):
    # numpy calls are synchronous: each costs its overhead plus its work (the additive model)
    separate = calls * (overhead + 24 * n / bandwidth)
    fused = overhead + 24 * n * calls / bandwidth
    return separate / fused


def _async_total(kernels=100, duration=3e-6, launch=5e-6):
    from ..launch import simulate_queue

    return simulate_queue([duration] * kernels, launch).total


def _decode_launch_bound(model="llama-3-8b", chip="H200", context=4096):
    from ..launch import decode_kernel_count
    from ..llm import decode_step

    return float(estimate(decode_step(model, 1, context), get_accelerator(chip)).lower) / decode_kernel_count(model)


def _fused_graph_launch_time(model="llama-3-8b", graph_launch=70e-6 / 80):
    from ..launch import decode_kernel_count

    return decode_kernel_count(model, fused=True) * graph_launch


def _h100_flat_region(launch=5e-6):
    return launch * get_accelerator("H100").mem_bandwidth / 6  # fp16 add: 2 + 2 + 2 bytes per element


QUESTIONS = [
    Question("08.calls_per_second", "How many tiny numpy calls per second can your machine dispatch?",
             _calls_per_second, rtol=0.03, unit="calls/s"),
    Question("08.flat_region_end", "Up to how many elements does an fp64 vector add stay overhead-bound on your "
             "machine (memory time = per-call overhead)?", _flat_region_end, rtol=0.05, unit="elements",
             hint="24 bytes per element at the measured bandwidth"),
    Question("08.fused_speedup", "Predicted speed-up (additive model: overhead + work per synchronous call) of "
             "batching 1000 vector adds of 16 fp64 elements into one call on your machine.", _fused_speedup,
             rtol=0.05,
             hint="separate: 1000 x (overhead + memory time of 16); batched: overhead + memory time of 16000"),
    Question("08.h100_flat_region", "On an H100 SXM with a 5 us launch cost, below how many elements is an fp16 "
             "vector add launch-bound?", _h100_flat_region, rtol=0.03, unit="elements",
             hint="5e-6 s x 3.35e12 B/s / 6 bytes per element"),
    Question("08.async_total", "Total time of 100 kernels of 3 us each launched asynchronously at 5 us apiece.",
             _async_total, unit="s", hint="the first kernel starts after one launch; then the slower of launch "
             "and kernel sets the pace; the last kernel still has to run"),
    Question("08.decode_launch_bound", "Launch cost per kernel above which a Llama-3-8B decode step (batch 1, "
             "context 4096) on an H200 SXM is launch-bound.", _decode_launch_bound, rtol=0.03, unit="s",
             hint="the step's roofline time divided by its number of kernels"),
    Question("08.fused_graph_launch_time", "CPU launch time of one fused Llama-3-8B decode step replayed as a CUDA "
             "graph at 70/80 us per kernel.", _fused_graph_launch_time, rtol=0.03, unit="s",
             hint="fused kernels per step x the graph's cost per kernel"),
    Question("08.fewer_kernels", "Which remedy makes fewer, larger kernels by folding operations together: "
             "'batching', 'fusion' or 'graphs'?", lambda: "fusion", kind="choice",
             choices=("batching", "fusion", "graphs"),
             hint="graphs keep the kernels and make launches cheaper; batching gives each kernel more sequences"),
]
