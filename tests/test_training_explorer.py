"""The training explorer moves its bars in place and reads out what training.train_step computes."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

import roofline_lib as rl  # noqa: E402

SETTINGS = dict(model="Llama-3.1-8B", chip="H200 SXM", n_chips=256, seq_len=4096, batch_tokens=2**23, tp=2, pp=1,
                cp=1, micro_batch=2, zero_stage=3, recompute="none")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def widths(explorer, unit):
    return [(bar.get_x(), bar.get_width()) for bar in explorer.bars[unit]]


def test_update_moves_the_same_bars_and_reads_out_train_step():
    e = rl.widgets.TrainingExplorer()
    bars = {unit: list(patches) for unit, patches in e.bars.items()}
    line = e.capacity
    before = {unit: widths(e, unit) for unit in bars}
    readout = e.update(**SETTINGS)
    assert all(a is b for unit in bars for a, b in zip(e.bars[unit], bars[unit], strict=True))
    assert e.capacity is line
    assert all(widths(e, unit) != before[unit] for unit in bars)
    # an independent call with the same settings (global batch: 8M tokens of 4096-token sequences)
    st = rl.training.train_step("Llama-3.1-8B", "H200 SXM", n_chips=256, seq_len=4096, global_batch=2048,
                                micro_batch=2, tp=2, pp=1, cp=1, zero_stage=3, recompute="none")
    assert readout["tokens/s per chip"] == rl.widgets.eng(st.tokens_per_s_per_chip, "token/s")
    assert readout["memory per chip"].startswith(f"{rl.widgets.eng(st.memory.total, 'B')} of "
                                                 f"{rl.widgets.eng(rl.get_accelerator('H200 SXM').mem_capacity, 'B')}")
    assert readout["step time"] == rl.widgets.eng(st.step_time_s, "s")
    assert readout["model"] == "Llama-3.1-8B on H200 SXM"  # the readout names what it models
    assert readout["dp (data parallel)"].startswith(f"{st.config['dp']} = ")
    assert readout["largest term"].startswith(st.binding)
    # the bars stack: each starts where the last ended, and they add up to the totals
    mem = widths(e, "B")
    assert all(mem[i + 1][0] == pytest.approx(sum(mem[i])) for i in range(len(mem) - 1))
    assert sum(mem[-1]) == pytest.approx(st.memory.total)  # pp = 1: the logits count
    assert sum(widths(e, "s")[-1]) == pytest.approx(st.step_time_s)
    assert e.capacity.get_xdata()[0] == rl.get_accelerator("H200 SXM").mem_capacity


def test_the_logits_count_only_without_a_pipeline():
    e = rl.widgets.TrainingExplorer()
    e.update(**{**SETTINGS, "pp": 2})
    assert e.bars["B"][-1].get_width() == 0


def test_a_layout_that_does_not_divide_says_why_and_keeps_the_figure():
    e = rl.widgets.TrainingExplorer().connect()
    before = widths(e, "s")
    readout = e.update(**{**SETTINGS, "n_chips": 8, "tp": 8, "pp": 4})  # 32 chips of model parallelism on 8
    assert "multiple of tp x pp x cp" in readout["layout does not divide"]
    assert "32" in readout["what would"]
    assert widths(e, "s") == before
    # 4M tokens of 8K-token sequences are 512 sequences: dp 256 x micro-batch 8 = 2048 do not divide them
    small_batch = {**SETTINGS, "batch_tokens": 2**22, "seq_len": 2**13, "tp": 1, "micro_batch": 8}
    readout = e.update(**small_batch)
    assert "multiple of dp x micro_batch" in readout["layout does not divide"]
    assert "micro-batch 1 or 2" in readout["what would"]
    readout = e.update(**{**small_batch, "n_chips": 2048})  # dp 2048: more replicas than sequences
    assert "fewer chips" in readout["what would"]
    e.controls["n_chips"].value = 8  # through the widget: no exception, the reason in the readout
    assert "does not divide" in e.readout.value


def test_a_layout_that_does_not_fit_says_so():
    e = rl.widgets.TrainingExplorer()
    readout = e.update(model="Llama-3.1-405B", chip="A100 40GB SXM4", n_chips=64, seq_len=2**13,
                       batch_tokens=2**24, tp=1, pp=1, cp=1, micro_batch=1, zero_stage=0, recompute="none")
    assert "does NOT fit" in readout["memory per chip"]
    assert "does NOT fit" in e.ax_mem.get_title()
    assert sum(widths(e, "B")[-1]) > e.capacity.get_xdata()[0]


def test_builds_with_its_defaults_and_draws_a_static_image():
    e = rl.widgets.TrainingExplorer()
    assert e.controls["model"].value == "Llama-3.1-70B" and e.controls["chip"].value == "H100 SXM5"
    assert all(rl.get_model(n).moe is None for n in e.controls["model"].options)
    assert "fits" in e.last["memory per chip"] and "NOT" not in e.last["memory per chip"]
    sliders = [name for name, c in e.controls.items() if isinstance(c, rl.widgets.base.ipywidgets.SelectionSlider)]
    assert sliders[0] == "n_chips"  # the browser test moves the first slider
    png = e.static_image().data
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert e.fig.get_figwidth() * 110 <= rl.widgets.base.MAX_LIVE_WIDTH_PX


def test_the_titles_sit_above_their_axes_before_any_update():
    """widget() shows the figure as the constructor left it: the moving titles must be where update() puts them."""
    e = rl.widgets.TrainingExplorer()
    e.fig.canvas.draw()
    for ax in (e.ax_mem, e.ax_time):
        title, box = ax.title.get_window_extent(), ax.get_window_extent()
        assert box.y1 <= title.y0 <= box.y1 + 20 and title.y1 <= e.fig.bbox.y1, ax.get_title()


def test_the_main_slider_moves_readout_and_bars():
    e = rl.widgets.TrainingExplorer().connect()
    before, bars = e.readout.value, widths(e, "s")
    e.controls["n_chips"].value = 2048
    assert e.readout.value != before and widths(e, "s") != bars
