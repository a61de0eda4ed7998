"""Numbers rounded for display (full precision stays in JSON) and the warnings a reader
must not miss: a run that took no training step, a final eps_hat past the claimed eps."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from raudit.cli.app import app
from raudit.privacy import fmt_delta, fmt_eps, training_notes


def test_display_rounding():
    assert fmt_eps(1.0074419767378342) == "1.0074" and fmt_eps(None) == "not reported"
    assert fmt_eps(1.0003502732485103) == "1.0004"  # still visibly above 1
    assert fmt_delta(1.4577259475218659e-05) == "1.46e-05"


def test_training_notes():
    assert training_notes(33, 0.99, 1.0, steps_expected=True) == []
    (past,) = training_notes(33, 1.0074419767378342, 1.0, steps_expected=True)
    assert "1.0074 is above eps = 1" in past and "ran past eps" in past
    (none,) = training_notes(0, 0.058, 1.0, steps_expected=True)
    assert none.startswith("0 training iterations were applied")
    assert training_notes(0, None, 1.0, steps_expected=False) == []  # identity: no steps
    (why,) = training_notes(3, 1.5, 1.0, steps_expected=True, why_over="the votes were split")
    assert why.endswith("is above eps = 1: the votes were split") and "ran past" not in why


def test_train_prints_rounded_numbers_and_warns_past_eps(tmp_path):
    res = CliRunner().invoke(app, ["train", "--impl", "paper", "--dataset", "cervical",
                                   "--out", str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["eps_hat"] > 1.0  # the paper's rule stops one iteration past eps
    assert f"eps_hat {summary['eps_hat']:.5g} (eps 1, delta 1e-05)" in res.stdout
    assert repr(summary["eps_hat"]) not in res.stdout  # full precision only in the JSON
    assert "warning: final eps_hat" in res.stderr and "ran past eps" in res.stderr
