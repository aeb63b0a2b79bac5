"""roofline_lib/__init__.py: the package stays light to import (heavy libraries load only with the submodules
that need them) and lists its lazy names for completion."""

import subprocess
import sys

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


def test_lazy_names_are_listed_for_completion():
    names = dir(rl)
    for name in ("prefill", "decode_step", "get_model", "exercises", "plotting", "measured_vs_predicted", "mbu"):
        assert name in names
    # listing the names imports none of them
    code = ("import sys, roofline_lib; dir(roofline_lib); "
            "print('sympy' in sys.modules, 'roofline_lib.llm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_old_flat_module_names_warn_and_name_their_new_home():
    with pytest.warns(DeprecationWarning, match="roofline_lib.specs.hardware"):
        old = rl.hardware
    assert old is rl.specs.hardware
    with pytest.warns(DeprecationWarning, match="roofline_lib.llm.memory"):
        from roofline_lib import llm_memory
    assert llm_memory.max_batch is rl.llm.max_batch
