"""The package stays light to import: heavy libraries load only with the submodules that need them."""

import subprocess
import sys


def test_import_does_not_pull_heavy_libraries():
    code = ("import sys, roofline_lib; "
            "print(','.join(m for m in ('sympy', 'matplotlib', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_lazy_submodules_load_on_attribute_access():
    import roofline_lib as rl

    assert rl.plotting.roofline_plot
    assert rl.exercises.check
