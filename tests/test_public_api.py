"""The library's public surface: what each room exports, and a docstring on every public name.

Public: a function or class of a roofline_lib module whose name has no leading underscore, and the methods and
properties of such a class (an override may keep its base's docstring). Internal functions that trust checked
input (``*_unchecked``, called across modules) keep their names but stay out of every ``__all__``.
"""

import importlib
import inspect
import pkgutil

import pytest

import roofline_lib as rl

ROOMS = ["core", "specs", "roofline", "llm", "multichip", "training", "serving", "measure", "reality", "plotting",
         "widgets", "exercises", "teach"]


def library_modules():
    return [importlib.import_module(info.name) for info in pkgutil.walk_packages(rl.__path__, "roofline_lib.")]


def public_names():
    """'module.Name' (and 'module.Class.member') -> the object, for everything public the library defines."""
    found = {}
    for mod in library_modules():
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            found[f"{mod.__name__}.{name}"] = obj
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    if member.startswith("_"):
                        continue
                    if isinstance(value, property | staticmethod | classmethod) or inspect.isfunction(value):
                        found[f"{mod.__name__}.{name}.{member}"] = (obj, member)
    return found


def lacks_docstring(obj):
    if isinstance(obj, tuple):  # a member: its own docstring, or the one it overrides (inspect.getdoc looks up)
        cls, member = obj
        value = inspect.getattr_static(cls, member)
        target = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        return not (target.__doc__ or inspect.getdoc(getattr(cls, member, None)))
    if inspect.isclass(obj):
        # a dataclass without one gets "Name(field: type, ...)", which says nothing a reader needs
        return not obj.__doc__ or obj.__doc__.startswith(obj.__name__ + "(")
    return not obj.__doc__


def test_every_public_name_has_a_docstring():
    names = public_names()
    assert len(names) > 500  # the walk found the library (about 1,000 names: functions, classes, members)
    missing = sorted(q for q, obj in names.items() if lacks_docstring(obj))
    assert not missing, f"{len(missing)} public names without a docstring: {', '.join(missing)}"


def test_the_check_finds_a_missing_docstring():
    class Result:
        @property
        def seconds(self):
            return 1.0

    def bare():
        pass

    assert lacks_docstring(bare) and lacks_docstring(Result) and lacks_docstring((Result, "seconds"))


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_exports_only_names_it_has_and_no_internals(room):
    mod = importlib.import_module(f"roofline_lib.{room}")
    for name in mod.__all__:
        assert hasattr(mod, name), f"roofline_lib.{room}.__all__ names {name!r}, which it does not have"
        assert not name.endswith("_unchecked"), f"roofline_lib.{room} exports the internal {name}"


def test_no_module_exports_an_internal():
    for mod in library_modules():
        leaked = [n for n in getattr(mod, "__all__", []) if n.endswith("_unchecked") or n.startswith("_")]
        assert not leaked, f"{mod.__name__}.__all__ exports internals: {leaked}"


def test_the_rooms_export_about_265_names():
    # 269 before the internals (checked-input functions, catalog and layout plumbing) left the rooms' __all__
    # (249 after); chapter 14 (experts_touched, the expert-parallel step, MoE training), chapter 12's practice
    # (accumulation, offloading, the mixed FP8 peak), chapter 13's estimate and peak memory and the language
    # switch brought it to 265. A change of more than a few names either way deserves a look at what a learner
    # is offered
    total = sum(len(importlib.import_module(f"roofline_lib.{room}").__all__) for room in ROOMS)
    assert 255 <= total <= 275, total


def test_no_module_is_over_400_lines():
    # one job per module: past 400 lines a module has usually taken on a second one (split it by job, and name
    # the new module in README's Layout)
    from pathlib import Path

    long = {str(p.relative_to(Path(rl.__file__).parent)): n for p in Path(rl.__file__).parent.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, long
