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


def _flip(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01  # one bit: the smallest damage, and the hardest for Parquet to see
    path.write_bytes(bytes(data))


def test_a_flipped_bit_anywhere_in_a_part_is_caught_and_its_models_retrained(tmp_path, capsys):
    # Parquet's footer parses after most such flips and a data page often decodes to
    # other values (the red team, issue 46: 25 of 300 flips changed values silently); the
    # checksum in the part's name catches every one (raudit.results.parts)
    first = run_audit(REQ, tmp_path, LOCAL)
    keys = ("auc", "eps_cp", "eps_curve", "threshold", "models_ok", "audit_id")
    size = len(ResultStore(tmp_path).parts("shadow")[0].read_bytes())
    for offset in (4, size // 3, size // 2, size - 40, size - 5):  # magic..pages..footer
        store = ResultStore(tmp_path)
        victim = store.parts("shadow")[0]
        lost = set(pd.read_parquet(victim)["trial_id"])
        _flip(victim, offset)
        capsys.readouterr()
        again = run_audit(REQ, tmp_path, LOCAL)
        assert not victim.exists(), offset
        assert (tmp_path / "quarantine" / "shadow" / victim.name).exists()
        said = [line for line in capsys.readouterr().err.splitlines() if victim.name in line]
        assert len(said) == 1 and "checksum mismatch" in said[0], said
        assert again["models_run"] == len(lost), offset
        assert {k: again[k] for k in keys} == {k: first[k] for k in keys}, offset


def test_a_checksum_mismatch_is_one_notice_and_the_rest_reads(tmp_path):
    notices = []
    store = ResultStore(tmp_path, notice=notices.append)
    store.append("shadow", _rows(3))
    bad = store.append("shadow", _rows(2, start=3))
    _flip(bad, len(bad.read_bytes()) // 2)
    assert store.done_ids() == {"t0", "t1", "t2"}
    assert len(notices) == 1 and "checksum mismatch" in notices[0] and "\n" not in notices[0]


def test_a_folder_holding_parts_of_another_audit_is_refused_before_work(tmp_path):
    # the advice for an unreadable manifest is "delete it": the parts beside it still say
    # which manifest they were written under, so another audit never mixes its rows in
    run_audit(REQ, tmp_path, LOCAL)
    (tmp_path / "raudit.json").unlink()
    other = AuditRequest(impl="identity", attack="querybased", shadow_models=12, chunk_size=5)
    before = sorted(p.name for p in (tmp_path / "shadow").iterdir())
    with pytest.raises(ConfigError, match=r"^output folder .* holds result parts of another "
                                          r"audit \(shadow/part-.*choose another --out"):
        run_audit(other, tmp_path, LOCAL)
    assert not (tmp_path / "raudit.json").exists()
    assert sorted(p.name for p in (tmp_path / "shadow").iterdir()) == before
    again = run_audit(REQ, tmp_path, LOCAL)  # the same audit resumes: nothing to retrain
    assert again["models_run"] == 0 and again["models_ok"] == 20


def test_the_report_skips_parts_of_another_audit(tmp_path):
    from raudit.report.load import read_table

    store = ResultStore(tmp_path)
    store.ensure_manifest({"audit": 1})
    store.append("shadow", _rows(2))
    (tmp_path / "raudit.json").unlink()
    ResultStore(tmp_path)._create_manifest(ResultStore._wanted({"audit": 2}))  # by hand
    ResultStore(tmp_path).append("shadow", _rows(1, start=5))
    notices = []
    assert list(read_table(tmp_path, "shadow", notices.append)["trial_id"]) == ["t5"]
    assert len(notices) == 1 and "another manifest" in notices[0]


@pytest.mark.parametrize("read", ["done_ids", "read"])
def test_parts_whose_schemas_conflict_are_one_error_naming_the_folder(tmp_path, read):
    # issue 44 item 8: each part reads alone, so none is quarantined; the old store
    # retried forever (done_ids -> _scan_pages -> done_ids, RecursionError)
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = ResultStore(tmp_path)
    store.append("shadow", _rows(2))
    foreign = pa.table({"trial_id": ["x"], "status": pa.array([[1]], pa.list_(pa.int64()))})
    pq.write_table(foreign, store.folder("shadow") / "part-zz-foreign.parquet")
    with pytest.raises(ConfigError, match=rf"^the result parts in {tmp_path / 'shadow'} do "
                                          r"not read together \(.*move it out of the folder"):
        getattr(store, read)("shadow")
    assert len(store.parts("shadow")) == 2  # nothing quarantined: no part is damaged
