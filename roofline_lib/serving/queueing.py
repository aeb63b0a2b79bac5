"""Queues: the time a request waits before its prefill starts, as the arrival rate rises.

    rl.serving.queueing.md1_wait(rate, service_s)        # mean wait, Poisson arrivals, one server, fixed service
    rl.serving.queueing.simulate_fifo(arrivals, service_s)  # the same by simulation, for any arrival times
    rl.serving.queueing.simulate_fifo(arrivals, service_s, servers=2)  # two chips sharing one queue (M/D/2)
    rl.serving.queueing.md1_wait_quantile(rate, service_s, 0.99)  # the p99 wait (exact), and md1_wait_cdf
    rl.serving.queueing.md1_max_rate(service_s, wait_s, q=0.99)   # the highest rate whose p99 wait meets wait_s

A server that prefills one prompt at a time, each taking the same ``service_s`` seconds, with requests arriving
at random (a Poisson process of ``rate`` per second) is the M/D/1 queue. Its utilisation is rho = rate x
service_s; the mean wait before service is the Pollaczek-Khinchine formula for a deterministic service time,
W = rho x service_s / (2 (1 - rho)), so the time to first token is W + service_s and grows without bound as rho
approaches 1. ``simulate_fifo`` checks the formula (and handles bursts the formula does not).

The whole distribution of the wait, not only its mean, is known exactly (Erlang 1909; Crommelin 1932):

    P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/D)} (lambda (kD - t))^k / k! exp(lambda (t - kD))

with D = ``service_s`` and lambda = ``rate``. Its terms alternate and grow like exp(lambda t), so in floating
point it loses every digit once lambda t passes a few tens. ``md1_wait_cdf`` computes the same function from
sums of positive terms only (Franx 2001, "A simple solution for the M/D/c waiting time distribution", Operations
Research Letters 29, for c = 1): write t = kD + u with 0 <= u < D. A request waits at most t exactly when the
requests in the system D - u before it arrives (M of them) and those arriving in between (A, Poisson with mean
lambda (D - u)) number at most k + 1, or at most k when the server was idle (M = 0):

    P(W <= kD + u) = pi_0 P(A <= k) + sum_{m=1}^{k+1} pi_m P(A <= k + 1 - m),

where pi_m is the number in the system at a random time: the M/G/1 embedded chain's distribution, from the
level-crossing recursion pi_n a_0 = pi_0 abar_{n-1} + sum_{i=1}^{n-1} pi_i abar_{n-i} (a_j: P(j arrivals in
one service), abar_j = P(more than j)), also of positive terms. P(W = 0) = pi_0 = 1 - rho, so every quantile
q <= 1 - rho is 0. Accurate to about 1e-12 in the probability (tests: against Erlang's series in exact
decimal arithmetic, the mean, and the simulation).
"""

from __future__ import annotations

import heapq
import math

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


# the most positions of the number-in-system distribution a quantile may need (rho very close to 1 needs many)
_MAX_STATES = 50_000


def _check_rho(rho, service_s):
    if np.any(np.asarray(rho) >= 1):
        raise ValueError(f"rate x service_s = {np.max(rho):.3g} >= 1: the server cannot keep up and the queue grows "
                         f"without bound; give a rate below 1 / service_s = {1 / np.min(service_s):.4g} per second")


# the highest quantile level computed: the distribution is summed in floating point, good to about 1e-13 in
# probability, so a tail much thinner than that cannot be resolved
_MAX_LEVEL = 1 - 1e-9


def _quantile_level(q):
    if isinstance(q, bool) or not isinstance(q, (int, float, np.integer, np.floating)) or not 0 < q < 1:
        raise ValueError(f"q must be a probability strictly between 0 and 1 (0.99 for the p99), got {q!r}")
    if q > _MAX_LEVEL:
        raise ValueError(f"q = {q!r} is too close to 1: quantiles are computed up to q = 1 - 1e-9 (the p99.9999999)")
    return float(q)


