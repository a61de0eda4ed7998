"""The estimate said before an audit trains anything: its first line holds the total
(selection + game + analysis), iterations come from the closed form for the PATE family,
and a long run names the flags that shrink it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from raudit import data
from raudit.cli.app import app
from raudit.generators import get
from raudit.runs.estimate import Estimate, closed_form_iterations, line, rate_at


def test_first_line_before_training_is_the_total_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))  # no cached rates
    res = CliRunner().invoke(app, ["audit", "--impl", "paper", "--attack", "querybased",
                                   "-S", "5", "-o", "max_iter=3", "--backend", "local",
                                   "--out", str(tmp_path / "a"), "--json"])
    assert res.exit_code == 0, res.output
    first = res.stderr.splitlines()[0]
    assert first.startswith("raudit: estimate: about ") and " in all (" in first, first
    assert "game 10 models" in first and "analysis" in first
    assert "3 iterations per model (closed form)" in first and "(measured now)" in first


def test_closed_form_is_the_paper_generators_stopping_iteration():
    ds = data.load("cervical")
    n, c = ds.train.shape
    expected = closed_form_iterations("paper", {}, n, c, 1.0, 1e-5)
    gen = get("paper")().fit(ds.train, epsilon=1.0, delta=1e-5, seed=0, columns=ds.columns)
    assert expected == gen.summary()["iterations"] == 33  # README: paper stops at 33


def test_no_closed_form_outside_the_pate_family():
    assert closed_form_iterations("dpgan", {}, 686, 29, 1.0, 1e-5) is None
    assert closed_form_iterations("identity", {}, 686, 29, 1.0, 1e-5) is None


def test_rate_between_measured_chunk_sizes():
    rates = {1: 37.0, 8: 274.0, 32: 1474.0}
    assert rate_at(rates, 8) == pytest.approx(274.0)
    assert 274.0 < rate_at(rates, 20) < 1474.0
    assert rate_at(rates, 500) == pytest.approx(1474.0)  # clamped, not extrapolated


def test_long_runs_name_the_flags_that_shrink_them():
    short = Estimate(0, 20, 0, 100, "closed form", 1000.0, "cached", 2)
    assert "to shrink it" not in line(short)
    long = Estimate(200, 2000, 64, 1000, "closed form", 500.0, "cached", 2)
    text = line(long)
    assert long.total_s > 15 * 60 and "over 15 min" in text
    # (named by raudit.wording: the long flag, as a verdict names it)
    for flag in ("--shadow-models", "--selection-models", "--target ROW", "--max-iter",
                 "--workers"):
        assert flag in text
