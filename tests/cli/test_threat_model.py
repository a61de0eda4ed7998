"""`raudit audit --threat-model`: black-box unchanged, transcript trials, one-line errors."""

from __future__ import annotations

import json
import types

import pandas as pd
import pytest

from raudit.audit.mechanisms import mechanism_columns
from raudit.results.schema import SCHEMA_VERSION
from test_audit_cli import FAST, _refused, _run  # the audit CLI's test helpers


def test_black_box_is_the_default_and_keeps_its_audit_id(tmp_path):
    # the id main wrote before the threat model existed (same command, same data)
    r = _run(*FAST, "--attack", "querybased", "-S", "10", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["audit_id"] == "6cf9429e743a26d4" and s["eps_cp"] == 0.0
    row = pd.read_parquet(tmp_path / "summary").iloc[0]
    assert row["threat_model"] == "black-box" and row["schema_version"] == SCHEMA_VERSION
    assert pd.isna(row["eps_true"])  # identity emits no privacy events
    assert "mechanism n/a (no privacy events)" in row["verdict_line"]


def test_transcript_audit_of_paper_writes_one_summary_row(tmp_path):
    args = ["--impl", "paper", "--threat-model", "transcript", "-S", "10000", "--out",
            str(tmp_path), "--json"]
    r = _run(*args)
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    # eps_true of paper's 10,560 Laplace(1,000) argmax votes at eps 1 (dp_accounting PLD):
    # 33 iterations of 320, the last past eps (tests/audit/test_eps_true_golden.py)
    assert s["eps_true"] == pytest.approx(0.51184, abs=1e-4) and s["eps_true_method"] == "pld"
    assert s["threat_model"] == "transcript" and s["models_ok"] == 20000
    audited = max(s["eps_cp"], s["eps_curve"])
    assert 0 < audited < s["eps_true"]  # a lower bound of the mechanism's eps (fixed seed)
    assert s["tightness"] == pytest.approx(audited / s["eps_true"])
    assert s["verdict_line"].startswith("claimed 1.00, mechanism 0.51; audited >= ")
    assert "under-counts" not in s["verdict_line"]
    summary, est = pd.read_parquet(tmp_path / "summary"), pd.read_parquet(tmp_path / "estimates")
    assert len(summary) == 1 and set(est["audit_id"]) == {s["audit_id"]}
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["threat_model"]["level"] == "transcript"
    assert spec["mechanism"] == {"noise": "laplace", "scale": 1000.0, "queries": 10560,
                                 "aggregation": "argmax"}
    # the same command again: same numbers, no second row
    again = json.loads(_run(*args).stdout)
    assert again["eps_cp"] == s["eps_cp"] and again["audit_id"] == s["audit_id"]
    assert len(pd.read_parquet(tmp_path / "summary")) == 1


@pytest.mark.parametrize("impl,needle", [
    ("gan", "'gan' emits none"),
    ("identity", "'identity' emits none"),
    ("exec:/nonexistent/gen", "emits none"),
])
def test_transcript_refuses_a_generator_without_a_mechanism(tmp_path, impl, needle):
    _refused(tmp_path, ["--impl", impl, "--threat-model", "transcript"],
             "--threat-model transcript", needle)


@pytest.mark.parametrize("args,needles", [
    (["--threat-model", "white"], ["--threat-model must be one of black-box, white-box, transcript"]),
    (["--threat-model", "transcript", "--target-width", "0.5"], ["fixed number of trials"]),
    (["--threat-model", "transcript", "-S", "auto"], ["fixed number of trials"]),
])
def test_threat_model_bad_inputs(tmp_path, args, needles):
    _refused(tmp_path, ["--impl", "paper", *args], *needles)


def test_black_box_eps_true_from_a_dry_run_of_the_schedule():
    def game(impl, eps, **options):
        return types.SimpleNamespace(impl=impl, options=options, epsilon=eps, delta=1e-5,
                                     dataset="breast-cancer", label=None, bounds=None)

    # paper's eps_true: paper 0.51 and fixed 0.91 at eps 1 (paper's 33
    # iterations of 320 queries, the last past eps: tests/audit/test_eps_true_golden.py)
    assert mechanism_columns(game("paper", 1.0))["eps_true"] == pytest.approx(0.51184, abs=1e-4)
    assert mechanism_columns(game("fixed", 1.0))["eps_true"] == pytest.approx(0.91491, abs=1e-4)
    cols = mechanism_columns(game("paper", 1.0))
    assert cols["threat_model"] == "black-box" and "dry run" in cols["eps_true_source"]
    assert mechanism_columns(game("identity", 1.0))["eps_true"] is None
    assert mechanism_columns(game("identity", 1.0))["eps_true_source"] is None
    upd = mechanism_columns(game("updated", 1.0))  # votes, but no dry-run schedule
    assert upd["eps_true"] is None and "depend on training" in upd["eps_true_source"]
    cols = mechanism_columns(game("paper", 1.0, max_iter=3))  # the cap's releases
    assert cols["eps_true"] < 0.2 and "stopped by max_iter 3" in cols["eps_true_source"]
    cols = mechanism_columns(game("fixed", 1.0, analysis="data-dependent"))  # the answered set depends on the votes: no dry run
    assert cols["eps_true"] is None and "analysis=data-dependent" in cols["eps_true_source"]


def test_transcript_audit_of_data_dependent_fixed_reads_one_runs_votes(tmp_path):
    """Like gpate: one run's Confident-GNMax events give the Gaussian releases (threshold
    checks at sigma1, answered histograms at sigma2); eps_true is their exact curve."""
    r = _run("--impl", "fixed", "-o", "analysis=data-dependent", "--epsilon", "4",
             "--max-iter", "3", "--threat-model", "transcript", "-S", "2000", "--out",
             str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["threat_model"] == "transcript" and s["models_ok"] == 4000
    assert s["eps_true_method"] == "pld" and "queries answered" in s["eps_true_source"]
    assert 0 < max(s["eps_cp"], s["eps_curve"]) < s["eps_true"]  # a lower bound (fixed seed)
    mech = json.loads((tmp_path / "raudit.json").read_text())["spec"]["mechanism"]
    assert mech["aggregation"] == "confident-gnmax"
    assert 0 < mech["histogram_queries"] <= mech["threshold_queries"]
    assert mech["histogram_sigma"] < mech["threshold_sigma"]
    assert pd.read_parquet(tmp_path / "summary").iloc[0]["eps_true"] == s["eps_true"]
    # the smooth-sensitivity release of the data-dependent eps is not in this transcript
    uncovered = [n for n in s["notes"] if n.startswith("not covered by this transcript")]
    assert any("released data-dependent eps" in n and "smooth-sensitivity" in n
               for n in uncovered), s["notes"]


def test_data_dependent_fixed_keeps_its_other_refusals(tmp_path):
    _refused(tmp_path, ["--impl", "fixed", "-o", "analysis=data-dependent", "--threat-model",
                        "active"], "analysis=data-dependent", "no dry-run schedule")
    _refused(tmp_path, ["--impl", "fixed", "-o", "analysis=data-dependent", "--threat-model",
                        "transcript", "--one-run", "--canaries", "10"],
             "not built for fixed's data-dependent analysis")


@pytest.mark.parametrize("args,needles", [
    (["--one-run", "--threat-model", "transcript", "--target-width", "0.5"],
     ["--one-run is one run", "sequential"]),
    (["--one-run", "--threat-model", "transcript", "--until-ceiling"], ["--one-run is one run"]),
    (["--one-run", "--threat-model", "transcript", "-S", "auto"], ["--one-run is one run"]),
    (["--one-run"], ["--canaries 1000 is more than the 455 training rows"]),  # black-box
    (["--one-run", "--canaries", "3", "--sequential", "anytime"], ["its own stopping rule"]),
    (["--one-run", "--threat-model", "transcript", "--canaries", "1"], ["at least 2"]),
    # the worst-case table has fewer rows than 100,000 canaries
    (["--one-run", "--threat-model", "transcript", "--canaries", "100000"],
     ["--canaries 100000 is more than the", "training rows"]),
])
def test_one_run_bad_inputs(tmp_path, args, needles):
    _refused(tmp_path, ["--impl", "paper", *args], *needles)


def test_one_run_transcript_audit_records_its_canaries(tmp_path):
    r = _run("--impl", "fixed", "--epsilon", "4", "--threat-model", "transcript", "--one-run",
             "--canaries", "20", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["canaries"] == 20 and 0 <= s["one_run_correct"] <= s["one_run_guesses"] <= 20
    assert s["eps_one_run"] >= 0 and s["eps_cp"] is None
    assert s["eps_true"] == pytest.approx(3.698, abs=1e-3)  # fixed's 12,800 GNMax votes, eps 4
    assert s["verdict"].startswith("one-run audit of 20 canaries (640 queries each)")
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["one_run"] == {"canaries": 20} and "shadow_models" not in spec
    assert "20 canaries" in spec["threat_model"]["canaries"]


@pytest.mark.parametrize("args,needles", [
    (["--sequential", "alpha"], ["--sequential takes anytime"]),
    (["--sequential", "anytime", "-S", "50", "--first-stage", "50"], ["at least two stages"]),
    (["--sequential", "anytime", "--threat-model", "transcript", "--one-run"],
     ["its own stopping rule"]),
    (["--sequential", "anytime", "--threat-model", "transcript", "--target-width", "0.3"],
     ["its own stopping rule"]),
])
def test_anytime_bad_inputs(tmp_path, args, needles):
    _refused(tmp_path, ["--impl", "paper", *args], *needles)


def test_anytime_transcript_audit_end_to_end(tmp_path):
    r = _run("--impl", "fixed", "--epsilon", "4", "--threat-model", "transcript", "--sequential",
             "anytime", "-S", "500", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["models_ok"] == 1000 and s["looks"] == 10 and 0 < s["eps_anytime"] < s["eps_true"]
    assert s["stop_reason"].startswith("reached the last look") and s["eps_cp"] is None
    assert s["verdict"].startswith("anytime-valid audit: eps >= ")
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["sequential"] == {"rule": "anytime", "look_every": 100}


def test_schedule_from_one_run_of_a_port():
    """A port's votes depend on training: read off one run's events (tiny fit)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))
    from test_generator_contract import small_table

    from raudit.audit.run_schedule import schedule_from_run
    from raudit.data.dataset import infer_columns

    df = small_table()
    sched, true = schedule_from_run("updated", {"max_iter": 2}, df, infer_columns(df), 5.0,
                                    1e-5, seed=1)
    mech = sched.mechanism
    # updated draws Laplace(lambda = 1e-3) (its `direct` noise scale), and rows reach 2 of
    # its teachers: scale 1e-3 / 2 per unit shift, each vote one threshold coordinate
    assert mech.noise == "laplace" and mech.scale == pytest.approx(5e-4)
    assert mech.aggregation == "threshold" and mech.queries > 0
    assert "events of one training run" in sched.source and true.eps > 5.0


@pytest.mark.slow
def test_updated_is_violated_at_transcript_level(tmp_path):
    """updated's accountant charges Lap(1/lambda) but its votes draw Lap(lambda): the
    transcript shows it (issue 29's under-charging port; one training run's events)."""
    r = _run("--impl", "updated", "--max-iter", "2", "--threat-model", "transcript", "-S",
             "2000", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["eps_true"] > 100 and s["eps_true_method"] == "pure-dp"
    assert s["eps_cp"] > 1.0 and "VIOLATED" in s["verdict"]
    assert "the accountant under-counts" in s["verdict_line"] and "VIOLATED" in s["verdict_line"]


def test_transcript_audit_of_dpgan_is_a_dry_run_of_its_dp_sgd_steps(tmp_path):
    r = _run("--impl", "dpgan", "--dataset", "worst-case", "--threat-model", "transcript", "-S",
             "2000", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    # 5 rows, batch 64: full-batch DP-SGD, 1,500 critic steps (dp_accounting PLD)
    assert s["eps_true"] == pytest.approx(0.91488, abs=1e-4) and s["eps_true_method"] == "pld"
    assert s["features"] == "gradient-transcript" and s["models_ok"] == 4000
    assert 0 < max(s["eps_cp"], s["eps_curve"]) < s["eps_true"]
    assert "dry run of the schedule: 1,500 critic steps" in s["eps_true_source"]
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["mechanism"]["aggregation"] == "dp-sgd" and spec["mechanism"]["sampling_rate"] == 1.0
    assert "gradient" in spec["threat_model"]["sees"]
    assert any("no critic trained" in n for n in s["notes"])


def test_one_run_transcript_of_dpgan_gives_each_canary_every_step(tmp_path):
    r = _run("--impl", "dpgan", "--dataset", "worst-case", "--threat-model", "transcript",
             "--one-run", "--canaries", "5", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["canaries"] == 5 and s["verdict"].startswith("one-run audit of 5 canaries (1500 steps each)")


def test_black_box_eps_true_of_dpgan_from_its_dry_run():
    g = types.SimpleNamespace(impl="dpgan", options={}, epsilon=1.0, delta=1e-5,
                              dataset="worst-case", label=None, bounds=None)
    cols = mechanism_columns(g)
    assert cols["eps_true"] == pytest.approx(0.91488, abs=1e-4) and cols["eps_true_method"] == "pld"


def test_gpate_transcript_with_shared_teacher_state_shifts_a_slots_votes():
    """issue 47: with one Adam state per slot a record moves its slot's 4 teachers' votes:
    the audited releases are one vote's shift at sigma / 4, and eps_true is theirs."""
    from raudit.audit.run_schedule import schedule_from_run
    from raudit.data.dataset import infer_columns
    import numpy as np

    rng = np.random.default_rng(0)  # 120 rows: 8 teachers of 15, two slots of 4
    df = pd.DataFrame({"a": rng.normal(size=120), "b": rng.uniform(size=120)})
    df["label"] = (df.a + rng.normal(size=120) > 0).astype(int)
    opts = {"preset": "paper-tabular", "max_iter": 2, "slot_teachers": 4}
    off, t_off = schedule_from_run("gpate", opts, df, infer_columns(df), 1e4, 1e-5, seed=0)
    on, t_on = schedule_from_run("gpate", {**opts, "shared_teacher_state": True}, df,
                                 infer_columns(df), 1e4, 1e-5, seed=0)
    assert (off.mechanism.threshold_sigma, off.mechanism.histogram_sigma) == (6.0, 2.0)
    assert (on.mechanism.threshold_sigma, on.mechanism.histogram_sigma) == (1.5, 0.5)
    assert "4 teachers per row" in on.source and "teachers per row" not in off.source
    assert t_on.eps > 3 * t_off.eps


def test_transcript_audit_of_gpate_reads_one_runs_gradient_votes(tmp_path):
    r = _run("--impl", "gpate", "--epsilon", "20", "--max-iter", "2", "--threat-model",
             "transcript", "-S", "2000", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["eps_true_method"] == "pld" and "2 steps applied" in s["eps_true_source"]
    assert 0 < s["eps_cp"] <= max(s["eps_cp"], s["eps_curve"]) < s["eps_true"]
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["mechanism"]["aggregation"] == "confident-gnmax"
    assert spec["mechanism"]["threshold_queries"] == 300


def test_gpate_one_run_transcript_is_refused_before_training(tmp_path):
    _refused(tmp_path, ["--impl", "gpate", "--threat-model", "transcript", "--one-run",
                        "--canaries", "10"], "not split among canaries")


def test_black_box_anytime_audit_stops_on_a_gross_leak(tmp_path):
    """identity leaks its data: the test martingale rejects eps = 1 at the third look
    (stage 1 only trains the rule), valid at every look; the CP bound is reported beside."""
    args = [*FAST, "--attack", "querybased", "--sequential", "anytime", "--first-stage", "10",
            "-S", "80", "--out", str(tmp_path), "--json"]
    r = _run(*args)
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["looks"] == 3 and s["eps_anytime"] > 1.0 and s["models_ok"] == 80
    assert s["stop_reason"].startswith("the anytime-valid eps_lo")
    assert s["verdict"].startswith("anytime-valid audit: eps >= ") and "VIOLATED" in s["verdict"]
    assert "VIOLATED" in s["verdict_line"] and s["threat_model"] == "black-box"
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["sequential"]["rule"] == "anytime"
    again = json.loads(_run(*args).stdout)  # resumes: the same looks, no model trained
    assert again["eps_anytime"] == s["eps_anytime"] and again["models_run"] == 0
    assert len(pd.read_parquet(tmp_path / "summary")) == 1


def test_black_box_one_run_audit_of_identity(tmp_path):
    args = [*FAST, "--dataset", "breast-cancer", "--one-run", "--canaries", "400", "--out",
            str(tmp_path), "--json"]
    r = _run(*args)
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["threat_model"] == "black-box" and s["canaries"] == 400 and s["models_run"] == 1
    assert s["eps_one_run"] > 1.0 and "VIOLATED" in s["verdict"] and s["eps_cp"] is None
    assert s["features"] == "dcr-difference" and "VIOLATED" in s["verdict_line"]
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["one_run"] == {"canaries": 400, "scorer": "dcr-difference"}
    assert "shadow_models" not in spec and spec["threat_model"]["level"] == "black-box"
    again = json.loads(_run(*args).stdout)  # the same run again: same bound, no second row
    assert again["eps_one_run"] == s["eps_one_run"] and again["audit_id"] == s["audit_id"]
    assert len(pd.read_parquet(tmp_path / "summary")) == 1


def test_black_box_one_run_refuses_a_data_only_audit(tmp_path):
    _refused(tmp_path, [*FAST, "--one-run", "--canaries", "3", "--synthetic-in", "a.csv",
                        "--synthetic-out", "b.csv"], "data-only")


def test_white_box_audit_end_to_end(tmp_path):
    r = _run("--backend", "local", "--impl", "gan", "--max-iter", "2", "--attack", "querybased",
             "-S", "5", "--threat-model", "white-box", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["threat_model"] == "white-box" and s["models_ok"] == 10
    spec = json.loads((tmp_path / "raudit.json").read_text())["spec"]
    assert spec["threat_model"]["level"] == "white-box" and spec["white_box"] == {"samples": 1000}
    shadow = pd.read_parquet(tmp_path / "shadow")
    # querybased on the worst case: 8 black-box features, 7 density and 4 critic features
    assert {len(v) for v in shadow["features_vec"]} == {8 + 7 + 4}


@pytest.mark.parametrize("impl,args,needle", [
    ("identity", [], "'identity' keeps none"),
    ("exec:/nonexistent/gen", [], "an exec: generator"),
    ("gan", ["--synthetic-in", "a", "--synthetic-out", "b"], "a data-only audit"),
    ("gan", ["--one-run", "--canaries", "5"], "not built for it"),
    ("gan", ["--sequential", "anytime"], "not built for it"),
])
def test_white_box_refuses_what_has_no_model(tmp_path, impl, args, needle):
    _refused(tmp_path, ["--impl", impl, "--threat-model", "white-box", *args],
             "--threat-model white-box", needle)


def test_black_box_summary_of_a_port_reads_eps_true_off_one_kept_model(tmp_path):
    r = _run("--backend", "local", "--impl", "smartnoise", "--max-iter", "3", "--attack",
             "querybased", "-S", "5", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["threat_model"] == "black-box" and s["eps_true_method"] == "pld"
    assert s["eps_true_source"].startswith("events of shadow model in/0 (fit seed ")
    shadow = pd.read_parquet(tmp_path / "shadow")
    kept = shadow[shadow["eps_true_source"].notna()]
    assert len(kept) == 1 and kept.iloc[0]["world"] == "in" and kept.iloc[0]["shadow_index"] == 0
    assert s["eps_true"] == kept.iloc[0]["eps_true"]
