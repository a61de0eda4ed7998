"""The store under concurrency and damage: one run per folder, damaged parts set aside,
and a resume that retrains exactly the models whose rows were lost."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.results import ResultStore
from raudit.results.files import check_writable
from raudit.runs.audit import run_audit

LOCAL = EngineConfig(backend="local", retries=0)
REQ = AuditRequest(impl="identity", attack="querybased", shadow_models=10, chunk_size=5)


def _rows(n, start=0):
    return [{"trial_id": f"t{i}", "audit_id": "a", "world": "in", "split": "train",
             "status": "ok", "shadow_index": i} for i in range(start, start + n)]


def test_lock_is_exclusive_and_names_the_holder(tmp_path):
    store = ResultStore(tmp_path)
    with store.lock():
        with pytest.raises(ConfigError, match=rf"in use by pid {os.getpid()} on .*choose another"):
            with ResultStore(tmp_path).lock():
                pass
    with ResultStore(tmp_path).lock():  # released: the next run may take it
        pass


@pytest.mark.parametrize("damage", ["zero-bytes", "truncated", "garbage-footer"])
def test_damaged_part_is_quarantined_with_one_notice(tmp_path, damage):
    notices = []
    store = ResultStore(tmp_path, notice=notices.append)
    store.append("shadow", _rows(3))
    bad = store.append("shadow", _rows(2, start=3))
    data = bad.read_bytes()
    bad.write_bytes({"zero-bytes": b"", "truncated": data[: len(data) // 2],
                     "garbage-footer": data[:-8] + b"\0" * 8}[damage])
    assert set(store.read("shadow")["trial_id"]) == {"t0", "t1", "t2"}
    assert store.done_ids() == {"t0", "t1", "t2"}
    assert not bad.exists() and (tmp_path / "quarantine" / "shadow" / bad.name).exists()
    assert len(notices) == 1 and "moved to quarantine" in notices[0] and "\n" not in notices[0]
    assert pd.read_parquet(tmp_path / "shadow").shape[0] == 3  # pandas users read it too


def test_resume_retrains_only_the_models_of_a_damaged_part(tmp_path):
    first = run_audit(REQ, tmp_path, LOCAL)
    store = ResultStore(tmp_path)
    victim = store.parts("shadow")[1]
    lost = set(pd.read_parquet(victim)["trial_id"])
    victim.write_bytes(b"")  # a crash outside our rename, or a full disk
    again = run_audit(REQ, tmp_path, LOCAL)
    assert again["models_run"] == len(lost) == 5
    assert {k: again[k] for k in ("auc", "eps_cp", "models_ok")} == \
           {k: first[k] for k in ("auc", "eps_cp", "models_ok")}


def test_concurrent_duplicate_rows_are_read_once(tmp_path):
    run_audit(REQ, tmp_path, LOCAL)
    store = ResultStore(tmp_path)
    for p in store.parts("shadow")[:2]:  # as if a second writer had written the same trials
        store.append("shadow", pd.read_parquet(p))
    again = run_audit(REQ, tmp_path, LOCAL)
    assert again["models_ok"] == 20 and again["models_run"] == 0


def test_check_writable(tmp_path):
    check_writable(tmp_path / "new" / "deeper")
    assert not (tmp_path / "new").exists()  # the check leaves no trace
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        check_writable(tmp_path / "f")
    with pytest.raises(ConfigError, match="cannot write to --out"):
        check_writable(tmp_path / "f" / "sub")


def test_every_run_refuses_a_file_as_out_before_it_reads_the_request(tmp_path):
    # results.files.as_folder: the first check of run_audit, run_utility and the transcript
    # and one-run audits (the unknown dataset would be the next error)
    from raudit.runs.one_run import run_one_run_audit
    from raudit.runs.transcript import run_transcript_audit
    from raudit.runs.utility import run_utility
    from raudit.utility.plan import UtilityRequest

    (tmp_path / "f").write_text("x")
    out = tmp_path / "f"
    req = AuditRequest(impl="paper", attack="querybased", dataset="no-such-dataset")
    for run in (lambda: run_audit(req, out, LOCAL), lambda: run_one_run_audit(req, out, canaries=4),
                lambda: run_transcript_audit(req, out),
                lambda: run_utility(UtilityRequest(dataset="no-such-dataset"), out, LOCAL)):
        with pytest.raises(ConfigError, match=f"^--out {out} is a file; give a folder$"):
            run()
    assert (tmp_path / "f").read_text() == "x"
