"""The explorers' update functions, without a browser: on the Agg canvas they must move the
artists, change the readout, agree with the library, and refuse bad input with ValueError."""

import io

import matplotlib
import matplotlib.image

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

import roofline_lib as rl  # noqa: E402
from roofline_lib.widgets import AttentionExplorer, LLMExplorer, MatmulExplorer, RooflineExplorer, eng, log_slider  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def xy(line):
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)


# ------------------------------------------------------------------ shared pieces

def test_eng_readouts():
    assert eng(2.5e12, "FLOP/s") == "2.5 TFLOP/s"
    assert eng(4.8e12, "B/s") == "4.8 TB/s"
    assert eng(3.3e-6, "s") == "3.3 µs"


def test_log_slider_refuses_bad_ranges():
    with pytest.raises(ValueError, match="log_slider 'x' needs 0 < low <= value <= high, got 10, 5, 1"):
        log_slider("x", 10, 1, 5)
    with pytest.raises(ValueError, match="log_slider 'x' needs 0 < low <= value <= high, got 0, 5, 10"):
        log_slider("x", 0, 10, 5)


@pytest.mark.parametrize("cls,slider", [(RooflineExplorer, "intensity"), (MatmulExplorer, "M"),
                                         (AttentionExplorer, "T")])
def test_main_slider_is_an_ipywidgets_slider_and_moves_the_readout(cls, slider):
    explorer = cls()
    box = explorer.widget()
    assert isinstance(box, ipywidgets.VBox)
    control = explorer.controls[slider]
    assert isinstance(control, (ipywidgets.FloatLogSlider, ipywidgets.SelectionSlider))
    assert isinstance(explorer.readout, ipywidgets.HTML)
    before = explorer.readout.value
    control.value = control.value * 8  # the observer runs refresh, as a drag in JupyterLab does
    assert explorer.readout.value != before
    png = explorer.static_image().data
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # the snapshot is the whole figure (axes, ticks, roofs), not just the moving artists
    drawn = matplotlib.image.imread(io.BytesIO(png))[..., :3] < 0.9
    assert drawn.mean() > 0.02


# ------------------------------------------------------------------ roofline

def test_roofline_point_sits_on_each_roof():
    explorer = RooflineExplorer()
    for intensity in (1.0, 100.0, 1000.0):
        readout = explorer.update(intensity=intensity, chip_a="A100", chip_b="H200", dtype="bf16")
        for slot, name in enumerate(("A100", "H200")):
            hw = rl.get_accelerator(name)
            x, y = xy(explorer.roof.points[slot])
            assert x[0] == intensity
            assert y[0] == pytest.approx(min(hw.peak_flops("bf16"), hw.mem_bandwidth * intensity))
        assert xy(explorer.roof.cursor)[0][0] == intensity
    # 100 FLOP/B is below both ridges (153, 206); 1000 is above both
    assert "memory-bound" in explorer.update(100.0, "A100", "H200", "bf16")["H200 SXM"]
    assert "compute-bound" in readout["H200 SXM"]


def test_roofline_chip_change_redraws_roofs_and_dtypes():
    explorer = RooflineExplorer().connect()
    roof_before = xy(explorer.roof.roofs[1])[1].copy()
    explorer.controls["chip_b"].value = "TPU v5e"
    assert set(explorer.controls["dtype"].options) == {"bf16", "int8"}
    assert explorer.controls["dtype"].value == "bf16"
    assert not np.allclose(xy(explorer.roof.roofs[1])[1], roof_before)
    assert xy(explorer.roof.roofs[1])[1].max() == pytest.approx(rl.get_accelerator("TPU v5e").peak_flops("bf16"))


def test_roofline_achieved_roof_is_below_the_datasheet_roof():
    explorer = RooflineExplorer(achieved=True)
    for slot in (0, 1):
        x, datasheet = xy(explorer.roof.roofs[slot])
        _, measured = xy(explorer.roof.achieved[slot])
        assert len(measured) == len(x) and np.all(measured < datasheet)


def test_roofline_refuses_bad_input():
    explorer = RooflineExplorer()
    with pytest.raises(ValueError, match="intensity must be a finite number > 0"):
        explorer.update(intensity=-1, chip_a="A100", chip_b="H200", dtype="bf16")
    with pytest.raises(ValueError, match="no fp8"):
        explorer.update(intensity=10, chip_a="A100", chip_b="H200", dtype="fp8")
    with pytest.raises(ValueError, match="unknown accelerator"):
        explorer.update(intensity=10, chip_a="A1000000", chip_b="H200", dtype="bf16")
    with pytest.raises(ValueError, match="do not both have a fp8 peak"):
        RooflineExplorer(chip_a="A100", dtype="fp8")


