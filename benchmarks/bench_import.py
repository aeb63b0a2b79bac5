"""How long `import roofline_lib` takes in a fresh interpreter, and what it pulls in.

Run: python benchmarks/bench_import.py   (target: under 0.3 s; sympy, matplotlib and
ipywidgets must not be imported by the package itself)
"""

import statistics
import subprocess
import sys

PROBE = (
    "import time, sys; t = time.perf_counter(); import roofline_lib; "
    "dt = time.perf_counter() - t; heavy = [m for m in ('sympy', 'matplotlib', 'ipywidgets') if m in sys.modules]; "
    "print(dt, ','.join(heavy))"
)
BASELINE = "import time; t = time.perf_counter(); import numpy; print(time.perf_counter() - t, '')"


def run(code, repeats=7):
    times, heavy = [], ""
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ")
        times.append(float(out[0]))
        heavy = out[1].strip() if len(out) > 1 else ""
    return times, heavy


if __name__ == "__main__":
    lib, heavy = run(PROBE)
    numpy_only, _ = run(BASELINE)
    print(f"import roofline_lib: median {statistics.median(lib) * 1e3:.0f} ms "
          f"(min {min(lib) * 1e3:.0f}, max {max(lib) * 1e3:.0f}) over {len(lib)} fresh interpreters")
    print(f"  of which numpy alone: median {statistics.median(numpy_only) * 1e3:.0f} ms")
    print(f"  heavy modules imported: {heavy or 'none'}")
    status = "OK" if statistics.median(lib) < 0.3 and not heavy else "OVER TARGET"
    print(f"  target < 300 ms, no sympy/matplotlib/ipywidgets: {status}")
