"""Which of the four bottlenecks dominates a trace, from the time each one can be charged with:

    overhead        the GPU's idle time inside the window (split gaps left out): nothing was queued
    communication   communication kernels' time with nothing else running (exposed, not hidden); where the
                    hidden communication still outlasts all other GPU work, a note says it is the critical path
    compute         GEMMs and attention with recorded shapes whose intensity is at or above the chip's ridge point
    memory          those below the ridge, and elementwise/normalisation kernels and memory copies (a few
                    FLOPs per byte at most: below every chip's ridge)

Kernels that cannot be placed (GEMMs and attention without recorded shapes, other) are reported as not placed.
The largest charge is the verdict; the evidence gives the numbers behind each, and what to try next names the
course's chapter for it. A trace without GPU work is diagnosed as CPU work.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from ..core.units import eng
from ..specs.hardware import get_accelerator
from .categories import ATTENTION, ELEMENTWISE, GEMM, MEMORY, OTHER
from .chips import chip_for

REGIMES = ("overhead", "memory", "compute", "communication")
NEXT_STEPS = {
    "overhead": "fewer launches or longer kernels: CUDA graphs, fusion (torch.compile), a larger batch "
                "(chapter 08)",
    "memory": "fewer bytes per result: lower-precision weights and KV cache, fusion, a larger batch "
              "(chapters 05 and 06)",
    "compute": "cheaper FLOPs or fewer of them: a faster format (fp8), no padded or repeated work "
               "(chapters 03, 06 and 12)",
    "communication": "hide or shrink the collectives: overlap them with compute on their own stream, fewer "
                     "bytes, a faster link or another parallel layout (chapters 09 and 13)",
    "cpu": "the GPU ran nothing here: profile with activities=[CPU, CUDA] on the GPU, or read the CPU "
           "operators as chapter 07 reads this machine",
    "nothing": "record a trace of the workload: rl.trace.profile_decode() or torch.profiler",
}


@dataclass
class Diagnosis:
    """``bottleneck``: "overhead", "memory", "compute", "communication", "cpu" (no GPU work) or "nothing";
    ``charged``: seconds charged to each of the four (kernels overlapping on several streams each charge their
    own time, so the charges can add up to more than the window); ``window_s``: the window less its split gaps;
    ``evidence`` and ``notes``: lines of numbers; ``next_steps``: what to try."""

    bottleneck: str
    charged: dict
    window_s: float
    evidence: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def next_steps(self):
        """What to try for this bottleneck, and the chapters that teach it."""
        return NEXT_STEPS[self.bottleneck]

    def share(self, regime):
        """The share of the window charged to ``regime``."""
        return self.charged[regime] / self.window_s if self.window_s else 0.0

    def __str__(self):
        head = f"bottleneck: {self.bottleneck}"
        if self.window_s:
            head += " (" + ", ".join(f"{r} {self.share(r):.0%}" for r in REGIMES) + " of the window)"
        lines = [head, *("  " + e for e in self.evidence), *("  note: " + n for n in self.notes),
                 f"  next: {self.next_steps}"]
        return "\n".join(lines)

    def __repr__(self):
        return f"Diagnosis({self.bottleneck!r})"


def _cpu_only(trace):
    charged = dict.fromkeys(REGIMES, 0.0)
    if not trace.ops:
        return Diagnosis("nothing", charged, 0.0, ["the trace recorded no GPU activity and no CPU operator"])
    # operators nest: charge each name its own time only where it is outermost on its thread
    busy, by_name, ends = 0.0, Counter(), {}
    for op in sorted(trace.ops, key=lambda o: (o.start, -o.duration)):
        key = (op.pid, op.tid)
        if op.start >= ends.get(key, float("-inf")):
            by_name[op.name] += op.duration
            busy += op.duration
            ends[key] = op.end
    top = ", ".join(f"{n} {eng(s, 's')}" for n, s in by_name.most_common(3))
    d = Diagnosis("cpu", charged, 0.0, [f"no GPU kernels: {len(trace.ops)} CPU operators, {eng(busy, 's')} in "
                                        f"outermost ones; most time: {top}"])
    if trace.counted:
        flops = sum(c.flops for c in trace.counted)
        d.notes.append(f"{len(trace.counted)} kernels ran under counter replay ({eng(flops, 'FLOP')} counted); "
                       "their durations are the replay's, not the kernels'")
    return d


def diagnose(trace, hw=None):
    """``trace``'s Diagnosis on ``hw`` (a chip or its name; default: the recorded device where the course has it)."""
    if not trace.kernels:
        return _cpu_only(trace)
    chip = get_accelerator(hw) if hw is not None else chip_for(trace.device_name)
    by_cat = trace.time_by_category()
    stats = trace.launch_stats()
    window = trace.busy_s + trace.idle_s
    charged = dict.fromkeys(REGIMES, 0.0)
    charged["overhead"] = trace.idle_s
    charged["communication"] = trace.communication_exposed_s
    charged["memory"] = by_cat[ELEMENTWISE] + by_cat[MEMORY]
    evidence = [f"GPU busy {trace.busy_share:.0%} of {eng(window, 's')}: idle {eng(trace.idle_s, 's')}; "
                + (f"{stats.kernels} kernels, median {eng(stats.median_s, 's')}, {stats.short_share:.0%} under 10 us"
                   if stats.kernels else "no kernels, only copies")
                + (f"; {stats.launches} launch calls, median {eng(stats.launch_cpu_s, 's')} of CPU each"
                   if stats.launches else "")
                + (f", one every {eng(stats.launch_interval_s, 's')}" if stats.launch_interval_s else "")]
    notes = []
    placed_gemm = placed_attention = 0.0
    if chip is None:
        notes.append(f"device {trace.device_name or '(none recorded)'} is not one of the course's chips: GEMMs not "
                     "placed on a roofline (pass hw)")
    else:
        rows = trace.placed(chip)
        for r in rows:
            charged[r.side] += r.row.seconds
            if r.row.kind == GEMM:
                placed_gemm += r.row.seconds
            else:
                placed_attention += r.row.seconds
        if rows:
            best = max(rows, key=lambda r: r.row.seconds)
            evidence.append(f"{len(rows)} kernels placed on {chip.name}'s roofline "
                            f"({eng(placed_gemm + placed_attention, 's')}); the longest, {best.row.shape} "
                            f"{best.row.dtype}, at {eng(best.row.flops_per_s, 'FLOP/s')} = {best.share_of_roof:.0%} "
                            f"of its roof ({best.side} side)")
            for side in ("compute", "memory"):
                on = [r for r in rows if r.side == side]
                if on:
                    seconds, share = sum(r.row.seconds for r in on), statistics.median(r.share_of_roof for r in on)
                    evidence.append(f"{side} side of the ridge: {len(on)} kernels, {eng(seconds, 's')}, a median "
                                    f"{share:.0%} of the roof")
    evidence.append("by category: " + ", ".join(f"{c} {eng(s, 's')}" for c, s in by_cat.items() if s > 0))
    if trace.communication_s:
        evidence.append(f"communication {eng(trace.communication_s, 's')}: {eng(trace.communication_overlapped_s, 's')}"
                        f" hidden behind other kernels, {eng(trace.communication_exposed_s, 's')} exposed")
    rest = trace.non_communication_s
    # a nanosecond of overlap is rounding where streams touch, not hiding
    if trace.communication_overlapped_s > 1e-9 and trace.communication_s > rest:
        # hidden is not removed: the longer of the two streams sets the step, whatever the exposed part
        notes.append(f"communication ran {eng(trace.communication_s, 's')}, longer than all other GPU work "
                     f"({eng(rest, 's')}): hidden behind it, yet the critical path; shortening it shortens the step")
    unplaced_gemm = max(by_cat[GEMM] - placed_gemm, 0.0)
    unplaced_attention = max(by_cat[ATTENTION] - placed_attention, 0.0)
    unplaced = unplaced_gemm + unplaced_attention + by_cat[OTHER]
    if unplaced > 0.05 * window:
        notes.append(f"{eng(unplaced, 's')} of kernels not placed (GEMMs and attention without recorded shapes, "
                     f"other; {eng(unplaced_gemm if unplaced_gemm > 1e-9 else 0, 's')} of it GEMM)")
    for start, length in trace.split_gaps:
        notes.append(f"a gap of {eng(length, 's')} at {eng(start, 's')} left out: a split trace or a paused profiler, "
                     "not idle time")
    verdict = max(REGIMES, key=lambda r: charged[r])
    return Diagnosis(verdict, charged, window, evidence, notes)


__all__ = ["Diagnosis", "NEXT_STEPS", "REGIMES", "diagnose"]