def _poisson_pmf(mean, n):
    """P(j) for j = 0 .. n - 1 of a Poisson variable of ``mean`` (positive terms, in log space)."""
    j = np.arange(n, dtype=float)
    if mean == 0:
        return (j == 0).astype(float)
    log_factorial = np.concatenate(([0.0], np.cumsum(np.log(j[1:]))))  # log j!
    return np.exp(-mean + j * math.log(mean) - log_factorial)


class _MD1:
    """The number-in-system distribution of one M/D/1 queue at load ``rho``, grown as far as it is asked."""

    def __init__(self, rho):
        self.rho = rho
        self.pi = np.array([1 - rho])
        self._a = _poisson_pmf(rho, 64)
        self._abar = self._tail(self._a)

    @staticmethod
    def _tail(a):
        # P(A > j): the pmf summed from the far end (positive terms; no 1 - cumsum cancellation)
        rev = np.cumsum(a[::-1])[::-1]
        return np.append(rev[1:], 0.0)

    def grow(self, n):
        """Extend pi to n + 1 entries (pi_0 .. pi_n)."""
        have = self.pi.size
        if n < have:
            return
        n = max(n, min(2 * have, _MAX_STATES))  # grow geometrically: a search asks one more state at a time
        if n > _MAX_STATES:
            raise ValueError(f"rho = {self.rho:.6g} is too close to 1: the quantile needs more than {_MAX_STATES} "
                             "requests in the system to be resolved; give a lower rate")
        if self._a.size < n + 64:
            self._a = _poisson_pmf(self.rho, 2 * n + 64)
            self._abar = self._tail(self._a)
        pi = np.empty(n + 1)
        pi[:have] = self.pi
        a0, abar = self._a[0], self._abar
        # abar_j is exactly 0.0 beyond a few hundred (the Poisson tail underflows), so only the last `reach`
        # terms of the sum can be non-zero: the sum is O(n reach), not O(n^2), with the same value
        reach = int(np.flatnonzero(abar)[-1]) + 1 if abar.any() else 1
        for k in range(have, n + 1):
            # level crossing between k - 1 and k: pi_k a_0 = pi_0 abar_{k-1} + sum_{i=1}^{k-1} pi_i abar_{k-i}
            i0 = max(1, k - reach)
            pi[k] = (pi[0] * abar[k - 1] + np.dot(pi[i0:k], abar[k - i0:0:-1])) / a0
        self.pi = pi

    def cdf(self, t_over_d):
        """P(W <= t) for t = t_over_d service times (a float >= 0)."""
        if t_over_d < 0:
            return 0.0
        k = math.floor(t_over_d)
        u = t_over_d - k
        self.grow(k + 1)
        fa = np.cumsum(_poisson_pmf(self.rho * (1 - u), k + 2))  # P(A <= j), j = 0 .. k + 1
        pi = self.pi
        return min(1.0, float(pi[0] * fa[k] + np.dot(pi[1:k + 2], fa[k::-1])))

    def quantile(self, q):
        """The smallest t (in service times) with P(W <= t) >= q."""
        if q <= self.pi[0]:
            return 0.0
        # the service-time interval [k, k + 1) that holds the quantile: doubling, then bisection on whole k
        top = 1
        while self.cdf(top) < q:
            top *= 2
        low = top // 2  # cdf(low) < q <= cdf(top), or low = 0
        while top - low > 1:
            mid = (low + top) // 2
            low, top = (low, mid) if self.cdf(mid) >= q else (mid, top)
        lo, hi = float(low), float(top)
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.cdf(mid) >= q:
                hi = mid
            else:
                lo = mid
        return hi


def md1_wait_cdf(rate, service_s, t):
    """P(wait <= t) in an M/D/1 queue (FIFO, Poisson arrivals at ``rate`` per second, every service
    ``service_s`` seconds): exact, from sums of positive terms (see the module docstring). ``t`` in seconds
    may be an array; P(wait <= 0) = 1 - rho."""
    rho = utilisation(rate, service_s)
    if np.ndim(rho):
        raise ValueError("md1_wait_cdf takes one rate and one service_s (numbers); give t as the array")
    _check_rho(rho, service_s)
    t = non_negative("t (seconds)", t)
    queue = _MD1(rho)
    out = np.array([queue.cdf(x / service_s) for x in np.ravel(t)]).reshape(np.shape(t))
    return out.item() if out.ndim == 0 else out


