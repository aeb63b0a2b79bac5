"""The serving explorer moves its artists in place, reads out what rl.serving computes, and its cached
redraw equals a full draw."""

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

import roofline_lib as rl  # noqa: E402
from roofline_lib import serving  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_readout_follows_the_library():
    e = rl.widgets.ServingExplorer()
    readout = e.update(model="Llama-2-7B", chip="A100 80GB SXM4", batch=64, prompt_len=512, output_len=256,
                       chunked=False, paged=True, k=0, acceptance=0.7)
    c = serving.continuous("llama-2-7b", "A100", 64, 512, 256)
    assert rl.widgets.eng(c.tpot, "s") in readout["TTFT / TPOT / end-to-end"]
    assert readout["output tokens/s per chip"].startswith(rl.widgets.eng(c.throughput_per_chip, "token/s"))
    x, y = e.curve_pt.get_data()
    assert x[0] == pytest.approx(c.tpot) and y[0] == pytest.approx(c.throughput_per_chip)
    # paged: 16-token pages of 768 positions; contiguous: 4096 reserved
    assert readout["sequences that fit"].startswith(str(rl.llm.max_batch("llama-2-7b", "A100", 768)))
    readout = e.update(model="Llama-2-7B", chip="A100 80GB SXM4", batch=64, prompt_len=512, output_len=256,
                       chunked=False, paged=False, k=0, acceptance=0.7)
    assert readout["sequences that fit"].startswith(str(rl.llm.max_batch("llama-2-7b", "A100", 4096)))


def test_the_main_slider_moves_the_readout_and_the_marker():
    e = rl.widgets.ServingExplorer().connect()
    before, point = e.readout.value, e.curve_pt.get_xdata()[0]
    e.controls["batch"].value = e.controls["batch"].value * 4
    assert e.readout.value != before and e.curve_pt.get_xdata()[0] != point
    png = e.static_image().data
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_fits_a_narrow_lab():
    e = rl.widgets.ServingExplorer()
    assert e.fig.get_size_inches()[0] * e.fig.dpi <= 900


def test_a_model_that_does_not_fit_is_refused_in_the_readout():
    e = rl.widgets.ServingExplorer().connect()
    e.controls["chip"].value = "L40S"
    e.controls["model"].value = "Llama-2-70B"
    assert "does not fit" in e.readout.value


def _pixels(fig):
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def test_cached_redraw_equals_a_full_draw():
    e = rl.widgets.ServingExplorer().connect()
    for name, value in [("batch", 100), ("k", 4), ("chunked", True), ("prompt_len", 2000), ("paged", False),
                        ("chip", "H200 SXM")]:
        e.controls[name].value = value
        cached = _pixels(e.fig)
        moving, e.fig.moving = e.fig.moving, []
        full = _pixels(e.fig)
        e.fig.moving = moving
        assert np.array_equal(cached, full), (name, value)
    e.fig.savefig(io.BytesIO(), format="svg")
