"""The communication explorer moves its artists in place and reads out what parallel computes."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

import roofline_lib as rl  # noqa: E402


def test_update_moves_lines_and_readout_matches_parallel():
    e = rl.widgets.CommsExplorer()
    lines_before = dict(e.lines)
    comm_before = e.lines["t_comm"].get_ydata().copy()
    readout = e.update(model="Llama-2-70B", chip="H100 SXM", link="pcie", batch=256, n_chips=8, context=4096)
    assert all(e.lines[k] is lines_before[k] for k in e.lines)  # same artists, new data
    assert np.all(e.lines["t_comm"].get_ydata() > comm_before)  # PCIe is slower than NVLink
    expected = rl.parallel.tp_decode_step("llama-2-70b", "H100 SXM", 256, 4096, 8, "pcie")
    assert readout["largest term"] == expected.bound
    assert eng_sum(readout) == rl.widgets.eng(expected.sequential, "s")


def eng_sum(readout):
    return readout["step if overlapped (max) / not overlapped (sum)"].split(" / ")[1]


def test_batch_axis_ends_at_what_fits():
    e = rl.widgets.CommsExplorer()
    e.update(model="Llama-2-70B", chip="A100 80GB SXM4", link="nvlink", batch=16, n_chips=8, context=4096)
    x = e.lines["t_mem"].get_xdata()
    # by hand: 8 x 81920 MiB, less 1/8 of 137.95 GB of weights each, over 4096 x 80 layers x 2 x 1024 x 2 B
    # of KV cache per sequence, split over the 8 KV heads
    free = 81920 * 2**20 - 68_976_648_192 * 2 / 8
    per_sequence = 4096 * 80 * 2 * 1024 * 2 / 8
    assert x[-1] == int(free // per_sequence)
    assert x[0] == 1


def test_a_model_that_does_not_fit_draws_nothing_and_says_so():
    e = rl.widgets.CommsExplorer()
    readout = e.update(model="Llama-2-70B", chip="A100 80GB SXM4", link="nvlink", batch=1, n_chips=1, context=4096)
    assert len(e.lines["t_mem"].get_xdata()) == 0
    assert "does NOT fit" in readout["memory per chip"]


def test_only_chips_with_both_links_are_offered():
    offered = rl.widgets.comms_explorer.chips_with_links()
    assert {"H100 SXM5", "H200 SXM"} <= set(offered), offered  # not vacuous: the NVLink chips are there
    assert "TPU v5e" not in offered
    for name in offered:
        hw = rl.get_accelerator(name)
        assert hw.interconnect_bandwidth and hw.host_link_bandwidth


def test_no_model_shape_is_typed_in_widgets_or_exercises():
    import pathlib
    import re

    root = pathlib.Path(rl.__file__).parent
    for path in list((root / "widgets").glob("*.py")) + [root / "exercises" / "ch09.py"]:
        text = path.read_text(encoding="utf-8")
        # Llama-2-70B's hidden size, layers, MLP size and parameter counts, as hand-typed numbers
        for pattern in (r"\b8192\b", r"\b28672\b", r"\b69e9\b", r"LAYER_PARAMS", r"N_PARAMS"):
            assert not re.search(pattern, text), f"{path.name} types a model shape by hand: {pattern}"
