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


def test_overload_and_bad_input_refused():
    with pytest.raises(ValueError, match="cannot keep up.*below 1 / service_s = 37.04"):
        q.md1_wait(40, 0.027)
    with pytest.raises(ValueError, match="sorted"):
        q.simulate_fifo([1.0, 0.5], 0.1)
    with pytest.raises(ValueError, match="rate"):
        q.md1_wait(-1, 0.027)
