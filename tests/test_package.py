"""The package stays light to import: heavy libraries load only with the submodules that need them."""

import subprocess
import sys

import numpy as np

import roofline_lib as rl


def test_import_does_not_pull_heavy_libraries():
    code = ("import sys, roofline_lib; "
            "print(','.join(m for m in ('sympy', 'matplotlib', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_lazy_submodules_load_on_attribute_access():
    import roofline_lib as rl

    assert rl.plotting.roofline_plot
    assert rl.exercises.check


def test_lazy_names_are_listed_for_completion():
    names = dir(rl)
    for name in ("prefill", "decode_step", "get_model", "exercises", "plotting", "measured_vs_predicted", "mbu"):
        assert name in names
    # listing the names imports none of them
    code = ("import sys, roofline_lib; dir(roofline_lib); "
            "print('sympy' in sys.modules, 'roofline_lib.llm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_workload_times_an_array_of_counts():
    # 2 x 4 x 4 x 4 = 128 FLOPs, once and twice
    w = rl.matmul(4, 4, 4) * np.array([1, 2])
    assert list(w.flops) == [128, 256]
    assert (rl.matmul(4, 4, 4) * 3).flops == 384 and (rl.matmul(4, 4, 4) * 3).name == "3 x matmul"
