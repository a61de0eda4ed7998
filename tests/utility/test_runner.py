"""The utility run in-process: rows, identity as a calibration, resume, chunking
invariance, skipped settings, single-class synthetic labels, bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError, DataError, UnknownNameError
from raudit.results import ResultStore
from raudit.runs.utility import run_utility
from raudit.utility.chunk import score_setting, split_c
from raudit.utility.plan import UtilityRequest
from raudit.utility.runner import frame

LOCAL = EngineConfig(backend="local")
SMALL = dict(impl="identity", dataset="breast-cancer", fits=2, samples=2, classifiers=("lr", "gnb"))


def _values(out):
    df = frame(out)
    df = df[df["status"] == "ok"]
    key = ["impl", "fit_index", "sample_index", "classifier", "setting", "metric"]
    return df.sort_values(key)[key + ["value", "seed", "sample_seed"]].reset_index(drop=True)


def test_rows_and_identity_calibration(tmp_path):
    r = run_utility(UtilityRequest(**SMALL, chunk_size=1), tmp_path, LOCAL)
    df = frame(tmp_path)
    # A: 2 classifiers x 2 metrics; each of 2 x 2 synthetic tables: 2 x 2 settings x 2 metrics + 1
    assert len(df) == 4 + 4 * 9 and (df["status"] == "ok").all()
    assert set(df["setting"]) == {"A", "B", "C", "features"}
    (p,) = r["points"]
    assert p["status"] == "ok" and p["fits_ok"] == 2
    # identity releases the training table: Setting B is Setting A for deterministic
    # classifiers (lbfgs LR, GaussianNB), and the features rank exactly as the real ones
    assert p["auroc_B"] == pytest.approx(r["real"]["auroc"])
    assert p["auprc_B"] == pytest.approx(r["real"]["auprc"])
    assert p["feature_agreement"] == pytest.approx(1.0, abs=0.02)  # ties aside
    assert p["drop_vs_real"] == pytest.approx(0.0, abs=1e-12)
    assert 0.0 <= p["sra"] <= 1.0 and p["auroc_B_se"] is not None


def test_resume_skips_finished_fits_and_reproduces_missing_ones(tmp_path):
    req = UtilityRequest(**SMALL, chunk_size=1)
    run_utility(req, tmp_path, LOCAL)
    before = _values(tmp_path)
    again = run_utility(req, tmp_path, LOCAL)
    assert again["fits_run"] == 0 and not again["real_run"] and len(frame(tmp_path)) == 40
    store = ResultStore(tmp_path)
    last = store.parts("utility")[-1]  # one fit's chunk
    last.unlink()
    third = run_utility(req, tmp_path, LOCAL)
    assert third["fits_run"] == 1
    pd.testing.assert_frame_equal(_values(tmp_path), before)
    with pytest.raises(ConfigError, match="different"):
        run_utility(UtilityRequest(**{**SMALL, "samples": 3}), tmp_path, LOCAL)


def test_chunking_does_not_change_any_number(tmp_path):
    run_utility(UtilityRequest(**SMALL, chunk_size=1), tmp_path / "a", LOCAL)
    run_utility(UtilityRequest(**SMALL, chunk_size=2), tmp_path / "b", LOCAL)
    pd.testing.assert_frame_equal(_values(tmp_path / "a"), _values(tmp_path / "b"))


def test_unreachable_eps_and_unsupported_sweeps_are_skipped_with_reasons(tmp_path):
    req = UtilityRequest(impl="smartnoise", dataset="breast-cancer", epsilons=(0.01,), fits=1,
                         samples=1, classifiers=("lr",), settings=("B",), max_iter=5)
    r = run_utility(req, tmp_path / "sn", LOCAL)
    (p,) = r["points"]
    assert p["status"] == "skipped" and "below the accountant's floor" in p["reason"]
    req = UtilityRequest(**{**SMALL, "fits": 1, "samples": 1}, teachers=("N/100",),
                         settings=("B",))
    r = run_utility(req, tmp_path / "id", LOCAL)
    assert r["points"][0]["status"] == "skipped"
    assert "no option 'teachers'" in r["points"][0]["reason"]
    assert r["fits_run"] == 0


def test_a_point_that_cannot_step_is_skipped_by_name_and_a_sweep_of_only_such_points_refused(tmp_path):
    # gpate on breast-cancer: eps 0.05 is below the floor of one step whatever the votes
    # (the message names the eps that would do); eps 50 steps. A campaign's estimate reads
    # the first point that can run, so such a sweep no longer stops the plan.
    from raudit.errors import NoStep
    from raudit.runs.calibrate import job_fit
    from raudit.runs.utility_job import UtilityJob

    base = dict(impl="gpate", dataset="breast-cancer", fits=1, samples=1, classifiers=("lr",),
                settings=("B",), max_iter=1)
    r = run_utility(UtilityRequest(**base, epsilons=(0.05, 50.0)), tmp_path / "both", LOCAL)
    low, high = r["points"]
    assert low["status"] == "skipped" and "cannot take a single step at eps=0.05" in low["reason"]
    assert "use eps >= " in low["reason"] and high["status"] == "ok" and high["fits_ok"] == 1
    assert job_fit(UtilityJob("j", UtilityRequest(**base, epsilons=(0.05, 50.0))))[3] == 50.0
    with pytest.raises(NoStep, match="cannot take a single step at eps=0.05"):
        run_utility(UtilityRequest(**base, epsilons=(0.05, 0.06)), tmp_path / "none", LOCAL)
    assert not (tmp_path / "none").exists()


def test_single_class_synthetic_labels_score_half_and_prevalence():
    rng = np.random.default_rng(0)
    real = pd.DataFrame(rng.uniform(size=(50, 3)), columns=["a", "b", "c"])
    real["y"] = (real["a"] > 0.6).astype(int)
    synth = real.copy()
    synth["y"] = 0
    rows = score_setting(["lr", "xgboost"], synth, real, lambda n: 1)
    for r in rows:
        assert r["single_class"]
        expected = 0.5 if r["metric"] == "auroc" else real["y"].mean()
        assert r["value"] == pytest.approx(expected)
    tr, te = split_c(synth, 3)  # a one-class table still splits (not stratified)...
    rows = score_setting(["lr"], tr, te, lambda n: 1)
    assert all(math.isnan(r["value"]) for r in rows)  # ...and its test metrics are undefined


def test_bad_input_is_rejected_before_any_work(tmp_path):
    csv = tmp_path / "multi.csv"
    pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "y": [0, 1, 2, 0, 1, 2]}).to_csv(csv, index=False)
    with pytest.raises(DataError, match="binary"):
        run_utility(UtilityRequest(impl="identity", dataset=str(csv)), tmp_path / "o", LOCAL)
    assert not (tmp_path / "o").exists()
    with pytest.raises(UnknownNameError, match="classifier"):
        run_utility(UtilityRequest(**{**SMALL, "classifiers": ("svm",)}), tmp_path / "o", LOCAL)
    with pytest.raises(ConfigError, match="epsilon"):
        run_utility(UtilityRequest(**SMALL, epsilons=(0.0,)), tmp_path / "o", LOCAL)
    with pytest.raises(ConfigError, match="teachers"):
        run_utility(UtilityRequest(**SMALL, teachers=("N/0",)), tmp_path / "o", LOCAL)


def test_iteration_cap_and_classifier_defaults():
    from raudit import data
    from raudit.utility import plan

    ds = data.load("breast-cancer")
    opts = {impl: plan.configs(UtilityRequest(impl=impl, presets=(p,)), ds)[0][0]["options"]
            for impl, p in (("turing", "default"), ("paper", "paper"))}
    assert "max_iter" not in opts["turing"]  # its own fixed 100 iterations stay
    assert opts["paper"]["max_iter"] == plan.STUDY_MAX_ITER  # the paper preset has no cap
    assert plan.classifier_names(UtilityRequest(), "mnist") == ("lr", "rf")
    assert len(plan.classifier_names(UtilityRequest(), "cervical")) == 12
    assert plan.teachers_of("N/100", 686) == 6 and plan.teachers_of("N/5000", 686) == 1


def test_conditional_sweep_only_where_supported():
    from raudit import data
    from raudit.utility import plan

    ds = data.load("breast-cancer")
    paper = plan.configs(UtilityRequest(impl="paper", conditional=(False, True)), ds)
    assert [r for _, r in paper] == ["paper has no option 'conditional' (cannot sweep it)"] * 2
    orig = plan.configs(UtilityRequest(impl="original", conditional=(False, True)), ds)
    assert [c["options"]["conditional"] for c, r in orig if r is None] == [False, True]
