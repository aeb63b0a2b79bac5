"""Time intervals on the GPU: their union (busy time, over every stream at once), the gaps between, and the
overlap of two sets (communication that runs while compute runs)."""

import numpy as np


def union(starts, ends):
    """Merged, sorted, disjoint intervals covering the given ones: (starts, ends) arrays."""
    starts, ends = np.asarray(starts, float), np.asarray(ends, float)
    if starts.size == 0:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], np.maximum.accumulate(ends[order])
    # a new interval begins where a start lies after every earlier end
    new = np.r_[True, s[1:] > e[:-1]]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, s.size - 1]
    return s[first], e[last]


def length(starts, ends):
    """Time covered by the intervals [starts, ends), each instant counted once however many overlap there.

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    s, e = union(starts, ends)
    return float(np.sum(e - s))


def gaps(starts, ends):
    """The idle gaps between the merged intervals: (gap starts, gap lengths)."""
    s, e = union(starts, ends)
    return e[:-1], s[1:] - e[:-1]


def overlap(a, b):
    """Length of time covered by both interval sets ``a`` and ``b`` (each a (starts, ends) pair).

    Taught in chapter 15 (notebooks/15_diagnose_a_trace.ipynb)."""
    sa, ea = union(*a)
    sb, eb = union(*b)
    total, j = 0.0, 0
    for s, e in zip(sa, ea, strict=True):
        while j < sb.size and eb[j] <= s:
            j += 1
        k = j
        while k < sb.size and sb[k] < e:
            total += min(e, eb[k]) - max(s, sb[k])
            k += 1
    return total


__all__ = ["gaps", "length", "overlap", "union"]
