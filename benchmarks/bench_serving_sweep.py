"""Speed of a whole-request sweep: 10,000 (batch, prompt, output) points of Llama-2-7B bf16 on an A100 80GB
SXM, each with its TTFT, every decode step summed (closed form) and its memory. Target: under 50 ms.
Also a brute-force loop over the decode steps of one request, for scale. Prints the medians.

    .venv/bin/python benchmarks/bench_serving_sweep.py
"""

import statistics
import time

import numpy as np

import roofline_lib as rl
from roofline_lib import serving


def main(runs=9):
    rng = np.random.default_rng(0)
    batch, prompt, out = rng.integers(1, 256, 10_000), rng.integers(1, 4096, 10_000), rng.integers(1, 2048, 10_000)
    serving.request("llama-2-7b", "A100", batch, prompt, out)  # warm-up: loads the model and chip files once
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        r = serving.request("llama-2-7b", "A100", batch, prompt, out)
        _ = (r.e2e, r.throughput, r.fits)
        times.append(time.perf_counter() - start)
    print(f"10,000 requests (batch 1-255, prompt 1-4095, output 1-2047; {int(out.sum()):,} decode steps): "
          f"median {statistics.median(times) * 1e3:.1f} ms over {runs} runs (target < 50 ms)")
    start = time.perf_counter()
    sum(rl.estimate(rl.decode_step("llama-2-7b", 1, c), "A100").lower for c in range(512, 640))
    print(f"one request's 128 decode steps one by one in Python: {(time.perf_counter() - start) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
