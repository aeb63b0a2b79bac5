"""Figures the chapters draw with the library: labels that overlap neither each other nor the plotted lines
(roofs, ridge levels, cursors), and static figures no wider than a laptop's output area (issue 12)."""

import base64
import json
import struct
from pathlib import Path as FilePath

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402
from matplotlib.path import Path  # noqa: E402

import roofline_lib as rl  # noqa: E402
from roofline_lib.specs.hardware import Accelerator  # noqa: E402

NOTEBOOKS = FilePath(__file__).resolve().parent.parent / "notebooks"
MAX_WIDTH_PX = 880   # a notebook's output area in a 1366 px JupyterLab with the file browser open is ~930 px
NOTEBOOK_DPI = 110   # the dpi the chapters' static explorer figures are stored at


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _labels(fig, renderer):
    """(name, box) of every text drawn inside the axes, and of every legend."""
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for ax in fig.axes for t in ax.texts
             if t.get_text() and t.get_visible()]
    boxes += [("legend", ax.get_legend().get_window_extent(renderer)) for ax in fig.axes if ax.get_legend()]
    return boxes


def _drawn_lines(fig):
    """(name, display-space vertices) of every line drawn with a line style, clipped to nothing (axes only)."""
    out = []
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_visible() or line.get_linestyle() in ("None", "none", "", " "):
                continue
            xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
            if len(xy) < 2:
                continue
            xy = line.get_transform().transform(xy)
            xy = xy[np.isfinite(xy).all(axis=1)]
            name = line.get_label() if not line.get_label().startswith("_") else f"line {ax.get_lines().index(line)}"
            out.append((name, ax.get_window_extent(), xy))
    return out


def _markers(fig):
    """(name, display point) of every marker drawn (ridge dots, workload squares, measured stars)."""
    out = []
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_visible() or line.get_marker() in (None, "None", "none", "", " "):
                continue
            xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
            for point in line.get_transform().transform(xy):
                if np.isfinite(point).all() and ax.get_window_extent().contains(*point):
                    out.append((f"marker of {line.get_label()}", point))
    return out


