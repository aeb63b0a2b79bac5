"""Every library function or class a chapter's code calls says, on its docstring's last line, which chapter teaches
it and which others use it ("Taught in chapter 05 (notebooks/05_llm_inference.ipynb); also used in chapters 06,
11."), so whoever edits it knows which notebooks to run again. The stamps are checked against the notebooks' code;
after a chapter starts or stops calling a name, `python tests/notebook_uses.py` rewrites them.
"""

import importlib
import inspect
import json
import pkgutil

import notebook_uses as nu

import roofline_lib as rl


def test_the_finder_follows_imports_aliases_and_attribute_chains(tmp_path):
    cells = ["import roofline_lib as rl\nfrom roofline_lib import llm\n%matplotlib inline",
             "L = rl.launch\nr = rl.serving.request('llama-2-7b', 'A100', 1, 512, 128)\nr.ttft",
             "llm.max_batch('llama-3-8b', 'A100', 8192)\nL.simulate_queue([1e-6], 2e-6)\nrl.units.seconds(1)",
             "from roofline_lib.reality import calibrated"]
    path = tmp_path / "99_demo.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": c} for c in cells]}), encoding="utf-8")
    found = {f"{o.__module__}.{o.__qualname__}" for o in nu.uses(path)}
    assert found == {"roofline_lib.serving.requests.request", "roofline_lib.llm.memory.max_batch",
                     "roofline_lib.measure.launch.simulate_queue", "roofline_lib.core.units.seconds",
                     "roofline_lib.reality.ceilings.calibrated"}


def test_the_stamp_reads_back():
    def f():
        """Does a thing.

        Taught in chapter 05 (notebooks/05_llm_inference.ipynb); also used in chapters 06,
        11."""

    assert nu.stamped(f) == ("05", ["06", "11"], "notebooks/05_llm_inference.ipynb")
    assert nu.stamp_for(["05", "06", "11"]) == ("Taught in chapter 05 (notebooks/05_llm_inference.ipynb); "
                                                "also used in chapters 06, 11.")


def test_every_name_a_chapter_uses_is_stamped_with_the_chapters_that_use_it():
    users = nu.users()
    assert len(users) > 100  # the chapters call about 130 of the library's functions and classes
    wrong = []
    for obj, numbers in users.items():
        expected = nu.stamp_for(numbers)
        found = nu.stamped(obj)
        if found is None or nu.stamp_for([found[0], *found[1]]) != expected or f"({found[2]})" not in expected:
            wrong.append(f"{obj.__module__}.{obj.__qualname__}: its docstring should end with {expected!r}")
    assert not wrong, "\n".join(wrong)


def test_no_stamp_names_a_chapter_that_does_not_use_it():
    users = nu.users()
    stale = []
    for info in pkgutil.walk_packages(rl.__path__, "roofline_lib."):
        for name, obj in vars(importlib.import_module(info.name)).items():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == info.name \
                    and nu.stamped(obj) and obj not in users:
                stale.append(f"{info.name}.{name}")
    assert not stale, f"stamped, but no chapter uses them: {stale}"
