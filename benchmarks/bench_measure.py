"""Run the full machine measurement; compare its memory roof with an independent C OpenMP triad.

    .venv/bin/python benchmarks/bench_measure.py [runs]

Prints, for each run, the profile and its wall time (target: under 20 s), then the figures'
agreement across runs, then STREAM's triad written in C with OpenMP (compiled here with the system's
C compiler, arrays 4x the last-level cache, best of 10 passes, as STREAM reports) and the ratio
library memory roof / C triad (target: at least 0.85). The 1-minute load average is printed beside
each run: other programs sharing the cores and the memory bus lower the figures and widen the spread.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import roofline_lib as rl

TRIAD_C = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
    #pragma omp parallel for
    for (long i = 0; i < n; i++) { a[i] = 0.0; b[i] = 1.0 + (i % 7); c[i] = 2.0 + (i % 5); }
    double best = 1e30, s = 3.0;
    for (int k = 0; k < 10; k++) {
        double t = omp_get_wtime();
        #pragma omp parallel for
        for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        t = omp_get_wtime() - t;
        if (t < best) best = t;
    }
    printf("%.6e %d %f\n", 3.0 * sizeof(double) * n / best, omp_get_max_threads(), a[n / 2]);
    return 0;
}
"""


def c_triad(llc_bytes):
    """Best triad byte/s of the C OpenMP program (STREAM counting), or None without a C compiler."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = pathlib.Path(tmp) / "triad.c", pathlib.Path(tmp) / "triad"
        src.write_text(TRIAD_C)
        subprocess.run([cc, "-O3", "-march=native", "-fopenmp", str(src), "-o", str(exe)], check=True)
        n = max(int(4 * llc_bytes / 3 / 8), 8 * 2**20)
        rate, threads, _ = subprocess.run([str(exe), str(n)], check=True, capture_output=True,
                                          text=True).stdout.split()
    return float(rate), int(threads)


def load():
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "n/a"


def main(runs=3):
    profiles = []
    for i in range(runs):
        print(f"--- run {i + 1} of {runs} (load {load()})", flush=True)
        profiles.append(rl.measure.measure_machine(progress=False))
        print(profiles[-1].summary(), flush=True)
    print("--- agreement across runs ((max - min) / median)")
    figures = {f"{k} bandwidth": [p.bandwidth[k] for p in profiles] for k in profiles[0].bandwidth}
    figures |= {f"{d} peak": [p.flops[d] for p in profiles] for d in profiles[0].flops}
    figures["tiny-call overhead"] = [p.overhead_per_call for p in profiles]
    figures["memory roof"] = [p.accelerator.mem_bandwidth for p in profiles]
    if runs > 1:
        for name, values in figures.items():
            print(f"  {name:>20}: {rl.measure.agreement(values):6.1%}   " + "  ".join(f"{v:.4g}" for v in values))
    print(f"  wall time per run: {', '.join(f'{p.seconds:.1f} s' for p in profiles)} (target < 20 s)")
    print(f"--- C OpenMP triad (load {load()})")
    result = c_triad(profiles[0].llc_bytes)
    if result is None:
        print("  no C compiler found; skipped")
        return
    rate, threads = result
    roof = max(p.accelerator.mem_bandwidth for p in profiles)
    print(f"  C triad: {rate / 1e9:.2f} GB/s on {threads} OpenMP threads; library memory roof {roof / 1e9:.2f} GB/s; "
          f"ratio {roof / rate:.2f} (target >= 0.85)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