def _overlaps(fig):
    """Pairs (label, label, line or marker) whose boxes overlap, that a line runs through, or that cover a
    marker's centre; [] when all is clear."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = _labels(fig, renderer)
    pairs = [(a, b) for i, (a, box_a) in enumerate(labels) for b, box_b in labels[i + 1:] if box_a.overlaps(box_b)]
    for text, box in labels:
        for name, centre in _markers(fig):
            if box.contains(*centre):
                pairs.append((text, name))
        for name, axes_box, xy in _drawn_lines(fig):
            clipped = box.intersection(box, axes_box)  # a line is drawn only inside its axes
            if clipped is not None and Path(xy).intersects_bbox(clipped, filled=False):
                pairs.append((text, name))
    return pairs


def _png_width(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])[0]


# ------------------------------------------------------------------ the checker itself

def test_the_checker_sees_a_label_on_a_line_and_a_label_on_a_label():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="diagonal")
    ax.text(0.5, 0.5, "on the line")
    ax.text(0.05, 0.9, "clear")
    assert _overlaps(fig) == [("on the line", "diagonal")]
    ax.text(0.06, 0.9, "on clear")
    assert ("clear", "on clear") in _overlaps(fig)


# ------------------------------------------------------------------ chapter 01's roofline_plot

def _chapter_01_roofline(**kwargs):
    workloads = [("vector add", rl.vector_add(1e8, "fp32")),
                 ("example kernel", rl.Workload("example kernel", 1.8e12, 10e9, "bf16")),
                 ("memory-bound kernel", rl.Workload("m", 2e9, 1e9, "bf16")),
                 ("compute-bound kernel", rl.Workload("c", 2e13, 1e9, "bf16"))]
    return rl.plotting.roofline_plot(["A100 80GB SXM4", "H200"], "bf16", workloads=workloads,
                                     intensity_range=(0.01, 1e5), title="Dense bf16 rooflines", **kwargs)


def test_chapter_01_roofline_labels_keep_clear_of_the_ridge_labels_and_the_lines():
    fig, ax = _chapter_01_roofline(workload_labels="bottom")
    ax.legend(loc="upper left", fontsize=8)               # as the notebook draws it (the legend is its choice)
    assert [pair for pair in _overlaps(fig) if "legend" not in pair] == []
    plt.close(fig)
    fig, _ = _chapter_01_roofline()                       # the default: hung from the top, over the ridge labels
    assert ("ridge 153", "example kernel") in _overlaps(fig)


@pytest.mark.parametrize("chips,kwargs", [(["H100", "H200"], {"intensity_range": (0.5, 2e3)}),   # chapter 06
                                          (["A100", "H200"], {"achieved": True}),                 # chapter 02
                                          (["A100", "H200"], {})])
def test_ridge_labels_keep_clear_of_each_other_and_the_roofs(chips, kwargs):
    """Two chips with one peak (H100 and H200: ridges 295 and 206 on one flat roof) used to get their ridge
    labels drawn over each other."""
    fig, _ = rl.plotting.roofline_plot(chips, "bf16", **kwargs)
    assert _overlaps(fig) == []


def test_workload_labels_is_checked():
    with pytest.raises(ValueError, match="'top' or 'bottom'"):
        rl.plotting.roofline_plot(["H200"], workload_labels="left")


# ------------------------------------------------------------------ chapter 07's measured points

def _machine(name, flops, bandwidth):
    return Accelerator(name=name, peak_flops_by_dtype={"fp64": flops}, mem_bandwidth=bandwidth, mem_capacity=1e11)


# chapter 07's stored figure: a 160 GFLOP/s machine with 33 GB/s DRAM and 135 GB/s cache roofs, and kernels
# measured on it; the large matmuls sit at the flat roof (the largest a little above it, as a roof measured
# on a busy machine allows), where a label hung below-right of the star by its baseline ran into the roof line.
CHAPTER_07_POINTS = [("vector add", 0.042, 0.66e9), ("dot", 0.125, 4.09e9), ("sum", 0.125, 2.21e9),
                     ("matmul 8", 0.667, 1.48e9), ("matmul 32", 2.67, 41e9), ("matmul 128", 10.7, 84e9),
                     ("matmul 512", 42.7, 146e9), ("matmul 1024", 85.3, 178e9)]


# a later run (183 GFLOP/s, 34.7 and 137 GB/s roofs): matmul 512 and 1024 close together under the roof, where a
# label below-right of the 512 star lay under the 1024 star
CHAPTER_07_RERUN = [("vector add", 0.042, 0.67e9), ("dot", 0.125, 4.14e9), ("sum", 0.125, 2.3e9),
                    ("matmul 8", 0.667, 1.49e9), ("matmul 32", 2.667, 40.6e9), ("matmul 128", 10.667, 96.98e9),
                    ("matmul 512", 42.667, 151.45e9), ("matmul 1024", 85.333, 164.57e9)]


@pytest.mark.parametrize("points, peak, dram_bw, cache_bw", [
    (CHAPTER_07_POINTS, 160e9, 33e9, 135e9), (CHAPTER_07_RERUN, 182.6e9, 34.65e9, 137.3e9),
    # a point above the DRAM roof (its data in cache) and one at the ridge
    ([("in cache", 0.5, 30e9), ("at the ridge", 4.85, 160e9)], 160e9, 33e9, 135e9)])
def test_measured_point_labels_keep_clear_of_the_roofs(points, peak, dram_bw, cache_bw):
    dram, cache = _machine("this machine (measured)", peak, dram_bw), _machine("cache roof (measured)", peak, cache_bw)
    fig, ax = rl.plotting.roofline_plot([dram, cache], "fp64", measured_points=points, intensity_range=(0.05, 1e3),
                                        title="measured kernels on this machine's measured fp64 roofs")
    assert _overlaps(fig) == []
    # the check can fail: the label chapter 07 used to draw (5 points right, 10 below, by its baseline)
    label = next(t for t in ax.texts if t.get_text() == "matmul 1024") if points is CHAPTER_07_POINTS else None
    if label is not None:
        label.set_position((5, -10))
        label.set_verticalalignment("baseline")
        assert ("matmul 1024", "this machine (measured) (fp64)") in _overlaps(fig)


# ------------------------------------------------------------------ every explorer's static figure

EXPLORERS = {"02 roofline": "RooflineExplorer", "03 matmul": "MatmulExplorer", "04 attention": "AttentionExplorer",
             "05 LLM": "LLMExplorer", "09 comms": "CommsExplorer", "11 serving": "ServingExplorer"}


@pytest.fixture(params=list(EXPLORERS), scope="module")
def explorer(request):
    return getattr(rl.widgets, EXPLORERS[request.param])()


def test_explorer_static_figure_has_no_overlapping_labels(explorer):
    explorer.static_image(dpi=NOTEBOOK_DPI)
    assert _overlaps(explorer.fig) == []


def test_explorer_static_figure_fits_the_output_area(explorer):
    width = _png_width(explorer.static_image(dpi=NOTEBOOK_DPI).data)
    assert width <= MAX_WIDTH_PX
    assert explorer.fig.get_figwidth() * NOTEBOOK_DPI <= MAX_WIDTH_PX  # drawn at full dpi, not shrunk to fit


def test_static_image_never_exceeds_the_width_even_at_a_high_dpi(explorer):
    width = _png_width(explorer.static_image(dpi=200).data)
    assert width <= MAX_WIDTH_PX


def test_the_ridge_labels_used_to_run_over_the_other_roof():
    """02's explorer at its defaults with the old placement (right-aligned, above the ridge): the A100's ridge
    label ran over the H200's roof. The check sees it."""
    explorer = rl.widgets.RooflineExplorer()
    explorer.static_image(dpi=NOTEBOOK_DPI)
    for slot, label in enumerate(explorer.roof.ridge_labels):
        label.set_position((-4, 6 + 11 * slot))
        label.set_horizontalalignment("right")
        label.set_verticalalignment("baseline")
    assert ("A100 ridge 153", "A100 80GB SXM4 (bf16)") not in _overlaps(explorer.fig)
    assert ("A100 ridge 153", "H200 SXM (bf16)") in _overlaps(explorer.fig)


# ------------------------------------------------------------------ what the notebooks store

def _explorer_cells():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        for i, cell in enumerate(cells):
            if "explorer" in cell.get("metadata", {}).get("tags", []):
                yield pytest.param(path.name, cells, i, id=f"{path.stem}-cell{i}")


@pytest.mark.parametrize("name,cells,index", list(_explorer_cells()))
def test_stored_static_figure_beside_each_explorer_fits_the_output_area(name, cells, index):
    before = cells[index - 1]
    pngs = [o["data"]["image/png"] for o in before.get("outputs", []) if "image/png" in o.get("data", {})]
    assert pngs, f"{name}: the cell before explorer cell {index} shows no static figure"
    widths = [_png_width(base64.b64decode(png)) for png in pngs]
    assert max(widths) <= MAX_WIDTH_PX, f"{name}: static figure {widths} px wide"
