"""Speed of a (batch, context) sweep: 10,000 decode steps of Llama-3-70B (80 layers) estimated on an H200.

Sliders over batch and context recompute a sweep like this on every move, so it must stay well
under 100 ms. Prints the median of several runs.

    PYTHONPATH=$PWD python benchmarks/bench_llm_sweep.py
"""

import statistics
import time

import numpy as np

import roofline_lib as rl


def sweep(batch, context):
    step = rl.decode_step("llama-3-70b", batch, context)
    est = rl.estimate(step, "H200")
    return est.lower, est.upper, rl.llm.fits("llama-3-70b", "H200", batch, context)


def main(runs=9):
    b, c = np.meshgrid(np.arange(1, 101), np.geomspace(128, 131072, 100).round())
    batch, context = b.ravel(), c.ravel()
    sweep(batch, context)  # warm-up: loads the model and chip files once
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sweep(batch, context)
        times.append(time.perf_counter() - start)
    print(f"{batch.size:,} (batch, context) points, Llama-3-70B decode step on H200: "
          f"median {statistics.median(times) * 1e3:.1f} ms over {runs} runs "
          f"(min {min(times) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
