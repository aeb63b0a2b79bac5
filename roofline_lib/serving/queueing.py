"""Queues: the time a request waits before its prefill starts, as the arrival rate rises.

    rl.serving.queueing.md1_wait(rate, service_s)        # mean wait, Poisson arrivals, one server, fixed service
    rl.serving.queueing.simulate_fifo(arrivals, service_s)  # the same by simulation, for any arrival times

A server that prefills one prompt at a time, each taking the same ``service_s`` seconds, with requests arriving
at random (a Poisson process of ``rate`` per second) is the M/D/1 queue. Its utilisation is rho = rate x
service_s; the mean wait before service is the Pollaczek-Khinchine formula for a deterministic service time,
W = rho x service_s / (2 (1 - rho)), so the time to first token is W + service_s and grows without bound as rho
approaches 1. ``simulate_fifo`` checks the formula (and handles bursts the formula does not).
"""

from __future__ import annotations

import numpy as np

from ..core.checks import non_negative, positive


def utilisation(rate, service_s):
    """rho = rate x service_s: the share of the time the server is busy.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    return positive("rate (requests/s)", rate) * positive("service_s", service_s)


def md1_wait(rate, service_s):
    """Mean seconds a request waits in an M/D/1 queue: rho x service_s / (2 (1 - rho)). Vectorised; a rate at
    or beyond the server's capacity (rho >= 1) has no steady state and is refused.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    rho = utilisation(rate, service_s)
    if np.any(np.asarray(rho) >= 1):
        raise ValueError(f"rate x service_s = {np.max(rho):.3g} >= 1: the server cannot keep up and the queue grows "
                         f"without bound; give a rate below 1 / service_s = {1 / np.min(service_s):.4g} per second")
    result = rho * np.asarray(service_s, float) / (2 * (1 - rho))
    return result.item() if np.ndim(result) == 0 else result


def md1_ttft(rate, service_s):
    """Mean time to first token behind an M/D/1 prefill queue: the wait, then the prefill itself.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    result = md1_wait(rate, service_s) + np.asarray(service_s, float)
    return result.item() if np.ndim(result) == 0 else result


def poisson_arrivals(rate, n, seed=0):
    """``n`` arrival times (s) of a Poisson process of ``rate`` per second (exponential gaps), reproducibly.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    rate = positive("rate (requests/s)", rate)
    n = int(positive("n", n, integer=True))
    return np.cumsum(np.random.default_rng(seed).exponential(1 / rate, n))


def simulate_fifo(arrivals, service_s):
    """Waits (s) of requests arriving at ``arrivals`` (sorted times) at one first-come-first-served server that
    takes ``service_s`` seconds for each (a number, or one per request).

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    arrivals = np.asarray(arrivals, float)
    if arrivals.ndim != 1 or arrivals.size == 0 or not np.all(np.isfinite(arrivals)) or np.any(np.diff(arrivals) < 0):
        raise ValueError("arrivals must be a non-empty, sorted 1-D sequence of finite times (s)")
    service = np.broadcast_to(np.asarray(non_negative("service_s", service_s), float), arrivals.shape)
    waits = np.empty_like(arrivals)
    free = -np.inf  # when the server finishes its current request
    for i, (t, s) in enumerate(zip(arrivals, service, strict=True)):
        start = max(t, free)
        waits[i] = start - t
        free = start + s
    return waits


__all__ = ["md1_ttft", "md1_wait", "poisson_arrivals", "simulate_fifo", "utilisation"]
