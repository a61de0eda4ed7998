"""The Python floor is one number everywhere: pyproject's requires-python is the highest
Requires-Python among the versions constraints.txt pins, and every cluster file gives its
nodes at least that Python (a 3.10 floor beside numpy 2.4.6 let pip try, and fail, on 3.10).

Offline: each pin's Requires-Python is read from the installed distribution's metadata,
which is PyPI's for that version; a pin installed here at another version is not read."""

from __future__ import annotations

import importlib.metadata as md
import re
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]


def _floor(spec: str) -> tuple[int, int]:
    """The lowest 3.x release a Requires-Python admits (``>=3.11``, ``!=3.14.1,>=3.11``)."""
    allowed = SpecifierSet(spec)
    return next((3, minor) for minor in range(0, 40) if Version(f"3.{minor}") in allowed)


def _pins() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return dict(ln.strip().split("==") for ln in lines if "==" in ln and not ln.startswith("#"))


def _pinned_floors() -> dict[str, tuple[int, int]]:
    """Requires-Python of every pin installed here at its pinned version (local labels such
    as torch's ``+cpu`` aside)."""
    floors = {}
    for name, version in _pins().items():
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        if dist.version.split("+")[0] != version:
            continue
        spec = dist.metadata.get("Requires-Python")
        floors[name.lower()] = _floor(spec) if spec else (3, 0)
    return floors


def _project_floor() -> tuple[int, int]:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    return _floor(spec)


def test_the_floor_is_the_highest_floor_of_the_pinned_versions():
    floors = _pinned_floors()
    # the ones that set the floor must have been read, or this test proves nothing
    assert {"numpy", "pandas", "scipy"} <= floors.keys(), sorted(floors)
    needed = max(floors.values())
    assert _project_floor() == needed, (
        f"requires-python gives {_project_floor()}, the pins need {needed}: "
        f"{sorted(n for n, f in floors.items() if f == needed)}")


def test_the_linters_check_for_the_floor():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    major, minor = _project_floor()
    assert config["tool"]["ruff"]["target-version"] == f"py{major}{minor}"
    assert config["tool"]["mypy"]["python_version"] == f"{major}.{minor}"


def test_the_aws_nodes_install_into_a_python_at_the_floor():
    """The image's python3 is Ubuntu 22.04's 3.10: the set-up makes a venv of a named
    Python and installs with that venv's pip only."""
    setup = yaml.safe_load((ROOT / "cluster" / "aws.yaml").read_text())["setup_commands"]
    made = [re.search(r"python3\.(\d+) -m venv (\S+)", c) for c in setup]
    venvs = [(int(m.group(1)), m.group(2)) for m in made if m]
    assert len(venvs) == 1, setup
    minor, venv = venvs[0]
    assert (3, minor) >= _project_floor()
    installs = [c for c in setup if "pip install" in c]
    assert installs and all(c.startswith(f"{venv}/bin/python -m pip") for c in installs)
    on_path = f"$HOME/{venv.removeprefix('~/')}/bin:$PATH"
    assert any(on_path in c and "bashrc" in c for c in setup)  # `ray start` finds that venv


def test_the_local_nodes_check_for_the_floor_before_installing():
    setup = yaml.safe_load((ROOT / "cluster" / "local.yaml").read_text())["setup_commands"]
    check = re.search(r"sys\.version_info >= \((\d+), (\d+)\)", setup[0])
    assert check and (int(check.group(1)), int(check.group(2))) == _project_floor()


def test_the_kuberay_image_has_a_python_at_the_floor():
    text = (ROOT / "cluster" / "kuberay.yaml").read_text()
    tags = re.findall(r"rayproject/ray:[\d.]+-py3(\d+)", text)
    assert tags and all((3, int(t)) >= _project_floor() for t in tags)
