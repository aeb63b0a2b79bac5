"""serving.queueing: the M/D/1 wait against hand values and against its own simulation."""

import numpy as np
import pytest

from roofline_lib.serving import queueing as q


def test_md1_by_hand():
    # rho = 20 x 0.027 = 0.54; W = 0.54 x 0.027 / (2 x 0.46) = 15.85 ms
    assert q.utilisation(20, 0.027) == pytest.approx(0.54)
    assert q.md1_wait(20, 0.027) == pytest.approx(0.54 * 0.027 / 0.92)
    assert q.md1_ttft(20, 0.027) == pytest.approx(0.54 * 0.027 / 0.92 + 0.027)
    np.testing.assert_allclose(q.md1_wait(np.array([10.0, 30.0]), 0.027), [0.27 * 0.027 / 1.46, 0.81 * 0.027 / 0.38])


@pytest.mark.parametrize("rate", [5.0, 20.0, 30.0])
def test_simulation_agrees_with_the_formula(rate):
    waits = q.simulate_fifo(q.poisson_arrivals(rate, 100_000, seed=3), 0.027)
    assert waits[1000:].mean() == pytest.approx(q.md1_wait(rate, 0.027), rel=0.06)


def test_simulated_queue_by_hand():
    # arrivals at 0, 1, 1.5, 5 s; service 2 s: starts 0, 2, 4, 6 -> waits 0, 1, 2.5, 1
    np.testing.assert_allclose(q.simulate_fifo([0, 1, 1.5, 5], 2.0), [0, 1, 2.5, 1])


def test_shared_queue_by_hand():
    # two servers, service 2 s, arrivals at 0, 0.5, 1, 1.5, 5: starts 0, 0.5, 2, 2.5, 5 -> waits 0, 0, 1, 1, 0
    np.testing.assert_allclose(q.simulate_fifo([0, 0.5, 1, 1.5, 5], 2.0, servers=2), [0, 0, 1, 1, 0])


def test_shared_queue_against_erlang_c():
    # M/M/c with c = 2, rate 1.5/s, mean service 1 s (a = 1.5, rho = 0.75): Erlang C
    # P(wait) = (a^c / c!) / (1 - rho) / (sum_{k<c} a^k / k! + (a^c / c!) / (1 - rho)) = 2.25/2/0.25 / (2.5 + 4.5)
    # = 9/14, and the mean wait P(wait) x mean service / (c - a) = (9/14) / 0.5 = 9/7 s
    arrivals = q.poisson_arrivals(1.5, 200_000, seed=5)
    service = np.random.default_rng(6).exponential(1.0, arrivals.size)
    waits = q.simulate_fifo(arrivals, service, servers=2)[2000:]
    assert np.mean(waits > 0) == pytest.approx(9 / 14, rel=0.03)
    assert waits.mean() == pytest.approx(9 / 7, rel=0.05)


def test_overload_and_bad_input_refused():
    with pytest.raises(ValueError, match="cannot keep up.*below 1 / service_s = 37.04"):
        q.md1_wait(40, 0.027)
    with pytest.raises(ValueError, match="sorted"):
        q.simulate_fifo([1.0, 0.5], 0.1)
    with pytest.raises(ValueError, match="servers"):
        q.simulate_fifo([0.0, 1.0], 0.1, servers=0)
    with pytest.raises(ValueError, match="rate"):
        q.md1_wait(-1, 0.027)


# ---------------------------------------------------------------- the whole distribution of the M/D/1 wait

