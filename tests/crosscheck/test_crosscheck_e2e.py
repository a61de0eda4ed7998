"""`raudit crosscheck` end to end, with raudit's own port standing in for the released code
(tests/crosscheck/port_external.py, out of process through the exec protocol): the faithful
stand-in passes every check; one with another stopping rule and shifted output fails
exactly the checks that should catch them. The real released package is exercised only
where its environment exists (never downloaded here)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from raudit.cli.app import app
from raudit.crosscheck.report import failed
from raudit.crosscheck.runner import CrosscheckSpec, crosscheck

STAND_IN = Path(__file__).with_name("port_external.py")
REPO = Path(__file__).resolve().parents[2]
SETTINGS = dict(epsilon=0.5, teachers=2, seed=3)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    rng = np.random.default_rng(0)
    n = 120
    path = tmp_path_factory.mktemp("tiny") / "tiny.csv"
    pd.DataFrame({"a": rng.integers(0, 50, n), "b": rng.normal(size=n), "c": rng.integers(0, 2, n),
                  "label": rng.integers(0, 2, n)}).to_csv(path, index=False)
    return str(path)


def _config(tmp_path, alter: str = "") -> str:
    cfg = {"command": [sys.executable, str(STAND_IN)], "timeout_s": 300, "name": "port-stand-in",
           "env": {"PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "PORT_ALTER": alter}}
    path = tmp_path / f"stand-in-{alter or 'faithful'}.json"
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.slow
def test_the_port_out_of_process_passes(tmp_path, tiny):
    result = crosscheck("smartnoise", tiny, CrosscheckSpec(models=3, **SETTINGS),
                        config=_config(tmp_path))
    checks = {c.name: c for c in result["checks"]}
    assert failed(result) == [], [c.summary for c in result["checks"]]
    assert set(checks) == {"stopping-iteration", "eps-trajectory", "accountant-moments",
                           "schema-ranges", "statistics", "utility", "speed"}
    assert checks["eps-trajectory"].numbers["max_rel_diff"] == 0.0  # the same float64 code
    assert checks["accountant-moments"].numbers["queries"] > 0
    assert checks["speed"].passed is None and checks["speed"].numbers["ratio"] > 0


@pytest.mark.slow
def test_another_stopping_rule_and_shifted_output_fail_the_right_checks(tmp_path, tiny):
    out = tmp_path / "report"
    # 5 models per side: fully separated KS samples give p = 2/252 < 0.2 / 8 tests
    res = CliRunner().invoke(app, ["crosscheck", "--dataset", tiny, "--seeds", "5", "--teachers", "2",
                                   "--epsilon", "0.5", "--seed", "3", "--quiet", "--out", str(out),
                                   "--alpha", "0.2",
                                   "--config", _config(tmp_path, "stop,shift")])
    assert res.exit_code == 1, res.output
    report = json.loads((out / "crosscheck.json").read_text())
    status = {c["name"]: c["status"] for c in report["checks"]}
    assert status == {"stopping-iteration": "FAIL", "eps-trajectory": "FAIL",
                      "accountant-moments": "pass", "schema-ranges": "pass", "statistics": "FAIL",
                      "utility": status["utility"], "speed": "info"}
    assert "DIFFERS" in report["verdict"] and "statistics" in report["verdict"]
    assert (out / "crosscheck.md").exists() and len(pd.read_csv(out / "models.csv")) == 10


def test_missing_environment_is_one_line_before_any_work(tmp_path, tiny, monkeypatch):
    monkeypatch.setenv("RAUDIT_UPSTREAM_DIR", str(tmp_path / "none"))
    res = CliRunner().invoke(app, ["crosscheck", "--dataset", tiny, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "raudit upstream setup smartnoise" in res.output
    assert not (tmp_path / "o" / "crosscheck.json").exists()


def _released_config() -> Path | None:
    from raudit.upstream import catalog, envs

    try:
        return envs.config_path(catalog.get("smartnoise"))
    except Exception:
        return None


@pytest.mark.slow
@pytest.mark.skipif(_released_config() is None,
                    reason="no smartnoise environment (run `raudit upstream setup smartnoise`); "
                           "CI has none and tests never download it")
def test_released_smartnoise_passes_on_a_small_table(tiny):
    result = crosscheck("smartnoise", tiny, CrosscheckSpec(models=2, **SETTINGS))
    checks = {c.name: c for c in result["checks"]}
    for name in ("stopping-iteration", "eps-trajectory", "accountant-moments", "schema-ranges"):
        assert checks[name].passed, checks[name].summary
    assert result["settings"]["patched"]["num_teachers"] == {"upstream": 0, "used": 2}
    assert os.path.basename(result["settings"]["config"]) == "exec.json"


@pytest.mark.parametrize("args, message", [
    (["--seeds", "1"], "at least 2"), (["--alpha", "1.5"], "alpha"), (["--teachers", "0"], "teachers"),
    (["--epsilon", "-1"], "epsilon"), (["--impl", "paper"], "crosscheck knows smartnoise"),
    (["--classifiers", "nope"], "nope"),
])
def test_bad_input_is_refused_before_any_work(tmp_path, tiny, args, message):
    res = CliRunner().invoke(app, ["crosscheck", "--dataset", tiny, "--config", _config(tmp_path),
                                   "--out", str(tmp_path / "o"), *args])
    assert res.exit_code == 2 and message in res.output
    assert not (tmp_path / "o" / "crosscheck.json").exists()