def md1_wait_quantile(rate, service_s, q):
    """The ``q``-quantile (0 < q < 1; 0.99 for the p99) of the seconds a request waits in an M/D/1 queue:
    exact (the distribution of ``md1_wait_cdf``, inverted by bisection to ~1e-15 of a service time). A share
    1 - rho of the requests find the server idle and wait nothing, so q <= 1 - rho gives 0. Vectorised over
    rate (and service_s).

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    q = _quantile_level(q)
    rho = utilisation(rate, service_s)
    _check_rho(rho, service_s)
    rho_b, d_b = np.broadcast_arrays(np.asarray(rho, float), np.asarray(service_s, float))
    out = np.array([_MD1(float(r)).quantile(q) * d for r, d in zip(rho_b.ravel(), d_b.ravel(), strict=True)])
    out = out.reshape(rho_b.shape)
    return out.item() if out.ndim == 0 else out


def md1_max_rate(service_s, wait_s, q=None):
    """The highest arrival rate (requests/s) at which an M/D/1 queue of ``service_s`` seconds per request keeps
    its wait within ``wait_s`` seconds: on average (``q=None``: rho S / (2 (1 - rho)) = wait_s, solved for rho)
    or at the ``q``-quantile (``md1_wait_quantile``, found by bisection on the rate to 1e-9 of the server's
    capacity). Divide by 1 / service_s for the utilisation.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    service_s = positive("service_s", service_s)
    wait_s = positive("wait_s", wait_s)
    if np.ndim(service_s) or np.ndim(wait_s):
        raise ValueError("md1_max_rate takes one service_s and one wait_s (numbers)")
    if q is None:
        x = wait_s / service_s  # rho / (2 (1 - rho)) = x  ->  rho = 2x / (1 + 2x)
        return 2 * x / (1 + 2 * x) / service_s
    q = _quantile_level(q)
    lo, hi = 0.0, 1.0  # utilisation
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if mid == 0 or _MD1(mid).quantile(q) * service_s <= wait_s:
            lo = mid
        else:
            hi = mid
    return lo / service_s


def poisson_arrivals(rate, n, seed=0):
    """``n`` arrival times (s) of a Poisson process of ``rate`` per second (exponential gaps), reproducibly.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    rate = positive("rate (requests/s)", rate)
    n = int(positive("n", n, integer=True))
    return np.cumsum(np.random.default_rng(seed).exponential(1 / rate, n))


def simulate_fifo(arrivals, service_s, servers=1):
    """Waits (s) of requests arriving at ``arrivals`` (sorted times) at first-come-first-served servers that
    take ``service_s`` seconds for each (a number, or one per request). ``servers`` chips share the one queue
    (M/D/c when the arrivals are Poisson and the service fixed): each request starts on the first chip free.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    arrivals = np.asarray(arrivals, float)
    if arrivals.ndim != 1 or arrivals.size == 0 or not np.all(np.isfinite(arrivals)) or np.any(np.diff(arrivals) < 0):
        raise ValueError("arrivals must be a non-empty, sorted 1-D sequence of finite times (s)")
    service = np.broadcast_to(np.asarray(non_negative("service_s", service_s), float), arrivals.shape)
    servers = int(positive("servers", servers, integer=True))
    waits = np.empty_like(arrivals)
    free = [-np.inf] * servers  # a heap of the times each server finishes its current request
    for i, (t, s) in enumerate(zip(arrivals, service, strict=True)):
        start = max(t, free[0])
        waits[i] = start - t
        heapq.heapreplace(free, start + s)
    return waits


__all__ = [
    "md1_max_rate", "md1_ttft", "md1_wait", "md1_wait_cdf", "md1_wait_quantile", "poisson_arrivals", "simulate_fifo",
    "utilisation",
]