def _erlang_cdf(rho, t, digits=80):
    """Erlang's series for P(W <= t), service time 1 and rate rho, summed in exact decimal arithmetic (its terms
    alternate and grow like exp(rho t), so floats cannot sum it beyond small t; 80 digits can)."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = digits
        lam, t = Decimal(rho), Decimal(t)
        total, k, factorial = Decimal(0), 0, Decimal(1)
        while k <= t:
            x = lam * (k - t)
            total += (x**k if k else Decimal(1)) / factorial * (lam * (t - k)).exp()
            k += 1
            factorial *= k
        return float((1 - lam) * total)


@pytest.mark.parametrize("rho", [0.3, 2 / 3, 0.9])
@pytest.mark.parametrize("t", [0.0, 0.5, 1.0, 2.7, 7.3, 15.5, 40.2])
def test_cdf_against_erlangs_series_in_exact_arithmetic(rho, t):
    assert q.md1_wait_cdf(rho / 0.02, 0.02, t * 0.02) == pytest.approx(_erlang_cdf(rho, t), abs=1e-12)


def test_cdf_and_quantile_by_hand():
    # below one service time only the k = 0 term is there: P(W <= t) = (1 - rho) e^(lambda t)
    rho = 0.5
    assert q.md1_wait_cdf(rho, 1.0, 0.0) == pytest.approx(0.5)
    assert q.md1_wait_cdf(rho, 1.0, 1.0) == pytest.approx(0.5 * np.exp(0.5))
    # between D and 2D: (1 - rho) (e^(lambda t) - lambda (t - D) e^(lambda (t - D)))
    assert q.md1_wait_cdf(rho, 1.0, 1.5) == pytest.approx(0.5 * (np.exp(0.75) - 0.25 * np.exp(0.25)))
    # so the 0.6-quantile solves 0.5 e^(0.5 t) = 0.6: t = 2 ln 1.2 service times (here 3 s each)
    assert q.md1_wait_quantile(rho / 3, 3.0, 0.6) == pytest.approx(3 * 2 * np.log(1.2), rel=1e-12)


def test_p99_at_two_thirds_load_by_bisection_of_erlangs_series():
    lo, hi = 5.0, 6.0  # P(W <= 5) < 0.99 < P(W <= 6) at rho = 2/3
    assert _erlang_cdf(2 / 3, lo) < 0.99 < _erlang_cdf(2 / 3, hi)
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _erlang_cdf(2 / 3, mid) >= 0.99 else (mid, hi)
    assert q.md1_wait_quantile(2 / 3, 1.0, 0.99) == pytest.approx(hi, rel=1e-9)
    assert 5.70 < hi < 5.71  # the p99 wait at rho = 2/3: about 5.7 service times


def test_no_wait_below_the_idle_share():
    # a share 1 - rho of the requests find the server idle: every quantile up to 1 - rho is 0
    assert q.md1_wait_quantile(0.3, 1.0, 0.5) == 0.0
    assert q.md1_wait_quantile(0.3, 1.0, 0.7) == 0.0
    assert q.md1_wait_quantile(0.3, 1.0, 0.7001) > 0


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.8])
def test_quantiles_against_the_simulation(rho):
    # 200,000 Poisson arrivals: the simulated share of waits within the exact quantile is q within 0.015
    # (0.003 for the p99), and the simulated quantile is the exact one within 5 % (seeds 0-3 all pass with
    # half these margins)
    service = 0.027
    waits = q.simulate_fifo(q.poisson_arrivals(rho / service, 200_000, seed=0), service)[1000:]
    for level, tol in ((0.5, 0.015), (0.9, 0.015), (0.99, 0.003)):
        exact = q.md1_wait_quantile(rho / service, service, level)
        # (where q <= 1 - rho the quantile is 0, and the share waiting nothing is 1 - rho)
        assert np.mean(waits <= exact) == pytest.approx(max(level, 1 - rho), abs=tol)
        if exact == 0:
            assert np.quantile(waits, level) == 0
        else:
            assert np.quantile(waits, level) == pytest.approx(exact, rel=0.05)


@pytest.mark.parametrize("rho", [0.4, 0.8])
def test_the_distribution_has_the_pollaczek_khinchine_mean(rho):
    # E[W] = integral of P(W > t) dt; the trapezoid on a grid that holds every multiple of D (where the
    # density has kinks), up to where the tail is below 1e-12
    t = np.linspace(0.0, 80.0, 80 * 200 + 1)
    tail = 1 - q.md1_wait_cdf(rho, 1.0, t)
    assert tail[-1] < 1e-12
    assert np.sum((tail[1:] + tail[:-1]) / 2 * np.diff(t)) == pytest.approx(q.md1_wait(rho, 1.0), rel=1e-5)


def test_quantile_near_full_load():
    # rho = 0.999: the p99 needs some 2,300 requests' worth of the distribution, summed without cancellation; the
    # mean wait there is 499.5 service times, and the p99 about 4.6 times the mean (ln 100 = 4.6 for the
    # exponential tail heavy traffic tends to)
    p99 = q.md1_wait_quantile(0.999, 1.0, 0.99)
    assert 4.5 < p99 / q.md1_wait(0.999, 1.0) < 4.7
    assert q.md1_wait_cdf(0.999, 1.0, p99) == pytest.approx(0.99, abs=1e-9)


def test_quantile_is_vectorised_over_rate():
    rates = np.array([10.0, 20.0, 30.0])
    np.testing.assert_allclose(q.md1_wait_quantile(rates, 0.027, 0.9),
                               [q.md1_wait_quantile(r, 0.027, 0.9) for r in rates])
    assert np.all(np.diff(q.md1_wait_quantile(rates, 0.027, 0.9)) > 0)


def test_max_rate_for_a_wait_target():
    # mean: rho / (2 (1 - rho)) = 1 service time -> rho = 2/3 (the chapter's rule for TTFT <= 2 S)
    assert q.md1_max_rate(0.03, 0.03) == pytest.approx(2 / 3 / 0.03)
    # p99 wait <= 1 service time: (1 - rho) e^rho = 0.99, solved here by bisection on the closed form
    lo, hi = 0.0, 0.5
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (1 - mid) * np.exp(mid) >= 0.99 else (lo, mid)
    assert q.md1_max_rate(0.03, 0.03, q=0.99) * 0.03 == pytest.approx(lo, abs=1e-8)
    # and the rate found meets the target, a slightly higher one does not
    rate = q.md1_max_rate(0.03, 0.1, q=0.9)
    assert q.md1_wait_quantile(rate, 0.03, 0.9) <= 0.1 + 1e-9 < q.md1_wait_quantile(rate * 1.001, 0.03, 0.9)


@pytest.mark.parametrize("call, message", [
    (lambda: q.md1_wait_quantile(40, 0.027, 0.99), "cannot keep up.*below 1 / service_s"),
    (lambda: q.md1_wait_quantile(10, 0.027, 1.0), "q must be a probability strictly between 0 and 1"),
    (lambda: q.md1_wait_quantile(10, 0.027, 0.0), "q must be a probability strictly between 0 and 1"),
    (lambda: q.md1_wait_quantile(10, 0.027, 99), "got 99"),
    (lambda: q.md1_wait_quantile(10, 0.027, "p99"), "q must be a probability"),
    (lambda: q.md1_wait_quantile(10, 0.027, 1 - 1e-12), "too close to 1: quantiles are computed up to q = 1 - 1e-9"),
    (lambda: q.md1_wait_quantile(0.99999, 1.0, 0.99), "rho = 0.99999 is too close to 1"),
    (lambda: q.md1_wait_cdf(10, 0.027, -1.0), "t \\(seconds\\) must be finite and >= 0, got -1.0"),
    (lambda: q.md1_max_rate(0.027, 0.0), "wait_s must be finite and > 0"),
    (lambda: q.md1_max_rate(0.027, 0.01, q=1.5), "q must be a probability"),
])
def test_quantile_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
