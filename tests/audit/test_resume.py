"""Resume: an interrupted audit finishes on rerun with no duplicates and the same answer;
failed chunks are recorded and retried on rerun; a folder holding another audit is refused."""

from __future__ import annotations

import pandas as pd
import pytest

from raudit.audit.chunk import run_chunk
from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.results import ResultStore
from raudit.runs import dispatch
from raudit.runs.audit import run_audit

LOCAL = EngineConfig(backend="local", retries=1)
REQ = AuditRequest(impl="paper", attack="querybased", shadow_models=10, chunk_size=3,
                   options={"max_iter": 3})
KEYS = ("auc", "eps_cp", "eps_bayes", "eps_max", "tp", "fn", "tn", "fp", "models_ok", "missing")


def _interrupt_after(n, monkeypatch):
    calls = {"n": 0}

    def flaky(spec):
        calls["n"] += 1
        if calls["n"] > n:
            raise KeyboardInterrupt  # like Ctrl-C (or a killed driver) mid-run
        return run_chunk(spec)

    monkeypatch.setitem(dispatch.SUBSTITUTES, "audit", flaky)


def test_interrupted_audit_resumes_to_the_same_result(tmp_path, monkeypatch):
    fresh = run_audit(REQ, tmp_path / "fresh", LOCAL)
    _interrupt_after(3, monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        run_audit(REQ, tmp_path / "resumed", LOCAL)
    store = ResultStore(tmp_path / "resumed")
    assert len(store.read("shadow")) == 9  # three chunks of 3 were written at once
    monkeypatch.undo()
    resumed = run_audit(REQ, tmp_path / "resumed", LOCAL)
    assert resumed["models_run"] == 20 - 9
    shadow = pd.read_parquet(tmp_path / "resumed" / "shadow")
    assert len(shadow) == 20 and shadow["trial_id"].is_unique
    assert {k: resumed[k] for k in KEYS} == {k: fresh[k] for k in KEYS}
    # a rerun of a finished audit trains nothing and adds no summary row
    again = run_audit(REQ, tmp_path / "resumed", LOCAL)
    assert again["models_run"] == 0 and len(store.read("summary")) == 1


def test_failed_chunk_is_recorded_then_redone_on_rerun(tmp_path, monkeypatch):
    bad = {"seen": 0}

    def fails_on_second_chunk(spec):
        if spec["trials"][0]["shadow_index"] == 3 and spec["world"] == "in":
            bad["seen"] += 1
            raise RuntimeError("simulated crash")
        return run_chunk(spec)

    monkeypatch.setitem(dispatch.SUBSTITUTES, "audit", fails_on_second_chunk)
    first = run_audit(REQ, tmp_path, LOCAL)
    assert bad["seen"] == 2  # tried, retried once, then recorded
    assert first["missing"] == 3 and first["failed_chunks"] == 1 and first["models_ok"] == 17
    shadow = ResultStore(tmp_path).read("shadow")
    failed = shadow[shadow["status"] == "failed"]
    assert len(failed) == 3 and failed["error"].str.contains("simulated crash").all()
    monkeypatch.undo()
    second = run_audit(REQ, tmp_path, LOCAL)
    assert second["models_run"] == 3 and second["missing"] == 0
    ok = ResultStore(tmp_path).read("shadow").query("status == 'ok'")
    assert ok["trial_id"].is_unique and len(ok) == 20
    assert len(ResultStore(tmp_path).read("summary")) == 2  # the answer changed: a new row


def test_folder_of_another_audit_is_refused(tmp_path):
    run_audit(AuditRequest(impl="identity", attack="querybased", shadow_models=5), tmp_path, LOCAL)
    with pytest.raises(ConfigError, match="different audit"):
        run_audit(AuditRequest(impl="identity", attack="querybased", shadow_models=5, seed=1),
                  tmp_path, LOCAL)


def test_finished_audit_reruns_without_starting_ray(tmp_path):
    ray = pytest.importorskip("ray")
    req = AuditRequest(impl="identity", attack="querybased", shadow_models=5)
    run_audit(req, tmp_path, LOCAL)
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    again = run_audit(req, tmp_path, EngineConfig(backend="ray"))
    assert again["models_run"] == 0 and not ray.is_initialized()
