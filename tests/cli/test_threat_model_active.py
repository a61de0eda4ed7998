"""`raudit audit --threat-model active`: the auditor's canary queries and neighbours,
mechanism-only trials, the GDP fit in the estimates, one-run, one-line refusals."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from test_audit_cli import _refused, _run  # the audit CLI's test helpers


def test_active_audit_of_fixed_records_its_threat_model(tmp_path):
    args = ["--impl", "fixed", "--epsilon", "2", "--threat-model", "active", "-S", "10000",
            "--out", str(tmp_path), "--json"]
    r = _run(*args)
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["threat_model"] == "active" and s["models_ok"] == 20000
    assert s["target"] == "worst-case (active)" and s["features"] == "canary-votes"
    assert s["eps_true"] == pytest.approx(1.839, abs=1e-3)  # fixed's 12,800 GNMax votes
    # the GDP fit reads all 20,000 likelihood ratios: far tighter than one threshold, and
    # below the mechanism's mu (0.465) at this fixed seed
    assert s["mu_gdp"] < s["mu_fit"] < 0.4653
    assert s["mu_fit"] > 0.9 * 0.4653
    est = pd.read_parquet(tmp_path / "estimates")
    by = dict(zip(est["estimator"], est["eps_lo"]))
    assert by["gdp_fit"] == pytest.approx(s["estimates"]["gdp_fit"])
    assert set(est.loc[est["estimator"] == "gdp_fit", "assumption"]) == {"gaussian-tradeoff"}
    assert by["gdp_fit"] < s["eps_true"]
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["threat_model"]["level"] == "active"
    assert "REPLACE" in spec["threat_model"]["canaries"]
    assert any("replace all the student's 12,800 queries" in n for n in s["notes"])
    assert s["verdict_line"].startswith("claimed 2.00, mechanism 1.84; audited >= ")
    assert s["verdict_line"].endswith(f"GDP fit mu >= {s['mu_fit']:.3f} of the mechanism's "
                                      "0.465 (94%; assumes a Gaussian trade-off)")
    again = json.loads(_run(*args).stdout)  # same command: same id, same numbers, one row
    assert again["audit_id"] == s["audit_id"] and again["mu_fit"] == s["mu_fit"]
    assert len(pd.read_parquet(tmp_path / "summary")) == 1


def test_active_and_transcript_are_different_audits(tmp_path):
    ids = {}
    for level in ("transcript", "active"):
        r = _run("--impl", "paper", "--threat-model", level, "-S", "200", "--out",
                 str(tmp_path / level), "--json")
        assert r.exit_code == 0, r.output
        ids[level] = json.loads(r.stdout)["audit_id"]
    assert ids["transcript"] != ids["active"]


def test_active_one_run_spreads_the_canaries_over_the_teachers(tmp_path):
    r = _run("--impl", "fixed", "--epsilon", "4", "--threat-model", "active", "--one-run",
             "--canaries", "4", "--teachers", "2", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["canaries"] == 4 and s["eps_one_run"] >= 0 and s["eps_cp"] is None
    # 2 teachers hold two canaries each: half of fixed's 12,800 queries per canary
    assert s["verdict"].startswith("one-run audit of 4 canaries (6400 queries each)")
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["one_run"] == {"canaries": 4} and "2 teachers" in spec["threat_model"]["neighbours"]


@pytest.mark.parametrize("impl,needle", [
    ("exec:/nonexistent/gen", "runs in its own process"),
    ("gan", "'gan' has none"),
    ("identity", "'identity' has none"),
    ("smartnoise", "'smartnoise' has none"),
    ("gpate", "'gpate' has none"),
])
def test_active_refuses_a_generator_without_a_mechanism(tmp_path, impl, needle):
    _refused(tmp_path, ["--impl", impl, "--threat-model", "active"], "--threat-model active",
             needle)


@pytest.mark.parametrize("args,needles", [
    (["--threat-model", "active", "--target-width", "0.5"], ["fixed number of trials"]),
    (["--threat-model", "active", "-S", "auto"], ["fixed number of trials"]),
    (["--threat-model", "active", "--synthetic-in", "a.csv", "--synthetic-out", "b.csv"],
     ["data-only audit"]),
    (["--threat-model", "active", "--one-run", "--canaries", "100000"],
     ["--canaries 100000 is more than the", "training rows"]),
    (["--threat-model", "active", "--one-run", "--until-ceiling"], ["--one-run is one run"]),
])
def test_active_bad_inputs(tmp_path, args, needles):
    _refused(tmp_path, ["--impl", "paper", *args], *needles)


def test_active_anytime_audit_end_to_end(tmp_path):
    r = _run("--impl", "fixed", "--epsilon", "4", "--threat-model", "active", "--sequential",
             "anytime", "-S", "500", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["threat_model"] == "active" and s["looks"] == 10
    assert 0 < s["eps_anytime"] < s["eps_true"] and s["eps_cp"] is None
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["sequential"] == {"rule": "anytime", "look_every": 100}


def test_black_box_estimates_carry_no_gdp_fit(tmp_path):
    """The GDP fit needs the raw statistic: a black-box audit writes the same estimator
    rows as before it existed."""
    from test_audit_cli import FAST

    r = _run(*FAST, "--attack", "querybased", "-S", "10", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["audit_id"] == "6cf9429e743a26d4"
    est = pd.read_parquet(tmp_path / "estimates")
    assert "gdp_fit" not in set(est["estimator"]) and len(est) > 0