# ------------------------------------------------------------------ matmul

def test_matmul_point_and_readout_follow_the_library():
    explorer = MatmulExplorer()
    small = explorer.update(M=1, N=4096, K=4096, dtype="bf16")
    x_small = xy(explorer.roof.points[1])[0][0]
    big = explorer.update(M=8192, N=4096, K=4096, dtype="bf16")
    x_big = xy(explorer.roof.points[1])[0][0]
    assert x_small == pytest.approx(rl.matmul(1, 4096, 4096).intensity)
    assert x_big == pytest.approx(rl.matmul(8192, 4096, 4096).intensity)
    assert "memory-bound" in small["H200 SXM"] and "compute-bound" in big["H200 SXM"]
    # the readout's critical M is where the numeric intensity meets the ridge: 229 on the H200
    ridge = rl.get_accelerator("H200").ridge_point("bf16")
    m_star = ridge * 4096 / (4096 - 2 * ridge)
    assert f"critical M {m_star:.0f}" in big["H200 SXM"]
    # the M -> infinity line sits at NK/(N+K) = 2048
    assert xy(explorer.limit_line)[0][0] == pytest.approx(2048, rel=1e-6)


def test_matmul_fp8_hides_the_chip_without_fp8():
    explorer = MatmulExplorer()
    readout = explorer.update(M=256, N=4096, K=4096, dtype="fp8 in, bf16 out")
    assert "no fp8" in readout["A100 80GB SXM4"]
    assert len(xy(explorer.roof.points[0])[0]) == 0
    assert len(xy(explorer.roof.points[1])[0]) == 1
    w = rl.matmul(256, 4096, 4096, dtype="fp8", out_dtype="bf16")
    assert xy(explorer.roof.points[1])[0][0] == pytest.approx(w.intensity)


def test_matmul_refuses_bad_input():
    explorer = MatmulExplorer()
    with pytest.raises(ValueError, match="M must be a finite number >= 1, got 0"):
        explorer.update(M=0, N=16, K=16, dtype="bf16")
    with pytest.raises(ValueError, match="M must be a finite number >= 1, got nan"):
        explorer.update(M=float("nan"), N=16, K=16, dtype="bf16")
    with pytest.raises(ValueError, match="unknown matmul dtype"):
        explorer.update(M=16, N=16, K=16, dtype="bf17")


# ------------------------------------------------------------------ attention

def test_attention_prefill_crosses_and_decode_does_not():
    explorer = AttentionExplorer()
    prefill = explorer.update(T=4096, S=1, G=4, batch=1, mode="prefill (T = S)")
    assert xy(explorer.marker)[0][0] == 4096
    assert xy(explorer.marker)[1][0] == pytest.approx(rl.attention(1, 32, 8, 4096, 4096, 128).intensity)
    assert "compute-bound" in prefill["H200 SXM"]
    decode = explorer.update(T=4096, S=131072, G=4, batch=256, mode="decode (T = 1)")
    assert xy(explorer.marker)[0][0] == 131072
    assert xy(explorer.marker)[1][0] == pytest.approx(rl.attention(256, 32, 8, 1, 131072, 128).intensity)
    assert "memory-bound" in decode["H200 SXM"] and "memory-bound" in decode["A100 80GB SXM4"]


def test_attention_curves_follow_G():
    explorer = AttentionExplorer()
    explorer.update(T=64, S=64, G=1, batch=1, mode="prefill (T = S)")
    decode_mha = xy(explorer.decode_curve)[1].copy()
    explorer.update(T=64, S=64, G=8, batch=1, mode="prefill (T = S)")
    decode_gqa = xy(explorer.decode_curve)[1]
    # decode tends to G FLOP per bf16 byte (erratum 6)
    assert decode_mha[-1] == pytest.approx(1, rel=1e-3) and decode_gqa[-1] == pytest.approx(8, rel=1e-3)


