"""The audit a user can trust (issue 8): the same numbers whatever the scheduling, bad
settings rejected before any work, a failed run that says so, the study's per-world
protocol next to raudit's default, and a verdict sentence."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from raudit.audit import analyse as an
from raudit.audit import runner
from raudit.audit.chunk import run_chunk
from raudit.audit.guard import AuditFailed
from raudit.audit.runner import AuditRequest
from raudit.audit.verdict import no_signal, verdict
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.results import ResultStore
from raudit.runs import dispatch
from raudit.runs.audit import run_audit

LOCAL = EngineConfig(backend="local", retries=0)
KEYS = ("auc", "threshold", "direction", "tpr", "fpr", "eps_cp", "eps_jeffreys", "eps_bayes",
        "eps_max", "tp", "fn", "tn", "fp", "models_ok", "missing")
# paper on the worst case, a few iterations per model: real (noisy) features, fast
REQ = AuditRequest(impl="paper", attack="querybased", shadow_models=20, chunk_size=7,
                   options={"max_iter": 5})


def _summary(result):
    return {k: result[k] for k in KEYS}


def test_analysis_is_a_function_of_the_set_of_trials(tmp_path):
    run_audit(REQ, tmp_path, LOCAL)
    shadow = ResultStore(tmp_path).read("shadow")
    ids = set(shadow["trial_id"])
    ref = an.analyse(shadow, trial_ids=ids, seed=0, delta=1e-5)
    for seed in range(3):  # the store's row order is the order chunks happened to finish
        shuffled = shadow.sample(frac=1.0, random_state=seed).reset_index(drop=True)
        assert an.analyse(shuffled, trial_ids=ids, seed=0, delta=1e-5) == ref
    # a trial written twice (two writers, a retried chunk) counts once
    doubled = pd.concat([shadow.iloc[::-1], shadow.iloc[:5]], ignore_index=True)
    assert an.analyse(doubled, trial_ids=ids, seed=0, delta=1e-5) == ref


@pytest.mark.slow
def test_same_seed_same_summary_whatever_chunking_workers_or_resumes(tmp_path, monkeypatch):
    base = _summary(run_audit(REQ, tmp_path / "a", LOCAL))
    other_chunks = AuditRequest(**{**REQ.__dict__, "chunk_size": 3})
    assert _summary(run_audit(other_chunks, tmp_path / "b", LOCAL)) == base
    # interrupted after two chunks, resumed with yet another chunk size
    calls = {"n": 0}

    def flaky(spec):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        return run_chunk(spec)

    monkeypatch.setitem(dispatch.SUBSTITUTES, "audit", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_audit(REQ, tmp_path / "c", LOCAL)
    monkeypatch.undo()
    resumed = AuditRequest(**{**REQ.__dict__, "chunk_size": 20})
    assert _summary(run_audit(resumed, tmp_path / "c", LOCAL)) == base


@pytest.mark.slow
@pytest.mark.ray
def test_ray_workers_give_the_local_summary(tmp_path):
    pytest.importorskip("ray")
    base = _summary(run_audit(REQ, tmp_path / "local", LOCAL))
    ray_run = run_audit(AuditRequest(**{**REQ.__dict__, "chunk_size": 4}), tmp_path / "ray",
                        EngineConfig(backend="ray", workers=2))
    assert _summary(ray_run) == base


@pytest.mark.parametrize("options,needle", [
    ({"teachers": 0}, "teachers must be"),
    ({"teachers": 1000}, "1000 teachers for"),
    ({"noise_scale": 5}, "noise_scale must be one of"),
    ({"lr": "abc"}, "lr must be a positive number"),
    ({"max_iter": 0}, "max_iter must be a positive integer"),
])
def test_invalid_generator_settings_rejected_before_any_work(tmp_path, monkeypatch, options, needle):
    monkeypatch.setattr("raudit.runs.schedule.run_chunks", lambda *a, **k: pytest.fail("work started"))
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=needle):
        run_audit(AuditRequest(impl="paper", attack="querybased", shadow_models=10,
                               options=options), out, LOCAL)
    assert not out.exists()  # the corrected rerun finds no leftover folder


def test_eps_below_an_implementation_floor_is_caught_by_the_probe(tmp_path, monkeypatch):
    monkeypatch.setattr("raudit.runs.schedule.run_chunks", lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(ConfigError, match="below the accountant's floor"):
        # smartnoise's delta on the 5-row worst case is 1/(5 sqrt 5): its floor
        # log(1/delta)/L is 0.024 (snsynth raises "epsilon too small" below it)
        run_audit(AuditRequest(impl="smartnoise", attack="querybased", shadow_models=10,
                               epsilon=0.02), tmp_path / "out", LOCAL)
    assert not (tmp_path / "out").exists()


def test_a_run_where_every_model_fails_says_why(tmp_path, monkeypatch):
    def broken(spec):
        raise FloatingPointError("NaN in the generator's loss")

    monkeypatch.setitem(dispatch.SUBSTITUTES, "audit", broken)
    with pytest.raises(AuditFailed, match=r"all 20 shadow models failed \(20 with: "
                                          r"FloatingPointError: NaN in the generator's loss\)"):
        run_audit(AuditRequest(impl="identity", attack="querybased", shadow_models=10),
                  tmp_path, LOCAL)
    assert AuditFailed.exit_code == 1


def test_two_runs_cannot_share_an_output_folder(tmp_path):
    store = ResultStore(tmp_path)
    with store.lock():
        with pytest.raises(ConfigError, match=r"in use by pid \d+"):
            run_audit(AuditRequest(impl="identity", attack="querybased", shadow_models=5),
                      tmp_path, LOCAL)
    run_audit(AuditRequest(impl="identity", attack="querybased", shadow_models=5), tmp_path, LOCAL)


def test_unwritable_out_is_refused_before_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="cannot write to --out"):
        run_audit(AuditRequest(impl="identity", attack="querybased", shadow_models=5),
                  blocker / "sub", LOCAL)


def test_per_world_protocol_reproduces_the_study_harness_size_leak(tmp_path):
    """`independent` ignores its data, so no attack may tell the worlds apart, unless the
    synthetic datasets' SIZE differs between worlds, as in the study's harness."""
    req = AuditRequest(impl="independent", attack="groundhog", features="naive",
                       dataset="worst-case", target="worst-case", shadow_models=100,
                       chunk_size=100)
    same = run_audit(req, tmp_path / "same", LOCAL)
    per_world = run_audit(AuditRequest(**{**req.__dict__, "synthetic_rows": "per-world"}),
                          tmp_path / "per-world", LOCAL)
    assert same["synthetic_protocol"] == "same" and per_world["synthetic_protocol"] == "per-world"
    rows = ResultStore(tmp_path / "per-world").read("shadow")
    assert set(rows.loc[rows["world"] == "in", "synthetic_rows"]) == {5}
    assert set(rows.loc[rows["world"] == "out", "synthetic_rows"]) == {4}
    # column means of 4 vs 5 rows take different value sets: the size alone gives it away
    assert per_world["auc"] == 1.0 and per_world["eps_cp"] > 2.0
    assert same["eps_cp"] == 0.0 and abs(same["auc"] - 0.5) < 0.1
    summary = pd.read_parquet(tmp_path / "per-world" / "summary")
    assert summary["synthetic_protocol"].tolist() == ["per-world"]


def test_default_protocol_keeps_the_ids_of_existing_audits():
    game, _, _ = runner.prepare(AuditRequest(impl="identity", attack="querybased",
                                             shadow_models=5))
    assert "synthetic_protocol" not in game.spec()


def _row(**kw):
    base = {"epsilon": 1.0, "eps_cp": 0.0, "eps_max": 3.05, "auc": 0.5, "tpr": 0.4,
            "fpr": 0.4, "missing": 0}
    return {**base, **kw}


def test_verdict_sentences():
    assert verdict(_row(eps_cp=4.68, auc=1.0)) == (
        "claimed eps = 1; this audit shows eps >= 4.68 at 90% confidence: the claim is VIOLATED")
    text = verdict(_row())
    assert text.startswith("no violation detected of claimed eps = 1") and "eps_max = 3.05" in text
    assert "found no signal" in verdict(_row(tpr=1.0, fpr=1.0, auc=0.7))
    assert "cannot detect a violation" in verdict(_row(eps_max=0.8))
    assert verdict(_row(eps_cp=0.4, auc=0.7)).endswith("eps_max = 3.05")
    assert verdict(_row(auc=float("nan"), eps_cp=float("nan"))).startswith("no result")
    at_ceiling = verdict(_row(eps_cp=3.05, auc=1.0))
    assert at_ceiling.startswith("claimed eps = 1; this audit shows eps >= 3.05")
    assert at_ceiling.endswith("more shadow models could show a larger eps")
    assert no_signal(_row(tpr=1.0, fpr=0.995)) and not no_signal(_row(tpr=1.0, fpr=0.5))


def test_summary_row_carries_verdict_and_protocol(tmp_path):
    r = run_audit(AuditRequest(impl="identity", attack="querybased", shadow_models=100,
                               chunk_size=100), tmp_path, LOCAL)
    summary = pd.read_parquet(tmp_path / "summary")
    assert summary["verdict"].iloc[0] == r["verdict"] and "VIOLATED" in r["verdict"]
    assert np.isfinite(r["eps_cp"]) and r["eps_cp"] > 1


@pytest.mark.parametrize("config,needle", [
    ({"shadow_models": 3}, "too few"),
    ({"shadow_models": "10"}, "must be an integer"),
    ({"chunk_size": 0}, "--chunk-size"),
    ({"synthetic_rows": "lots"}, "per-world"),
    ({"neighbours": "swap"}, "--neighbours"),
    ({"target_selection": "magic"}, "--target-selection"),
    ({"epsilon": 0}, "epsilon must be a positive"),
    ({"delta": 1.5}, "delta must be in"),
    ({"shadow_modles": 10}, "unknown audit setting(s) shadow_modles"),
])
def test_request_validates_itself_like_the_cli(config, needle):
    with pytest.raises(ConfigError, match=re.escape(needle)):
        AuditRequest.from_dict(config)
