"""`fixed -o analysis=data-dependent`: options, the plan decided before any vote, and a tiny
end-to-end train whose events, stopping time and released eps are checked."""

import math

import numpy as np
import pandas as pd
import pytest

from raudit import generators
from raudit.accountants.gnmax import logq_gnmax, rdp_gnmax
from raudit.accountants.release import GnssPlan
from raudit.data.dataset import infer_columns
from raudit.errors import ConfigError
from raudit.events import EventLog, GradientVotes, Votes
from raudit.generators.pategan.fixed.dd import SIGMA2_MIN, plan_dd
from raudit.generators.transcript import run_eps_true

Fixed = generators.get("fixed")
DD = dict(analysis="data-dependent")


def table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.normal(3, 1, n)})
    df["label"] = (rng.random(n) < 0.3).astype(int)
    return df


@pytest.mark.parametrize("kw,match", [
    (dict(analysis="bayesian"), "analysis must be one of independent, data-dependent"),
    (dict(dd_threshold=0.5), r"dd_threshold \(T / k\) must lie in \(0.5, 1\]"),
    (dict(dd_threshold=1.5), r"dd_threshold \(T / k\) must lie in \(0.5, 1\]"),
    (dict(dd_sigma2=0), "dd_sigma2 must be a positive number"),
    (dict(dd_sigma_s=-1.0), "dd_sigma_s must be a positive number"),
    (dict(dd_beta=0.5), r"dd_beta \(beta \* lambda\) must lie in \(0, 0.5\)"),
])
def test_rejects_bad_options_with_one_line(kw, match):
    with pytest.raises(ConfigError, match=match):
        Fixed(**kw)


def _planned_by_hand(eps, delta, q, k, p):
    """The plan's eps at its own sigma1 and order, from the formulas (module docstring)."""
    o, s1, s2 = p.gnss.order, p.votes.sigma1, p.votes.sigma2
    top = math.ceil(0.8 * k)
    gn = rdp_gnmax(np.array([logq_gnmax(np.array([top, k - top], float), s2)]), s2, [o])[0, 0]
    return q * (o / (2 * s1 ** 2) + gn) + p.gnss.rdp + math.log(1 / delta) / (o - 1)


@pytest.mark.parametrize("eps,k", [(1.0, 920), (10.0, 184), (100.0, 9), (1.0, 9)])
def test_plan_spends_the_budget_once_from_public_values(eps, k):
    q = 12_800
    p = plan_dd(eps, 1e-5, q, k, 0, 0.2, 0.8, 0.1, 20.0, 0.4)
    assert p.planned_eps <= eps and p.planned_eps == pytest.approx(eps, rel=1e-6)
    assert _planned_by_hand(eps, 1e-5, q, k, p) == pytest.approx(p.planned_eps, rel=1e-9)
    assert p.votes.threshold == pytest.approx(0.8 * k)
    assert p.gnss == GnssPlan(p.gnss.order, 0.4 / p.gnss.order, 20.0)
    if k == 9 and eps == 1.0:  # too few teachers to pay 12,800 answers at sigma2 = 0.9
        assert p.votes.sigma2 == pytest.approx(SIGMA2_MIN * p.votes.sigma1)
    else:
        assert p.votes.sigma2 == pytest.approx(0.1 * k)


def test_plan_noise_falls_as_eps_grows_and_a_too_small_eps_is_one_line():
    s = [plan_dd(e, 1e-5, 3_200, 400, 0, 0.2, 0.8, 0.1, 20.0, 0.4).votes.sigma1 for e in (2, 5, 20)]
    assert s[0] > s[1] > s[2]
    with pytest.raises(ConfigError, match="below what the data-dependent release alone costs"):
        plan_dd(0.2, 1e-5, 3_200, 400, 0, 0.2, 0.8, 0.1, 20.0, 0.4)


def _fit(tables, seeds, observer=None, control=None, **kw):
    opts = dict(DD, teachers=24, iterations=3, batch=16, student_steps=2, **kw)
    gen = Fixed(**opts)
    return gen.fit_many(tables, epsilon=30.0, seeds=seeds, observer=observer,
                        columns=infer_columns(table(), bounds="public"))


def test_tiny_train_events_stop_and_release():
    log = EventLog()
    models = _fit([table(seed=1), table(seed=2)], [1, 2], observer=log)
    p = plan_dd(30.0, 1e-5, 3 * 2 * 16, 24, 0, 0.2, 0.8, 0.1, 20.0, 0.4)
    votes = log.of(GradientVotes)
    assert not log.of(Votes) and len(votes) == 3 * 2  # one Confident-GNMax batch per student round
    for m, model in enumerate(models):
        s = model.summary()
        assert s["iterations"] == 3 and s["queries"] == 96  # a fixed stop, whatever the votes
        assert (s["sigma1"], s["sigma2"], s["threshold"]) == (p.votes.sigma1, p.votes.sigma2,
                                                              p.votes.threshold)
        assert s["gnss_order"] == p.gnss.order and s["planned_eps"] == p.planned_eps
        assert s["answered"] == sum(int(v.answered[m].sum()) for v in votes)
        assert math.isfinite(s["eps_hat"])
        assert s["eps_hat"] >= p.gnss.rdp + math.log(1e5) / (p.gnss.order - 1)  # the clipped floor
    for v in votes:  # answered exactly where the noisy top count crossed T; GNMax label else -1
        top = v.counts.max(axis=-1)
        np.testing.assert_array_equal(v.answered, top + v.threshold_noise >= v.threshold)
        assert np.all((v.choice == -1) == ~v.answered)
    true = run_eps_true(log.events, delta=1e-5)
    assert true.method == "rdp-data-dependent"
    assert true.releases["confident-gnmax queries"] == 96


def test_release_is_reproducible_whatever_the_batch():
    alone = _fit([table(seed=2)], [2])[0].summary()
    together = _fit([table(seed=1), table(seed=2)], [1, 2])[1].summary()
    assert alone["eps_hat"] == together["eps_hat"] and alone["answered"] == together["answered"]


def test_coin_control_answers_every_query_with_a_coin():
    log = EventLog()
    gen = Fixed(**DD, teachers=24, iterations=2, batch=16, student_steps=1)
    gen.fit_many([table(seed=1)], epsilon=30.0, seeds=[1], observer=log,
                 train_options={"control": "coin"},
                 columns=infer_columns(table(), bounds="public"))
    for v in log.of(GradientVotes):
        assert v.answered.all()