def test_attention_batch_moves_time_not_intensity():
    explorer = AttentionExplorer()
    one = explorer.update(T=1, S=8192, G=4, batch=1, mode="decode (T = 1)")
    y_one = xy(explorer.marker)[1][0]
    many = explorer.update(T=1, S=8192, G=4, batch=64, mode="decode (T = 1)")
    assert xy(explorer.marker)[1][0] == y_one
    assert one["H200 SXM"] != many["H200 SXM"]


def test_attention_refuses_bad_input_and_shows_it_in_the_readout():
    explorer = AttentionExplorer()
    with pytest.raises(ValueError, match="divide"):
        explorer.update(T=16, S=16, G=3, batch=1, mode="prefill (T = S)")
    with pytest.raises(ValueError, match="causal"):
        explorer.update(T=64, S=16, G=4, batch=1, mode="T and S free", causal=True)
    with pytest.raises(ValueError, match="mode"):
        explorer.update(T=64, S=16, G=4, batch=1, mode="sideways")
    explorer.connect()
    explorer.controls["mode"].value = "T and S free"
    explorer.controls["causal"].value = True
    explorer.controls["S"].value = 16
    explorer.controls["T"].value = 64  # more queries than keys under a mask: refused, shown
    assert "causal" in explorer.readout.value and "color:#cf222e" in explorer.readout.value


# ------------------------------------------------------------------ the cached static layer

def _pixels(fig):
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


@pytest.mark.parametrize("cls,changes", [
    (RooflineExplorer, [("intensity", 3.0), ("chip_b", "TPU v5e"), ("intensity", 700.0), ("achieved", False)]),
    (MatmulExplorer, [("M", 2048), ("dtype", "fp8 in, bf16 out"), ("N", 256)]),
    (AttentionExplorer, [("T", 4096), ("G", 8), ("mode", "decode (T = 1)"), ("S", 64), ("causal", True)]),
    (LLMExplorer, [("batch", 16), ("batch", 23), ("context", 65536), ("chip", "A100 80GB SXM4"),
                   ("model", "Llama-2-7B"), ("weight_dtype", "int4")]),
    (rl.widgets.TrainingExplorer, [("n_chips", 2048), ("pp", 1), ("recompute", "full"), ("chip", "B200"),
                                   ("n_chips", 8), ("seq_len", 131072), ("zero_stage", 3)]),
    (rl.widgets.MoEExplorer, [("batch_per_chip", 16), ("ep", 8), ("imbalance", 1.5), ("chip", "H800 SXM5"),
                              ("two_batch_overlap", False), ("batch_per_chip", 1024)]),
])
def test_cached_redraw_equals_a_full_draw(cls, changes):
    """After every change (moving artists, or static ones such as roofs and curves), the picture drawn
    from the cached background is pixel for pixel the one a plain full draw gives."""
    explorer = cls().connect()
    for name, value in changes:
        explorer.controls[name].value = value
        cached = _pixels(explorer.fig)
        moving, explorer.fig.moving = explorer.fig.moving, []  # a plain matplotlib draw
        full = _pixels(explorer.fig)
        explorer.fig.moving = moving
        assert np.array_equal(cached, full), (name, value)
    explorer.fig.savefig(io.BytesIO(), format="svg")  # a vector renderer takes the plain path
    assert np.array_equal(_pixels(explorer.fig), full)


# ------------------------------------------------------------------ sliders: whole numbers, defaults on a step

ALL_EXPLORERS = ["RooflineExplorer", "MatmulExplorer", "AttentionExplorer", "LLMExplorer", "CommsExplorer",
                 "ServingExplorer", "TrainingExplorer", "MoEExplorer"]
# quantities that are counts or sizes: their sliders must give ints
WHOLE = {"M", "N", "K", "T", "S", "G", "batch", "context", "n_chips", "prompt_len", "output_len", "k", "batch_per_chip"}


def _sliders(explorer):
    return {name: c for name, c in explorer.controls.items()
            if isinstance(c, (ipywidgets.FloatLogSlider, ipywidgets.IntSlider, ipywidgets.FloatSlider,
                              ipywidgets.SelectionSlider))}


def _on_a_step(control):
    values = rl.widgets.controls.reachable(control)
    return any(v == control.value or (isinstance(v, float) and abs(v - control.value) <= 1e-9 * abs(v))
               for v in values)


