"""Figures the chapters 00-04 draw themselves: labels that do not overlap (issue 12)."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

import roofline_lib as rl  # noqa: E402


def _overlapping_texts(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for ax in fig.axes for t in ax.texts if t.get_text()]
    boxes += [("legend", ax.get_legend().get_window_extent(renderer)) for ax in fig.axes if ax.get_legend()]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:] if box_a.overlaps(box_b)]


def _chapter_01_roofline(**kwargs):
    workloads = [("vector add", rl.vector_add(1e8, "fp32")),
                 ("example kernel", rl.Workload("example kernel", 1.8e12, 10e9, "bf16")),
                 ("memory-bound kernel", rl.Workload("m", 2e9, 1e9, "bf16")),
                 ("compute-bound kernel", rl.Workload("c", 2e13, 1e9, "bf16"))]
    return rl.plotting.roofline_plot(["A100 80GB SXM4", "H200"], "bf16", workloads=workloads,
                                     intensity_range=(0.01, 1e5), title="Dense bf16 rooflines", **kwargs)


def test_chapter_01_roofline_labels_keep_clear_of_the_ridge_labels():
    fig, ax = _chapter_01_roofline(workload_labels="bottom")
    ax.legend(loc="upper left", fontsize=8)               # as the notebook draws it
    assert _overlapping_texts(fig) == []
    plt.close(fig)
    fig, _ = _chapter_01_roofline()                       # the default: hung from the top, over the ridge labels
    assert ("ridge 153", "example kernel") in _overlapping_texts(fig)
    plt.close(fig)


def test_workload_labels_is_checked():
    with pytest.raises(ValueError, match="'top' or 'bottom'"):
        rl.plotting.roofline_plot(["H200"], workload_labels="left")
