"""`raudit upstream`: the catalog, the environment builder and its CLI (no download:
the built environments install nothing, or fail before reaching an index)."""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

import pytest

from raudit.errors import ConfigError
from raudit.generators.exec_adapter import read_config
from raudit.upstream import catalog, envs

ENTRIES = Path(envs.__file__).parent / "entries"
PY = f"{sys.version_info.major}.{sys.version_info.minor}"


def _fake(**changes) -> catalog.Upstream:
    """The smartnoise entry with nothing to install (only a venv and the import check)."""
    base = dict(requirements=(), constraints=(), python=PY, imports=("json",))
    return dataclasses.replace(catalog.SMARTNOISE, **{**base, **changes})


def test_catalog_says_what_can_and_cannot_be_installed():
    names = {u.name: u for u in catalog.all_upstreams()}
    assert names["smartnoise"].installable and "smartnoise-synth==1.0.8" in names["smartnoise"].requirements
    assert {"opacus==0.14.0", "packaging==26.3"} <= set(names["smartnoise"].requirements)
    for name in ("original", "updated", "turing", "borealis"):
        assert not names[name].installable and names[name].notes
    with pytest.raises(ConfigError, match="cannot be set up"):
        envs.setup(names["turing"], directory="/nonexistent")


def test_entry_scripts_never_import_raudit():
    """They run inside the upstream environment, where raudit is not installed."""
    scripts = sorted(ENTRIES.glob("*.py"))
    assert any(p.name == "smartnoise_pategan.py" for p in scripts)
    for path in scripts:
        for node in ast.walk(ast.parse(path.read_text())):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(m.split(".")[0] == "raudit" for m in mods), f"{path.name} imports {mods}"


def test_setup_is_idempotent_and_force_rebuilds(tmp_path):
    u = _fake()
    assert envs.status(u, tmp_path) == "absent"
    with pytest.raises(ConfigError, match="raudit upstream setup smartnoise"):
        envs.config_path(u, tmp_path)
    lines = []
    first = envs.setup(u, directory=tmp_path, python=sys.executable, log=lines.append)
    assert first["action"] == "created" and envs.status(u, tmp_path) == "complete"
    cfg = read_config(first["config"])  # a valid exec config: the interpreter exists
    assert cfg["command"] == [str(envs.interpreter(tmp_path / "smartnoise")),
                              str(tmp_path / "smartnoise" / "smartnoise_pategan.py")]
    assert cfg["env"]["OMP_NUM_THREADS"] == "1" and any("import" in line for line in lines)
    venv_id = (tmp_path / "smartnoise" / "venv").stat().st_ino
    again = envs.setup(u, directory=tmp_path, python="/no/such/python")  # never looked up
    assert again["action"] == "already complete"
    assert (tmp_path / "smartnoise" / "venv").stat().st_ino == venv_id
    assert envs.config_path(u, tmp_path) == Path(first["config"])
    (tmp_path / "smartnoise" / envs.MARKER).unlink()  # an interrupted set-up
    assert envs.status(u, tmp_path) == "incomplete"
    forced = envs.setup(u, directory=tmp_path, python=sys.executable, force=True)
    assert forced["action"] == "rebuilt" and envs.status(u, tmp_path) == "complete"
    assert envs.status(_fake(constraints=("numpy==0.0.1",)), tmp_path) == "stale"


def test_failures_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"needs Python 9\.9 .* --python"):
        envs.setup(_fake(python="9.9"), directory=tmp_path)
    with pytest.raises(ConfigError, match="not an interpreter"):
        envs.setup(_fake(), directory=tmp_path, python="/no/such/python")
    with pytest.raises(ConfigError, match="the import check failed .*no_such_module_xyz"):
        envs.setup(_fake(imports=("no_such_module_xyz",)), directory=tmp_path, python=sys.executable)
    assert envs.status(_fake(), tmp_path) == "incomplete"  # no marker after a failure
    other = tmp_path / "elsewhere"
    (other / "smartnoise").mkdir(parents=True)
    (other / "smartnoise" / "thesis.tex").write_text("mine")
    with pytest.raises(ConfigError, match="not a raudit upstream environment"):
        envs.setup(_fake(), directory=other, python=sys.executable)
    assert (other / "smartnoise" / "thesis.tex").exists()


@pytest.mark.slow
def test_pip_failure_reports_its_last_lines(tmp_path):
    missing = tmp_path / "no_such_pkg-1.0-py3-none-any.whl"  # a local file: no index is asked
    with pytest.raises(ConfigError, match=r"pip install failed \(exit \d+\): .*no_such_pkg"):
        envs.setup(_fake(requirements=(str(missing),)), directory=tmp_path, python=sys.executable)


def test_cli_list_and_path(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from raudit.cli.app import app

    monkeypatch.setenv("RAUDIT_UPSTREAM_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()
    listed = runner.invoke(app, ["upstream", "list"])
    assert listed.exit_code == 0
    assert "smartnoise" in listed.output and "not installable" in listed.output
    missing = runner.invoke(app, ["upstream", "path", "smartnoise"])
    assert missing.exit_code == 2 and "raudit upstream setup smartnoise" in missing.output
    envs.setup(_fake(), directory=tmp_path, python=sys.executable)  # the catalog's name, no pins
    monkeypatch.setattr(catalog, "get", lambda name: _fake())
    found = runner.invoke(app, ["upstream", "path", "smartnoise"])
    assert found.exit_code == 0 and found.output.strip() == str(tmp_path / "smartnoise" / "exec.json")