@pytest.mark.parametrize("name", ALL_EXPLORERS)
def test_every_slider_default_is_a_value_the_slider_can_reach(name):
    explorer = getattr(rl.widgets, name)()
    sliders = _sliders(explorer)
    assert sliders, name
    for key, control in sliders.items():
        assert _on_a_step(control), (name, key, control.value)
        if key in WHOLE:
            assert type(control.value) is int, (name, key, control.value)
            assert all(type(v) is int for v in rl.widgets.controls.reachable(control)), (name, key)


@pytest.mark.filterwarnings("ignore:Passing unrecognized arguments:DeprecationWarning")  # ipympl's own Toolbar
def test_the_live_canvas_knows_its_size_before_the_browser_asks():
    """In a box, ipympl learns the canvas's size only from the browser's first message; a view drawn before that
    stayed 0 x 0 px on a loaded machine (chapter 14's explorer, last in the browser test). widget(), which every
    explorer shares, sets it first: the size of the picture the figure renders."""
    plt.switch_backend("module://ipympl.backend_nbagg")
    try:
        explorer = rl.widgets.MoEExplorer()
        explorer.widget()
        canvas = explorer.fig.canvas
        assert isinstance(canvas, ipywidgets.DOMWidget), type(canvas)
        buf = io.BytesIO()
        explorer.fig.savefig(buf, format="png", dpi="figure")
        height, width = matplotlib.image.imread(io.BytesIO(buf.getvalue())).shape[:2]
        assert canvas._size == pytest.approx((width, height), abs=1), (canvas._size, width, height)
    finally:
        plt.close("all")
        plt.switch_backend("Agg")


@pytest.mark.parametrize("name", ALL_EXPLORERS)
def test_readouts_use_engineering_units_not_exponents(name):
    """No '1.0e-6' in a readout: seconds, bytes and rates go through eng() (µs, GB, TFLOP/s)."""
    import re

    explorer = getattr(rl.widgets, name)().connect()
    texts = [str(explorer.readout_text())]
    for control in _sliders(explorer).values():  # each slider to its ends and back
        default = control.value
        for value in (rl.widgets.controls.reachable(control)[0], rl.widgets.controls.reachable(control)[-1]):
            control.value = value
            texts.append(str(explorer.readout_text()))
        control.value = default
    for text in texts:
        assert not re.search(r"\d[eE][+-]?\d", text), text


def test_the_checks_can_fail():
    assert not _on_a_step(ipywidgets.FloatLogSlider(value=50, min=-1, max=4, step=0.025))  # the old intensity slider
    assert not _on_a_step(ipywidgets.IntSlider(value=3, min=0, max=10, step=2))
    slider = log_slider("x", 0.1, 1e4, 50.0)  # the steps are laid through the default
    assert _on_a_step(slider) and slider.value == 50.0
    slider.value = 52.0  # set from code: moves to the nearest step
    assert _on_a_step(slider) and slider.value == pytest.approx(50 * 10 ** 0.025)
    assert slider.label == "53.0"  # the readout: 3 significant figures, no exponent


def test_int_log_slider_snaps_to_whole_steps_and_refuses_nonsense():
    from roofline_lib.widgets.controls import int_log_slider, log_steps

    assert log_steps(1, 16, per_octave=2) == [1, 2, 3, 4, 6, 8, 11, 16]
    control = int_log_slider("batch", 1, 1024, 16, per_octave=2)
    control.value = 100.0
    assert control.value == 91 and type(control.value) is int  # nearest step on the log scale
    with pytest.raises(Exception, match="needs a number"):
        control.value = "many"
    with pytest.raises(ValueError, match="whole value"):
        int_log_slider("batch", 1, 1024, 16.2)


def test_comms_explorer_starts_at_a_round_batch():
    explorer = rl.widgets.CommsExplorer()
    assert explorer.controls["batch"].value == 16
    assert "e-" not in str(explorer.readout_text())


def test_llm_explorer_updates_in_place():
    ex = LLMExplorer()
    first = dict(ex.last)
    widths = [b.get_width() for b in ex.bars]
    ex.controls["context"].value = 65536
    ex.controls["weight_dtype"].value = "int4"
    ex.refresh()
    assert ex.last != first
    kv = list(rl.llm.CATEGORIES).index("KV cache")
    assert ex.bars[kv].get_width() > widths[kv]  # a longer context reads more KV cache
    ex.controls["model"].value = "Llama-2-70B"
    ex.controls["chip"].value = "A100 80GB SXM4"
    assert "does NOT fit" in ex.refresh()["memory: weights + KV cache"]
