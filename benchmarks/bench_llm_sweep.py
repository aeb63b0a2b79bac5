"""Speed of the LLM model: one decode step at a time, and a 10,000-point (batch, context) sweep.

Scalar: one ``rl.decode_step`` + ``rl.estimate`` of Llama-3-70B (80 layers) on an H200, the way a loop
over configurations calls it (target <= 60 us; LLM-Viewer takes ~62 us per configuration on the same
kind of machine). Vectorised: 10,000 decode steps in one call, as a slider over batch and context
recomputes them on every move (target <= 5 ms). Prints the medians of several runs.

    .venv/bin/python benchmarks/bench_llm_sweep.py
"""

import statistics
import time

import numpy as np

import roofline_lib as rl

MODEL, CHIP = "llama-3-70b", "H200"


def one(batch, context):
    return rl.estimate(rl.decode_step(MODEL, batch, context), CHIP).lower


def sweep(batch, context):
    step = rl.decode_step(MODEL, batch, context)
    est = rl.estimate(step, CHIP)
    return est.lower, est.no_overlap, rl.llm.fits(MODEL, CHIP, batch, context)


def timed(fn, runs, number):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return times


def main(runs=9):
    one(8, 4096)  # warm-up: loads the model and chip files once
    scalar = timed(lambda: one(8, 4096), runs, 300)
    print(f"scalar: one decode_step + estimate, Llama-3-70B (80 layers) on H200: median "
          f"{statistics.median(scalar) * 1e6:.1f} us over {runs} runs of 300 "
          f"(min {min(scalar) * 1e6:.1f}, max {max(scalar) * 1e6:.1f}); target <= 60 us")

    b, c = np.meshgrid(np.arange(1, 101), np.geomspace(128, 131072, 100).round())
    batch, context = b.ravel(), c.ravel()
    sweep(batch, context)
    vector = timed(lambda: sweep(batch, context), runs, 1)
    print(f"vectorised: {batch.size:,} (batch, context) points in one call: median "
          f"{statistics.median(vector) * 1e3:.1f} ms over {runs} runs (min {min(vector) * 1e3:.1f} ms, "
          f"max {max(vector) * 1e3:.1f} ms), {statistics.median(vector) / batch.size * 1e9:.0f} ns per point; "
          f"target <= 5 ms")


if __name__ == "__main__":
    main()
