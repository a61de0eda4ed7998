"""One PrivacySpec for train and audit (issue 9): the same delta, recorded everywhere."""

import json
import math

import pytest
from typer.testing import CliRunner

from raudit import data, generators
from raudit.audit import game as g
from raudit.audit.chunk import run_chunk
from raudit.audit.runner import AuditRequest, prepare
from raudit.cli.app import app
from raudit.errors import ConfigError, UnknownNameError
from raudit.privacy import DELTA_RULES, PrivacySpec, delta_for

N = len(data.load("breast-cancer").train)


def test_rules_of_the_implementations():
    sn = generators.get("smartnoise")()
    r = PrivacySpec(1.0).resolve(sn, N)
    assert (r.delta, r.delta_rule) == (1.0 / (N * math.sqrt(N)), "1/(N sqrt N)")
    assert PrivacySpec(1.0).resolve(generators.get("smartnoise")(preset="paper"), N).delta == 1e-5
    assert PrivacySpec(1.0, 1e-6).resolve(sn, N).delta_rule == "given"
    paper = PrivacySpec(2.0).resolve(generators.get("paper")(), N)
    assert (paper.delta, paper.delta_rule) == (1e-5, "fixed")
    rr = PrivacySpec(2.0).resolve(generators.get("randomized-response")(), N)
    assert (rr.delta, rr.delta_rule) == (1e-5, "pure-dp")


def test_the_rule_is_the_one_smartnoise_trains_with_per_table():
    import torch
    rows = torch.tensor([455, 454, 7])
    got = generators.get("smartnoise")().implementation_delta(rows)
    assert got.tolist() == [delta_for("1/(N sqrt N)", n) for n in (455, 454, 7)]


@pytest.mark.parametrize("eps,delta", [(0, None), (-1, 1e-5), (float("inf"), None), (1, 0), (1, 1.0),
                                       (True, None), (1, "x")])
def test_bad_privacy_specs(eps, delta):
    with pytest.raises(ConfigError):
        PrivacySpec(eps, delta)


def test_unknown_rule():
    with pytest.raises(UnknownNameError, match=r"1/\(N sqrt N\)"):
        delta_for("N^-2", 10)
    assert "1/(N sqrt N)" in DELTA_RULES


def test_train_and_audit_of_smartnoise_use_the_same_delta(tmp_path):
    out = tmp_path / "t"
    res = CliRunner().invoke(app, ["train", "--impl", "smartnoise", "--dataset", "breast-cancer",
                                   "--max-iter", "1", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    trained = json.loads((out / "summary.json").read_text())
    assert trained["delta"] == 1.0 / (N * math.sqrt(N)) and trained["delta_rule"] == "1/(N sqrt N)"
    assert trained["details"]["delta"] == trained["delta"]  # what the loop used

    game, manifest, _ = prepare(AuditRequest(impl="smartnoise", attack="groundhog",
                                             dataset="breast-cancer", shadow_models=5, target="3",
                                             options={"max_iter": 1}))
    assert game.delta == manifest["delta"] == trained["delta"]
    # both worlds train with that one delta (D_out has N - 1 rows; the rule is not re-applied)
    for world in ("in", "out"):
        spec = {"audit_id": "a", "game": game.spec(), "world": world,
                "trials": g.trials(game, world=world)[:1]}
        (row,) = run_chunk(spec)
        assert row["delta"] == trained["delta"]


def test_utility_trains_smartnoise_with_the_same_delta_as_train():
    from raudit import data
    from raudit.utility import plan

    ds = data.load("breast-cancer")
    req = plan.UtilityRequest(impl="smartnoise", dataset="breast-cancer", epsilons=(1.0,))
    (cfg, reason), = plan.configs(req, ds)
    n = len(ds.train)
    assert reason is None and cfg["delta"] == pytest.approx(1 / (n * n ** 0.5), rel=1e-12)
    study = plan.UtilityRequest(impl="smartnoise", dataset="breast-cancer", epsilons=(1.0,),
                                delta=1e-5)
    assert plan.configs(study, ds)[0][0]["delta"] == 1e-5
