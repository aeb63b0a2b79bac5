"""The package stays light to import: heavy libraries load only with the submodules that need them."""

import subprocess
import sys

import numpy as np
import pytest

import roofline_lib as rl


def test_import_does_not_pull_heavy_libraries():
    code = ("import sys, roofline_lib; "
            "print(','.join(m for m in ('sympy', 'matplotlib', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_lazy_submodules_load_on_attribute_access():
    import roofline_lib as rl

    assert callable(rl.plotting.roofline_plot) and rl.plotting.__name__ == "roofline_lib.plotting"
    assert callable(rl.exercises.check) and rl.exercises.__name__ == "roofline_lib.exercises"
    with pytest.raises(AttributeError, match="no attribute 'plotter'"):
        rl.plotter  # noqa: B018  (a misspelt name is an AttributeError, not a silent None)


def test_eng_and_units():
    assert rl.eng(2.5e12, "FLOP/s") == "2.5 TFLOP/s"
    assert rl.eng(999.9996, "B") == "1 kB"  # rounding up moves to the next prefix
    assert rl.eng(0, "s") == "0 s" and rl.eng(-2.5e-3, "s") == "-2.5 ms"
    assert rl.units.seconds(3.2e-5) == "32 \N{MICRO SIGN}s"
    assert rl.units.gib(150.75e9) == "140.4 GiB" and rl.units.in_units(4.8e12, "T") == 4.8
    with pytest.raises(ValueError, match="unknown SI prefix"):
        rl.units.scale("X")


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
