"""One PrivacySpec for train and audit (issue 9): the same delta, recorded everywhere."""

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from raudit import data, generators
from raudit.audit import game as g
from raudit.audit.chunk import run_chunk
from raudit.audit.runner import AuditRequest, prepare
from raudit.cli.app import app
from raudit.errors import ConfigError, UnknownNameError
from raudit.privacy import DELTA_RULES, STUDY_DELTA, PrivacySpec, delta_for, rule_deltas

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
    got = rule_deltas(generators.get("smartnoise")(), np.array([455, 454, 7], dtype=float))
    assert got.tolist() == [delta_for("1/(N sqrt N)", n) for n in (455, 454, 7)]
    assert rule_deltas(generators.get("smartnoise")(preset="paper"), 455) == STUDY_DELTA


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


def test_cli_to_accountant_resolves_delta_once(tmp_path, monkeypatch):
    """`raudit audit` input -> PrivacySpec -> the game -> every shadow model's accountant:
    delta is resolved once (one PrivacySpec.resolve, one rule evaluation), on D_in, and
    every accountant of both worlds (D_out has a row fewer, so a per-model re-derivation
    of smartnoise's 1/(N sqrt N) would differ) is asked for eps at that one delta."""
    from raudit import privacy
    from raudit.accountants.accountant import PateMomentsAccountant

    resolved, rules, asked = [], [], []
    real_resolve, real_rule, real_eps = (privacy.PrivacySpec.resolve, privacy.delta_for,
                                         PateMomentsAccountant.eps)

    def resolve(self, generator, n_rows):
        resolved.append(n_rows)
        return real_resolve(self, generator, n_rows)

    def delta_for(rule, n_rows):
        rules.append(rule)
        return real_rule(rule, n_rows)

    def eps(self, delta):
        asked.extend(np.broadcast_to(np.asarray(delta, dtype=float), (self.models,)).tolist())
        return real_eps(self, delta)

    monkeypatch.setattr(privacy.PrivacySpec, "resolve", resolve)
    monkeypatch.setattr(privacy, "delta_for", delta_for)
    monkeypatch.setattr(PateMomentsAccountant, "eps", eps)
    res = CliRunner().invoke(app, ["audit", "--backend", "local", "--impl", "smartnoise",
                                   "--attack", "querybased", "-S", "5", "--max-iter", "2",
                                   "--teachers", "2", "-M", "5", "--out", str(tmp_path / "a"),
                                   "--json"])
    assert res.exit_code == 0, res.output
    n_in = len(data.load("worst-case").train)
    want = 1.0 / (n_in * math.sqrt(n_in))
    assert resolved == [n_in] and rules == ["1/(N sqrt N)"]
    assert json.loads(res.stdout)["delta"] == want
    assert asked and set(asked) == {want}  # the probe's model and all 10 shadow models
