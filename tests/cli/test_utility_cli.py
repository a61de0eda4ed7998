"""`raudit utility` through Typer: an eps sweep end to end (JSON, PNG), the tables, errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from raudit.cli.app import app

runner = CliRunner()
FAST = ["utility", "--backend", "local", "--impl", "independent", "--dataset", "breast-cancer",
        "--fits", "1", "--samples", "2", "-c", "lr", "-c", "gnb"]


@pytest.mark.slow  # matplotlib's first import dominates
def test_eps_sweep_json_and_png(tmp_path):
    out = tmp_path / "u"
    r = runner.invoke(app, [*FAST, "-e", "0.5", "-e", "2", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert [p["label"] for p in res["points"]] == ["eps=0.5", "eps=2"]
    assert res["real"]["per_classifier"].keys() == {"lr", "gnb"}
    assert (out / "utility_vs_eps.png").stat().st_size > 1000 and res["plot"]
    assert len(pd.read_parquet(out / "utility")) == 4 + 2 * 2 * (2 * 2 * 2 + 1)


def test_tables_and_real_only(tmp_path):
    r = runner.invoke(app, [*FAST, "--out", str(tmp_path / "u")])
    assert r.exit_code == 0, r.output
    assert "Logistic Regression" in r.stdout and "Average" in r.stdout and "SRA" in r.stdout
    # and a sentence per point, not only tables
    assert any(ln.startswith("verdict: ") and "classifiers trained on its synthetic data reach"
               in ln for ln in r.stdout.splitlines()), r.stdout
    r = runner.invoke(app, ["utility", "--backend", "local", "--real-only", "--dataset",
                            "breast-cancer", "-c", "lr", "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    assert "Setting A" in r.stdout and "Logistic Regression" in r.stdout


def test_bad_input_is_one_line_exit_2(tmp_path):
    for args, needle in ((["--sweep", "lambda"], "--sweep"),
                         (["-c", "svm"], "unknown classifier"),
                         (["--conditional", "maybe"], "--conditional"),
                         (["--fits", "0"], "--fits"),
                         (["--control", "coin"], "does not vote or aggregate"),
                         (["--sweep", "eps", "-e", "1"], "at least two"),
                         (["--sweep", "eps", "-e", "1", "-e", "1.0"], "at least two")):
        r = runner.invoke(app, [*FAST, *args, "--out", str(tmp_path / "x")])
        assert r.exit_code == 2, r.output
        err = r.stderr.strip()
        assert err.startswith("error: ") and "\n" not in err and needle in err, err


def test_control_coin_runs_both_arms_and_reports_the_threshold(tmp_path):
    r = runner.invoke(app, ["utility", "--backend", "local", "--impl", "fixed", "--dataset",
                            "breast-cancer", "-o", "iterations=5", "--fits", "2", "--samples", "1",
                            "-c", "lr", "--setting", "B", "--sweep", "eps", "-e", "0.5", "-e", "5",
                            "--control", "coin", "--out", str(tmp_path / "u"), "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert [p["label"] for p in res["points"]] == ["eps=0.5", "eps=0.5 coin", "eps=5", "eps=5 coin"]
    (curve,) = res["learning"]
    assert [row["epsilon"] for row in curve["rows"]] == [0.5, 5.0]
    assert all(row["fits"] == 2 for row in curve["rows"]) and "threshold" in curve
    assert all(p["single_class_share"] is not None for p in res["points"])
