"""The communication explorer moves its artists in place and reads out what comms computes."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

import roofline_lib as rl  # noqa: E402
from roofline_lib import comms  # noqa: E402


def test_update_moves_lines_and_readout_matches_comms():
    e = rl.widgets.CommsExplorer()
    lines_before = {k: line for k, line in e.lines.items()}
    comm_before = e.lines["t_comm"].get_ydata().copy()
    readout = e.update(chip="H100 SXM", link="pcie", n_chips=8, batch=256, latency=1e-6)
    assert all(e.lines[k] is lines_before[k] for k in e.lines)  # same artists, new data
    assert np.all(e.lines["t_comm"].get_ydata() > comm_before)  # PCIe is slower than NVLink
    hw = rl.get_accelerator("H100 SXM")
    expected = comms.tp_decode_step(69e9, 8192, 80, 256, 8, hw.mem_bandwidth, hw.peak_flops("bf16"),
                                    128e9 / 2, latency=1e-6)
    assert readout["bound"] == expected["bound"] == "communication"
    assert readout["communication time"] == rl.widgets.eng(expected["t_comm"], "s")


def test_only_chips_with_both_links_are_offered():
    for name in rl.widgets.comms_explorer.chips_with_links():
        hw = rl.get_accelerator(name)
        assert hw.interconnect_bandwidth and hw.host_link_bandwidth
