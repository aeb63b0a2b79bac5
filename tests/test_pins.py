"""The pinned environment: constraints.txt holds an exact version of everything requirements.txt installs, inside
pyproject.toml's ranges, and an environment made by the README's commands runs exactly those versions.
(`.ci/latest` runs the suite on the newest releases instead; there the last check skips and says so.)"""

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
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


@pytest.mark.skipif(os.environ.get("ROOFLINE_UNPINNED") == "1",
                    reason="ROOFLINE_UNPINNED=1: .ci/latest runs the newest releases on purpose")
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
