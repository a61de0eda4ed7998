"""The out-of-process adapter (--impl exec:CONFIG) against a fake external program."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from raudit import generators
from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError, DataError
from raudit.generators.exec_adapter import exec_class
from raudit.runs.audit import run_audit

FAKE = Path(__file__).with_name("fake_external.py")


def _config(tmp_path, name="fake", **extra) -> str:
    cfg = {"command": [sys.executable, str(FAKE), *extra.pop("args", [])], "timeout_s": 60,
           "name": name, **extra}
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(cfg))
    return str(p)


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.integers(20, 60, 40), "x": rng.normal(size=40),
                         "label": rng.integers(0, 2, 40)})


def test_fit_and_sample_through_files(tmp_path, table):
    cls = generators.get("exec:" + _config(tmp_path))
    model = cls().fit(table, epsilon=2.0, seed=3)
    a, b = model.sample(25, seed=1), model.sample(25, seed=1)
    pd.testing.assert_frame_equal(a, b)  # the external seed is honoured
    assert list(a.columns) == list(table.columns) and (a.dtypes == table.dtypes).all()
    assert a["age"].between(20, 59).all()
    s = model.summary()
    assert s["iterations"] == 3 and s["eps_hat"] == 2.0 and len(s["events"]) == 3


def test_an_audit_runs_an_external_generator(tmp_path):
    impl = "exec:" + _config(tmp_path)
    r = run_audit(AuditRequest(impl=impl, attack="querybased", shadow_models=5, chunk_size=10),
                  tmp_path / "out", EngineConfig(backend="local"))
    assert r["models_ok"] == 10 and r["impl"] == impl


def test_failures_are_one_line_errors(tmp_path, table, monkeypatch):
    with pytest.raises(ConfigError, match="not found"):
        exec_class(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"command": "python fake.py"}))
    with pytest.raises(ConfigError, match="list of strings"):
        exec_class(str(bad))
    nope = tmp_path / "nope.json"
    nope.write_text(json.dumps({"command": ["/no/such/env/bin/python", "x.py"]}))
    with pytest.raises(ConfigError, match="not found; create its environment"):
        exec_class(str(nope))
    cls = exec_class(_config(tmp_path, "failing", env={"FAKE_FAIL": "1"}))
    with pytest.raises(DataError, match="exited with status 1: fake failure"):
        cls().fit(table, epsilon=1.0)
    slow = exec_class(_config(tmp_path, "slow", env={"FAKE_SLEEP": "5"}, timeout_s=0.5))
    with pytest.raises(DataError, match="timeout"):
        slow().fit(table, epsilon=1.0)
    short = exec_class(_config(tmp_path, "short"))().fit(table, epsilon=1.0)
    monkeypatch.setenv("FAKE_ROWS", "3")
    with pytest.raises(DataError, match="returned 3 rows"):
        short.sample(10)


def test_no_shell_sees_the_arguments(tmp_path, table):
    marker = tmp_path / "pwned"
    cls = exec_class(_config(tmp_path, "literal", args=[f"; touch {marker}"]))
    # the extra argument reaches the program as one literal argv entry (no shell parses it)
    cls().fit(table, epsilon=1.0)
    assert not marker.exists()


def test_default_output_folders_name_exec_impls_by_their_config():
    from raudit.generators.exec_adapter import folder_name

    assert folder_name("exec:/home/u/.cache/raudit/upstream/smartnoise/exec.json") == "exec-smartnoise"
    assert folder_name("exec:/tmp/exo/fake.json") == "exec-fake"
    assert folder_name("paper") == "paper" and folder_name("pkg.mod:Gen") == "pkg.mod.Gen"
