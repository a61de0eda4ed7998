"""`raudit audit` through Typer: a small run end to end, JSON output, and one-line errors."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from raudit.cli.app import app

runner = CliRunner()
FAST = ["--backend", "local", "--impl", "identity"]


def _run(*args):
    return runner.invoke(app, ["audit", *args])


def _one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    for n in needles:
        assert n in err, err


def _refused(tmp_path, args, *needles):
    """`raudit audit ARGS --out X` fails with one line naming ``needles``, before X exists."""
    out = tmp_path / "x"
    _one_line_error(_run(*args, "--out", str(out)), *needles)
    assert not out.exists()


def test_small_audit_end_to_end_with_json(tmp_path):
    out = tmp_path / "a"
    r = _run(*FAST, "--attack", "querybased", "-S", "10", "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["dataset"] == "worst-case" and summary["target"] == "worst-case"
    assert summary["auc"] == 1.0 and summary["models_ok"] == 20 and summary["missing"] == 0
    # models counts both worlds, as models_ok and missing do (and as the table shows it)
    assert summary["models"] == 20 and summary["models_per_world"] == 10
    assert "shadow_models" not in summary
    assert {"eps_cp", "eps_bayes", "eps_max", "saturated", "models_per_hour"} <= summary.keys()
    # the rate is of train_s, the game's training; wall_s also holds the analysis (the table
    # printed "100 models in 10.4 s, 470,543 models/hour": the rate of 0.8 s beside 10.4 s)
    assert 0 < summary["train_s"] <= summary["wall_s"]
    assert summary["models_per_hour"] == pytest.approx(20 / summary["train_s"] * 3600, rel=1e-9)
    shadow = pd.read_parquet(out / "shadow")
    assert len(shadow) == 20 and set(shadow["world"]) == {"in", "out"}
    assert len(pd.read_parquet(out / "summary")) == 1


def test_canaries_without_a_one_run_audit_is_refused(tmp_path):
    """--canaries only shapes a one-run audit: a shadow-model audit ran and ignored it."""
    _refused(tmp_path, [*FAST, "--attack", "querybased", "-S", "10", "--canaries", "5"],
             "--canaries 5 applies to a one-run audit", "--one-run")


def test_rich_summary_and_training_options(tmp_path):
    r = _run("--backend", "local", "--impl", "paper", "--attack", "querybased", "-S", "5",
             "--max-iter", "2", "--teachers", "2", "-M", "5", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert "eps_emp CP" in r.stdout and "AUC" in r.stdout and "10 ok of 10" in r.stdout
    # the table wraps a long cell at any space (the rate's digits vary): read its words
    words = " ".join(re.sub(r"[│┃]", " ", r.stdout).split())
    assert "10 models trained in " in words and "s with the analysis" in words
    opts = json.loads(pd.read_parquet(tmp_path / "shadow")["options_json"].iloc[0])
    assert opts["max_iter"] == 2 and opts["teachers"] == 2 and opts["preset"] == "default"


def test_auto_target_per_candidate_runs_mini_mias(tmp_path):
    r = _run(*FAST, "--attack", "groundhog", "-S", "5", "--target-candidates", "2",
             "--target-selection", "per-candidate", "--target-pairs", "4",
             "--out", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["dataset"] == "breast-cancer" and len(s["target_aucs"]) == 2
    assert s["target"] == f"row:{s['target_row']}" and s["selection_models"] == 16
    assert len(pd.read_parquet(tmp_path / "target-selection" / "shadow")) == 16


def test_auto_target_pool_scores_every_candidate_with_one_pool(tmp_path):
    r = _run(*FAST, "--attack", "querybased", "--dataset", "breast-cancer", "-S", "5",
             "--target-candidates", "4", "--selection-models", "16", "--out", str(tmp_path),
             "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert len(s["target_aucs"]) == 4 and s["selection_models"] == 16  # not 4 x 2 x pairs
    rows = pd.read_parquet(tmp_path / "target-selection" / "shadow")
    assert len(rows) == 16 * 4 and rows["trial_id"].is_unique
    # every candidate: 8 in and 8 out models, half of each in the attack's train split
    for _, part in rows.groupby("target"):
        assert (part["world"] == "in").sum() == 8
        assert ((part["world"] == "in") & (part["split"] == "train")).sum() == 4
    # the identity generator copies its training data: counting queries around a
    # candidate see it exactly when it was in, so the best candidate is separated
    assert max(s["target_aucs"].values()) == 1.0
    assert s["target_aucs"][s["target"].removeprefix("row:")] == 1.0


@pytest.mark.parametrize("args,needles", [
    (["--attack", "nope"], ["unknown attack 'nope'", "groundhog"]),
    (["--features", "nope"], ["feature sets"]),
    (["--attack", "querybased", "--features", "naive"], ["querybased"]),
    (["--target", "nope"], ["target row 'nope'"]),
    (["--attack", "querybased", "--target", "999"], ["not in the training data"]),
    (["--attack", "querybased", "-S", "3"], ["too few"]),
    (["--target", "worst-case", "--dataset", "breast-cancer"], ["worst-case"]),
    (["--impl", "nope"], ["unknown generator"]),
    (["--backend", "spark"], ["--backend"]),
    (["--attack", "querybased", "--chunk-size", "0"], ["--chunk-size"]),
])
def test_bad_inputs_fail_with_one_line(tmp_path, args, needles):
    _one_line_error(_run(*FAST, "--out", str(tmp_path / "x"), *args), *needles)


def test_out_folder_of_another_audit_is_refused(tmp_path):
    assert _run(*FAST, "--attack", "querybased", "-S", "5", "--out", str(tmp_path)).exit_code == 0
    _one_line_error(_run(*FAST, "--attack", "querybased", "-S", "6", "--out", str(tmp_path)),
                    "different audit")
