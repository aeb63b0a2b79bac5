"""Speed of the training model: one ``train_step``, and the search over every configuration of Llama-3.1-405B
on 16,384 H100s (2,048 sequences of 8,192 tokens per step) in one vectorised call (target: under a second).
Prints the medians of several runs.

    .venv/bin/python benchmarks/bench_training_search.py
"""

import statistics
import time

from bench_llm_sweep import timed  # the same repeats-of-a-batch timer

import roofline_lib as rl

T = rl.training


def main(runs=9):
    def one():
        return T.train_step("llama-3.1-405b", "H100 SXM5", n_chips=16384, seq_len=8192, global_batch=2048, tp=8,
                            pp=16, zero_stage=1)

    def search():
        return T.search("llama-3.1-405b", "H100 SXM5", n_chips=16384, seq_len=8192, global_batch=2048)

    one(), search()  # warm-up: the model and chip files, the per-sequence roofline times
    single = timed(one, runs, 100)
    print(f"one train_step, Llama-3.1-405B on 16,384 H100s: median {statistics.median(single) * 1e6:.0f} us "
          f"(min {min(single) * 1e6:.0f}, max {max(single) * 1e6:.0f})")
    found = search()
    times = timed(search, runs, 1)
    print(f"search: {len(found):,} configurations ({int(found.fits.sum()):,} fit) in one call: median "
          f"{statistics.median(times) * 1e3:.1f} ms over {runs} runs (min {min(times) * 1e3:.1f}, max "
          f"{max(times) * 1e3:.1f}); target < 1 s")
    cold = time.perf_counter()
    T.step._PER_SEQUENCE.clear()
    T.estimate._KERNELS.clear()
    search()
    print(f"the same search with the per-sequence roofline and estimate kernel times computed afresh: "
          f"{(time.perf_counter() - cold) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
