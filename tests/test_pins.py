"""The pinned environment: constraints.txt holds an exact version of everything requirements.txt installs, inside
pyproject.toml's ranges, one version for every supported Python (no markers), each admitting all of them, and an
environment made by the README's commands runs exactly those versions. (`.ci/latest` runs the suite on the newest
releases instead; there the checks of the installed versions skip and say so.) Whether pip resolves the pins for
the oldest and newest supported Python, wheels included, is .ci/resolve's check (it needs the package index)."""

import importlib.machinery
import importlib.util
import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
UNPINNED = pytest.mark.skipif(os.environ.get("ROOFLINE_UNPINNED") == "1",
                              reason="ROOFLINE_UNPINNED=1: .ci/latest runs the newest releases on purpose")
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;#]+)$")


def pins():
    found = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = PIN.match(line.strip())
        assert match, f"constraints.txt: {line!r} is not an exact pin (name==version)"
        name = canonicalize_name(match["name"])
        assert name not in found, f"constraints.txt pins {name} twice"
        found[name] = Version(match["version"])
    return found


def test_requirements_install_through_the_constraints():
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines == ["-c constraints.txt", "-e .[notebooks,grade,test]"]


def test_every_dependency_the_project_names_is_pinned_inside_its_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = list(project["dependencies"])
    for extra, requirements in project["optional-dependencies"].items():
        if extra != "gpu":  # PyTorch is an opt-in of several GB, never in requirements.txt
            named += requirements
    pinned = pins()
    checked = 0
    for text in named:
        requirement = Requirement(text)
        if canonicalize_name(requirement.name) == "roofline-lib":
            continue  # the project's own extras, named in one another
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement.name} (pyproject.toml) has no pin in constraints.txt"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"constraints.txt pins {name}=={pinned[name]}, outside pyproject.toml's {requirement}")
        checked += 1
    assert checked >= 15


@UNPINNED
def test_this_environment_runs_the_pinned_versions():
    pinned, installed, wrong = pins(), 0, []
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name in pinned:
            installed += 1
            if Version(dist.version) != pinned[name]:
                wrong.append(f"{name} {dist.version} (pinned {pinned[name]})")
    assert not wrong, ("this environment is not the pinned one: " + ", ".join(wrong)
                       + "; make it with the README's commands, or run .ci/latest for the newest releases")
    assert installed >= 0.9 * len(pinned)  # the README's install put (nearly) all of them here


def supported_pythons():
    """The Pythons the project says it supports: from requires-python's floor to the newest X.Y classifier."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floor = re.fullmatch(r">=(\d+)\.(\d+)", project["requires-python"].replace(" ", ""))
    assert floor, f"requires-python {project['requires-python']!r}: .ci/resolve reads a floor '>=X.Y'"
    classified = sorted(tuple(map(int, m.groups())) for c in project["classifiers"]
                        if (m := re.fullmatch(r"Programming Language :: Python :: (\d+)\.(\d+)", c)))
    oldest = (int(floor[1]), int(floor[2]))
    assert classified and classified[0] == oldest, f"the classifiers start at {classified[:1]}, not at {oldest}"
    assert classified == [(oldest[0], m) for m in range(oldest[1], classified[-1][1] + 1)], (
        f"the classifiers skip a version: {classified}")
    return classified


def test_the_readme_promises_the_pythons_pyproject_supports():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pythons = supported_pythons()
    (oldest, newest) = (pythons[0], pythons[-1])
    start = re.search(r"Needs Python (\d+)\.(\d+) or newer", readme)
    assert start and (int(start[1]), int(start[2])) == oldest, (
        f"README's 'Needs Python ... or newer' says {start and start[0]}; pyproject.toml's floor is {oldest}")
    # the section on the pins names the range .ci/resolve checks, every patch release of the floor included
    checked = f"Python {oldest[0]}.{oldest[1]}.0 to {newest[0]}.{newest[1]}"
    assert checked in readme, f"README does not say the pins are checked on {checked}"


@UNPINNED
def test_every_pinned_release_admits_every_supported_python():
    """Each installed pinned release's own Requires-Python (its wheel's metadata, not ours) admits X.Y.0 of every
    supported X.Y, the floor's first patch release included: soupsieve 4.1.3 needs 3.11.5 and broke 3.11.0 to 3.11.4."""
    versions = [f"{major}.{minor}.0" for major, minor in supported_pythons()]
    pinned, seen, excluded = pins(), 0, []
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name not in pinned:
            continue
        seen += 1
        requires = dist.metadata.get("Requires-Python")
        if requires:
            excluded += [f"{name} {dist.version} (Requires-Python {requires}) excludes Python {v}"
                         for v in versions if not SpecifierSet(requires).contains(v, prereleases=True)]
    assert not excluded, "; ".join(excluded)
    assert seen >= 0.9 * len(pinned)



def test_the_resolve_check_asks_for_what_requirements_txt_installs():
    """.ci/resolve cannot resolve `-e .` for another Python, so it lists the project's requirements itself: they are
    what the installed project's metadata (written by setuptools) asks for under requirements.txt's extras."""
    loader = importlib.machinery.SourceFileLoader("ci_resolve", str(ROOT / ".ci" / "resolve"))
    resolve = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(resolve)
    line = [li for li in (ROOT / "requirements.txt").read_text().splitlines() if li.startswith("-e ")][0]
    extras = re.fullmatch(r"-e \.\[([a-z,]+)\]", line)[1].split(",")
    assert sorted(resolve.EXTRAS) == sorted(extras)
    wanted = set()
    for text in metadata.requires("roofline-lib"):
        requirement = Requirement(text)
        if canonicalize_name(requirement.name) != "roofline-lib" and (
                requirement.marker is None or any(requirement.marker.evaluate({"extra": e}) for e in extras)):
            wanted.add(str(requirement).split(";")[0].strip())
    listed = resolve.project_requirements(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"])
    assert {str(Requirement(r)) for r in listed} == {str(Requirement(r)) for r in wanted}
    assert resolve.supported_pythons(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]) == (
        "{}.{}.0".format(*supported_pythons()[0]), "{}.{}".format(*supported_pythons()[-1]))
