"""Run the full machine measurement three times; print each result and how well they agree.

    PYTHONPATH=. python benchmarks/bench_measure.py [runs]

The 1-minute load average is printed beside each run: other programs sharing the cores
and the memory bus lower the figures and widen the spread.
"""

import os
import sys

import roofline_lib as rl


def main(runs=3):
    profiles = []
    for i in range(runs):
        print(f"--- run {i + 1} of {runs} (load {os.getloadavg()[0]:.2f})", flush=True)
        profiles.append(rl.measure.measure_machine(progress=False))
        print(profiles[-1].summary(), flush=True)
    print("--- agreement across runs ((max - min) / median)")
    figures = {f"{k} bandwidth": [p.bandwidth[k] for p in profiles] for k in profiles[0].bandwidth}
    figures |= {f"{d} matmul": [p.flops[d] for p in profiles] for d in profiles[0].flops}
    figures["tiny-call overhead"] = [p.overhead_per_call for p in profiles]
    figures["memory roof"] = [p.accelerator.mem_bandwidth for p in profiles]
    for name, values in figures.items():
        print(f"  {name:>20}: {rl.measure.agreement(values):6.1%}   " + "  ".join(f"{v:.4g}" for v in values))
    print(f"  wall time per run: {', '.join(f'{p.seconds:.1f} s' for p in profiles)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
