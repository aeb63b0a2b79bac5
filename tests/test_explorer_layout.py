"""The explorer base lays its figure out once and then freezes the layout (no layout pass per slider step)."""

import numpy as np
import pytest
from matplotlib import pyplot as plt
from matplotlib.layout_engine import PlaceHolderLayoutEngine

from roofline_lib.widgets import Explorer, log_slider


class LineExplorer(Explorer):
    def build(self):
        self.ax = self.fig.add_subplot()
        (self.line,) = self.ax.plot([1, 10], [1, 10])
        self.ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        self.ax.set_ylabel("attainable throughput")
        self.ax.set_title("a title that takes room")

    def update(self, x):
        self.line.set_data([1, x], [1, x])
        return {"x": f"{x:.3g}"}


def reference_position():
    """The same figure laid out by matplotlib's own constrained layout during a full draw."""
    fig = plt.figure(figsize=(6, 3.5), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([1, 10], [1, 10])
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable throughput")
    ax.set_title("a title that takes room")
    fig.canvas.draw()
    position = ax.get_position().bounds
    plt.close(fig)
    return position


def make(cls):
    return cls({"x": log_slider("x", 1, 100, 10)}, figsize=(6, 3.5))


def test_layout_is_computed_once_then_frozen():
    explorer = make(LineExplorer)
    assert isinstance(explorer.fig.get_layout_engine(), (type(None), PlaceHolderLayoutEngine))
    frozen = explorer.ax.get_position().bounds
    reference = reference_position()
    # the constrained box differs from matplotlib's default subplot box, so the comparison can fail
    assert reference != pytest.approx((0.125, 0.11, 0.775, 0.77), abs=1e-2)
    np.testing.assert_allclose(frozen, reference, atol=2e-3)
    explorer.controls["x"].value = 50
    explorer.refresh()
    explorer.fig.canvas.draw()
    np.testing.assert_allclose(explorer.ax.get_position().bounds, frozen)
    plt.close(explorer.fig)
