"""Campaigns end to end: a job's numbers equal the same audit run alone, a failing job
does not block the others, one campaign per --out, a killed driver resumes, and a killed
worker on a 2-worker Ray pool loses no row."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from raudit.audit.runner import AuditRequest
from raudit.campaign.run import run_campaign
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.results import ResultStore
from raudit.runs import dispatch
from raudit.runs.audit import run_audit

LOCAL = EngineConfig(backend="local", retries=0)
KEYS = ("auc", "threshold", "tpr", "fpr", "eps_cp", "eps_jeffreys", "eps_bayes", "eps_max",
        "tp", "fn", "tn", "fp", "models_ok", "missing")
CAMPAIGN = """\
    name: t
    defaults: {attack: querybased, dataset: worst-case, shadow_models: 10, max_iter: 3, seed: 7}
    jobs:
      - name: wc-{impl}
        grid: {impl: [paper, original]}
        chunk_size: 3
      - name: sel
        impl: paper
        attack: groundhog
        dataset: breast-cancer
        target: auto
        target_candidates: 2
        selection_models: 8
        shadow_models: 5
        max_iter: 2
    """


def _file(tmp_path, text=CAMPAIGN):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return p


@pytest.mark.slow
def test_each_job_equals_the_same_audit_run_alone(tmp_path):
    res = run_campaign(_file(tmp_path), tmp_path / "camp", LOCAL)
    assert res["failed_jobs"] == []
    alone = {
        "wc-paper": AuditRequest(impl="paper", attack="querybased", dataset="worst-case",
                                 shadow_models=10, options={"max_iter": 3}, seed=7, chunk_size=10),
        "wc-original": AuditRequest(impl="original", attack="querybased", dataset="worst-case",
                                    shadow_models=10, options={"max_iter": 3}, seed=7),
        "sel": AuditRequest(impl="paper", attack="groundhog", dataset="breast-cancer",
                            target="auto", target_candidates=2, selection_models=8,
                            shadow_models=5, options={"max_iter": 2}, seed=7),
    }
    for name, req in alone.items():
        single = run_audit(req, tmp_path / name, LOCAL)
        job = res["jobs"][name]
        assert {k: job[k] for k in KEYS} == {k: single[k] for k in KEYS}, name
        assert job["audit_id"] == single["audit_id"]
    assert res["jobs"]["sel"]["target_row"] == str(single["target_row"])
    # the hive layout: one read, a job column; the single audit's folder has none
    summary = pd.read_parquet(tmp_path / "camp" / "summary")
    assert sorted(summary["job"].astype(str)) == ["sel", "wc-original", "wc-paper"]
    shadow = pd.read_parquet(tmp_path / "camp" / "shadow")
    assert shadow.groupby(shadow["job"].astype(str)).size().to_dict() == \
        {"sel": 10, "wc-original": 20, "wc-paper": 20}
    assert "job" not in pd.read_parquet(tmp_path / "wc-paper" / "summary").columns
    sel = pd.read_parquet(tmp_path / "camp" / "target-selection" / "shadow")
    assert set(sel["job"].astype(str)) == {"sel"}
    # a rerun resumes: nothing to train, the same results
    again = run_campaign(_file(tmp_path), tmp_path / "camp", LOCAL)
    assert again["models_run"] == 0
    assert {k: again["jobs"]["sel"][k] for k in KEYS} == {k: res["jobs"]["sel"][k] for k in KEYS}


def test_a_failing_job_is_reported_and_the_others_finish(tmp_path, monkeypatch):
    real = dispatch.run_spec

    def broken(spec):
        if spec["job"] == "wc-original":
            raise RuntimeError("this generator is broken")
        return real(spec)

    monkeypatch.setattr("raudit.runs.schedule.run_spec", broken)
    res = run_campaign(_file(tmp_path), tmp_path / "c", LOCAL, only=["wc-*"])
    assert res["failed_jobs"] == ["wc-original"]
    assert "all 20 shadow models failed" in res["jobs"]["wc-original"]["error"]
    assert "this generator is broken" in res["jobs"]["wc-original"]["error"]
    assert res["jobs"]["wc-paper"]["status"] == "ok" and res["jobs"]["wc-paper"]["models_ok"] == 20


def test_one_campaign_per_out_and_a_changed_job_is_refused(tmp_path):
    out = tmp_path / "c"
    with ResultStore(out).lock():  # another campaign (or audit) holds the folder
        with pytest.raises(ConfigError, match=r"is in use by pid \d+"):
            run_campaign(_file(tmp_path), out, LOCAL, only=["wc-paper"])
    run_campaign(_file(tmp_path), out, LOCAL, only=["wc-paper"])
    changed = _file(tmp_path, CAMPAIGN.replace("seed: 7", "seed: 8"))
    with pytest.raises(ConfigError, match="job wc-paper: output folder .* holds a different"):
        run_campaign(changed, out, LOCAL, only=["wc-paper"])


def _cli(args, **kw):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen([sys.executable, "-m", "raudit.cli.app", "campaign", *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


@pytest.mark.slow
def test_killed_driver_resumes_to_exactly_the_expected_rows(tmp_path):
    text = CAMPAIGN.replace("shadow_models: 10, max_iter: 3", "shadow_models: 30, max_iter: 20")
    cfg, out = _file(tmp_path, text), tmp_path / "c"
    proc = _cli([str(cfg), "--out", str(out), "--backend", "local", "--only", "wc-*"])
    deadline = time.time() + 120
    while time.time() < deadline and len(list(out.glob("shadow/job=*/part-*.parquet"))) < 2:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    parts = len(list(out.glob("shadow/job=*/part-*.parquet")))
    assert 2 <= parts < 2 * 10  # killed mid-run (10 chunks per job)
    second = _cli([str(cfg), "--out", str(out), "--backend", "local", "--only", "wc-*", "--json"])
    stdout, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr.decode()[-2000:]
    shadow = pd.read_parquet(out / "shadow")
    assert len(shadow) == 120 and shadow["trial_id"].is_unique and (shadow["status"] == "ok").all()
    assert len(pd.read_parquet(out / "summary")) == 2


@pytest.mark.slow
@pytest.mark.ray
def test_killed_worker_on_a_two_worker_pool_loses_no_row(tmp_path, kill_actor_after_first_part):
    ray = pytest.importorskip("ray")
    killed = kill_actor_after_first_part  # one chunk is on disk: kill a worker
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        res = run_campaign(_file(tmp_path), tmp_path / "c", EngineConfig(workers=2),
                           only=["wc-*"])
    finally:
        ray.shutdown()
    assert killed and res["failed_jobs"] == [] and res["placement"] == "2 CPU actors"
    shadow = pd.read_parquet(tmp_path / "c" / "shadow")
    assert len(shadow) == 40 and shadow["trial_id"].is_unique and (shadow["status"] == "ok").all()
    assert {n: j["models_ok"] for n, j in res["jobs"].items()} == {"wc-paper": 20, "wc-original": 20}


def test_auto_chunk_size_is_calibrated_and_changes_no_number(tmp_path, monkeypatch):
    from raudit.generators.nn import whole

    # the calibration path, whatever this host's batched products do at the job's batch of 2
    # (an AVX2 EPYC's depend on a model's position: there auto keeps one size, the rule
    # tests/campaign/test_chunk_cache.py checks)
    monkeypatch.setattr(whole, "products_batch_invariant", lambda dtype: True)
    text = CAMPAIGN.replace("chunk_size: 3", "chunk_size: auto")
    notes: list[str] = []
    res = run_campaign(_file(tmp_path, text), tmp_path / "auto", LOCAL, only=["wc-paper"],
                       notice=notes.append)
    fixed = run_campaign(_file(tmp_path), tmp_path / "fixed", LOCAL, only=["wc-paper"])
    assert {k: res["jobs"]["wc-paper"][k] for k in KEYS} == \
        {k: fixed["jobs"]["wc-paper"][k] for k in KEYS}
    (note,) = [n for n in notes if "chunk size" in n]
    assert "M=1:" in note and "M=32:" in note and note.endswith("on cpu")
    m = int(note.split("chunk size ")[1].split()[0])
    assert m in (1, 8, 10)  # 20 models on one local worker: at most 10 a chunk
    shadow = pd.read_parquet(tmp_path / "auto" / "shadow")
    assert shadow["chunk_models"].max() == m


def test_object_store_out_is_refused_before_work(tmp_path):
    with pytest.raises(ConfigError, match="object stores are not supported"):
        run_campaign(_file(tmp_path), "s3://bucket/runs", LOCAL)


def test_an_inspect_job_writes_its_folder_beside_the_audits(tmp_path):
    text = """\
        jobs:
          - name: wc
            impl: paper
            attack: querybased
            dataset: worst-case
            shadow_models: 10
            max_iter: 3
          - name: insp
            kind: inspect
            impl: paper
            dataset: breast-cancer
            max_iter: 3
            probes: false
        """
    res = run_campaign(_file(tmp_path, text), tmp_path / "out", LOCAL)
    folder = tmp_path / "out" / "inspect" / "job=insp"
    assert (folder / "inspect.json").exists() and (folder / "violations.csv").exists()
    assert res["jobs"]["insp"]["status"] == "ok" and res["jobs"]["insp"]["runs"] == 1
    assert pd.read_parquet(tmp_path / "out" / "summary")["job"].astype(str).tolist() == ["wc"]


def test_a_bad_inspect_setting_names_its_line(tmp_path):
    text = "jobs:\n  - name: i\n    kind: inspect\n    impl: paper\n    teachers: 0\n"
    with pytest.raises(ConfigError, match=r"c.yaml:\d+: job i.*teachers"):
        run_campaign(_file(tmp_path, text), tmp_path / "out", LOCAL)


@pytest.mark.parametrize("value, needle", [
    ("transcript", "takes the threat model black-box or white-box, got 'transcript'"),
    ("grey-box", "threat_model must be one of"), ("[white-box]", "threat_model must be text")])
def test_a_job_takes_the_threat_models_that_train_shadow_models(tmp_path, value, needle):
    # the registry (raudit.runs.threats) decides, before any work, with the job's line
    text = f"jobs:\n  - name: t\n    impl: identity\n    threat_model: {value}\n"
    with pytest.raises(ConfigError, match=rf"c.yaml:4: job t, key 'threat_model'.*{re.escape(needle)}"):
        run_campaign(_file(tmp_path, text), tmp_path / "out", LOCAL)
    assert not (tmp_path / "out").exists()


def test_a_white_box_job_refuses_the_anytime_rule_as_the_command_does(tmp_path):
    # `raudit audit --threat-model white-box --sequential anytime` is refused (WhiteBox.check);
    # a campaign job used to run it, as a white-box game the anytime analysis was not built for
    text = ("jobs:\n  - name: t\n    impl: gan\n    threat_model: white-box\n"
            "    anytime: true\n    shadow_models: 200\n")
    with pytest.raises(ConfigError, match=r"c.yaml:\d+: job t.*white-box.*anytime.*not built for it"):
        run_campaign(_file(tmp_path, text), tmp_path / "out", LOCAL)
    assert not (tmp_path / "out").exists()


def test_a_white_box_job_equals_the_white_box_audit_run_alone(tmp_path):
    text = """\
        name: wb
        jobs:
          - name: g
            impl: gan
            attack: querybased
            dataset: worst-case
            shadow_models: 5
            max_iter: 2
            threat_model: white-box
        """
    res = run_campaign(_file(tmp_path, text), tmp_path / "camp", LOCAL)
    single = run_audit(AuditRequest(impl="gan", attack="querybased", dataset="worst-case",
                                    shadow_models=5, options={"max_iter": 2},
                                    white_box=True), tmp_path / "alone", LOCAL)
    job = res["jobs"]["g"]
    assert job["threat_model"] == "white-box" and job["audit_id"] == single["audit_id"]
    assert {k: job[k] for k in KEYS} == {k: single[k] for k in KEYS}


@pytest.mark.slow
def test_ray_is_prestarted_for_a_fresh_campaign_and_not_for_a_finished_one(tmp_path, monkeypatch):
    import contextlib

    from raudit.campaign import run as cr

    started = []

    def prestart(engine):
        started.append(engine.backend)
        return contextlib.nullcontext()

    monkeypatch.setattr(cr, "prestart", prestart)
    path = _file(tmp_path, CAMPAIGN.split("      - name: sel")[0])
    run_campaign(path, tmp_path / "c", LOCAL)
    assert started == ["local"]
    run_campaign(path, tmp_path / "c", LOCAL)  # every job resumed: nothing may train
    assert started == ["local"]
