"""`raudit campaign --dry-run` runs nothing of the user's (issue 46.2): a module:Class
plugin is not imported (its import would run its code) and an exec: program is not run
(the calibration trained it); both jobs are still planned, their settings checked."""

from __future__ import annotations

import json
import sys

import pytest

from raudit.cli.app import main


def _plugins(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "dry_plugin_mod.py").write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marks / 'imported')!r}).write_text('x')\n"
        "from raudit.generators import GENERATORS\nGen = GENERATORS.get('identity')\n")
    prog = tmp_path / "prog.sh"
    prog.write_text(f"#!/bin/sh\ntouch {marks / 'executed'}\nexit 1\n")
    prog.chmod(0o755)
    (tmp_path / "exec.json").write_text(json.dumps({"command": [str(prog)]}))
    return marks


def _campaign(tmp_path, extra: str = "") -> str:
    config = tmp_path / "c.yaml"
    config.write_text(
        "name: dry\njobs:\n"
        "  - name: module\n    impl: 'dry_plugin_mod:Gen'\n    attack: querybased\n"
        "    shadow_models: 10\n    max_iter: 3\n"
        f"  - name: exec\n    impl: 'exec:{tmp_path / 'exec.json'}'\n    attack: querybased\n"
        "    shadow_models: 12\n"
        "  - name: sweep\n    kind: utility\n    impl: 'dry_plugin_mod:Gen'\n    fits: 2\n"
        "    epsilons: [1, 2, 4]\n" + extra)
    return str(config)


def test_a_dry_run_neither_imports_nor_runs_a_plugin(tmp_path, monkeypatch, capsys):
    marks = _plugins(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["campaign", _campaign(tmp_path), "--dry-run", "--json", "--backend", "local"])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    assert not (marks / "imported").exists() and not (marks / "executed").exists()
    assert "dry_plugin_mod" not in sys.modules
    rows = {r["job"]: r for r in json.loads(out)["jobs"]}
    assert {k: (r["models"], r["rate"]) for k, r in rows.items()} == {
        "module": (20, "plugin: not run in a dry run"),
        "exec": (24, "plugin: not run in a dry run"),
        "sweep": (6, "plugin: not run in a dry run")}
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("job, needle", [
    ("  - name: bad\n    impl: 'no_such_module_here:Gen'\n",
     "c.yaml:18: job bad, key 'impl': generator plugin 'no_such_module_here:Gen': no module"),
    ("  - name: bad\n    impl: 'exec:/no/such/exec.json'\n",
     "c.yaml:18: job bad, key 'impl': adapter config /no/such/exec.json not found"),
    ("  - name: bad\n    impl: 'dry_plugin_mod:Gen'\n    shadow_models: -1\n",
     "c.yaml:19: job bad, key 'shadow_models'")])
def test_a_dry_run_still_checks_a_plugin_jobs_settings(tmp_path, monkeypatch, capsys, job,
                                                       needle):
    marks = _plugins(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SystemExit) as exit_:
        main(["campaign", _campaign(tmp_path, job), "--dry-run", "--backend", "local"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and needle in err, err
    assert not (marks / "imported").exists() and not (marks / "executed").exists()
