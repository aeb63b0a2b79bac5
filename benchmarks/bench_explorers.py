"""How long an explorer takes to answer a slider, against a naive re-plot of the same figure.

What is timed, for each explorer: setting its main slider's value (an ipywidgets
control, exactly what a drag in JupyterLab does on the Python side) until the
figure has been redrawn. That runs the observer chain: ``update`` (numbers,
``set_data`` on the artists), the HTML readout, and the redraw.

- Agg backend: ``draw_idle`` renders the whole figure at once, so the redraw is
  inside the time.
- ipympl backend (``%matplotlib widget``; run here without a browser): the explorer
  calls ``canvas.draw()`` at once, which renders the figure and encodes the changed
  pixels as a PNG for the browser; that is inside the time. Sending the frame over
  the websocket and painting it are not included.

The naive version is what an ``interact`` callback usually does: clear the
figure and plot everything again (roofs, ridge labels, legend, constrained
layout) for every value, then render. Both run in the same process, alternating
explorers, on the same sequence of slider values.

    PYTHONPATH=$PWD python benchmarks/bench_explorers.py [--updates 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import matplotlib

BACKENDS = {"agg": "Agg", "ipympl": "module://ipympl.backend_nbagg"}
if __name__ == "__main__" and "--backend" in sys.argv:
    matplotlib.use(BACKENDS[sys.argv[sys.argv.index("--backend") + 1]])
else:
    matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

import roofline_lib as rl  # noqa: E402
from roofline_lib.widgets import AttentionExplorer, MatmulExplorer, RooflineExplorer  # noqa: E402


def naive_roofline(fig, intensity, chips=("A100", "H200"), dtype="bf16"):
    fig.clear()
    ax = fig.add_subplot()
    point = rl.Workload("operating point", flops=float(intensity), bytes=1.0)  # any workload of that intensity
    rl.plotting.roofline_plot(chips, dtype, workloads=[point], achieved=True, ax=ax)
    fig.canvas.draw()


def naive_matmul(fig, M, N=4096, K=4096, chips=("A100", "H200")):
    w = rl.matmul(int(M), N, K)
    fig.clear()
    ax = fig.add_subplot()
    rl.plotting.roofline_plot(chips, "bf16", workloads=[("matmul", w)], ax=ax)
    fig.canvas.draw()


def naive_attention(fig, T, heads=32, G=4, head_dim=128, chips=("A100", "H200")):
    T = int(T)
    w = rl.attention(1, heads, heads // G, T, T, head_dim)
    fig.clear()
    left, right = fig.subplots(1, 2)
    rl.plotting.roofline_plot(chips, "bf16", workloads=[("attention", w)], ax=left)
    x = np.geomspace(1, 131072, 120)
    right.loglog(x, rl.attention(1, heads, heads // G, x, x, head_dim).intensity, label="prefill")
    right.loglog(x, rl.attention(1, heads, heads // G, 1, x, head_dim).intensity, "--", label="decode")
    for hw in chips:
        right.axhline(rl.get_accelerator(hw).ridge_point("bf16"), label=rl.get_accelerator(hw).name)
    right.plot([T], [w.intensity], "o")
    right.legend()
    fig.canvas.draw()


def timed(call, values):
    """Wall-clock and CPU milliseconds of ``call(v)`` for each value.

    The wall time is what a reader waits; the CPU time of this process is shown
    beside it because on a shared machine other people's jobs inflate the wall time.
    """
    wall, cpu = [], []
    for v in values:
        start, start_cpu = time.perf_counter(), time.process_time()
        call(v)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return np.array(wall) * 1e3, np.array(cpu) * 1e3


def describe(times):
    wall, cpu = times
    return (f"median {np.median(wall):6.1f} ms, p90 {np.percentile(wall, 90):6.1f} ms "
            f"(CPU median {np.median(cpu):5.1f} ms, n={len(wall)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=60, help="slider value changes per explorer (>= 50)")
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both")
    args = parser.parse_args()
    if args.updates < 50:
        parser.error("--updates must be at least 50")
    if args.backend == "both":  # one process per backend: matplotlib picks its backend once
        for backend in BACKENDS:
            subprocess.run([sys.executable, __file__, "--backend", backend, "--updates", str(args.updates)],
                           check=True)
        return
    cases = [
        ("roofline (intensity)", RooflineExplorer, "intensity", np.geomspace(0.2, 5000, args.updates), naive_roofline),
        ("matmul (M)", MatmulExplorer, "M", np.geomspace(1, 32768, args.updates), naive_matmul),
        ("attention (T)", AttentionExplorer, "T", np.geomspace(1, 65536, args.updates), naive_attention),
    ]
    print(f"matplotlib {matplotlib.__version__}, {args.backend} canvas, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for label, cls, slider, values, naive in cases:
        explorer = cls().connect()
        control = explorer.controls[slider]
        values = [float(v) for v in values]
        # one warm-up change each, so font and path caches are filled before timing
        control.value = values[-1]
        def change(v, c=control):
            c.value = v  # refresh() redraws: draw_idle on Agg, draw() (render + PNG) on ipympl

        fast = timed(change, values)
        assert explorer.last is not None, "the explorer refused a slider value"
        naive_fig = plt.figure(figsize=explorer.figsize, layout="constrained")
        naive(naive_fig, values[-1])
        slow = timed(lambda v, f=naive_fig, n=naive: n(f, v), values)
        plt.close(naive_fig)
        plt.close(explorer.fig)
        ratio = statistics.median(slow[0]) / statistics.median(fast[0])
        print(f"{label}\n  in place:      {describe(fast)}\n  naive re-plot: {describe(slow)}\n"
              f"  naive / in place (wall medians) = {ratio:.1f}x")


if __name__ == "__main__":
    main()
