"""The MoE explorer moves its bars in place and reads out what multichip.ep_serving_step computes."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

import roofline_lib as rl  # noqa: E402
from roofline_lib.widgets.moe_explorer import redundant_for  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_update_moves_the_same_bars_and_reads_out_the_step():
    e = rl.widgets.MoEExplorer()
    bars = [*e.bars["B"], *e.bars["s"]]
    readout = e.update(batch_per_chip=64, ep=144, imbalance=1.3, chip="H800 SXM5", two_batch_overlap=False)
    assert all(a is b for a, b in zip([*e.bars["B"], *e.bars["s"]], bars, strict=True))
    st = rl.multichip.ep_serving_step("deepseek-v3", "H800", 64, 2000, 144, imbalance=1.3, redundant_experts=32,
                                      two_batch_overlap=False)
    assert readout["step time"] == rl.widgets.eng(st.time, "s") and st.time == st.t_compute + st.t_comm
    assert readout["output tokens/s per node (8 chips)"] == rl.widgets.eng(8 * 64 / st.time, "token/s")
    times = [(bar.get_x(), bar.get_width()) for bar in e.bars["s"]]
    assert sum(times[-1]) == pytest.approx(st.t_compute + st.t_comm)
    assert sum(b.get_x() + b.get_width() for b in e.bars["B"][-1:]) == pytest.approx(st.memory_per_chip)
    assert e.step.get_xdata()[0] == st.time


def test_redundant_experts_divide_the_slots():
    assert [redundant_for(n) for n in (8, 64, 72, 144, 256)] == [0, 0, 32, 32, 0]
