"""eps_true (raudit.accountants.true_curve): goldens against dp_accounting for each
mechanism kind, and eps_true for every registered generator that emits events."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld

from raudit.events import ConfidentGNMax, GaussianStep, PateVote
from raudit.accountants.true_curve import eps_true
from raudit.audit.fdp import eps_from_mu
from raudit.errors import ConfigError

DELTA = 1e-5
ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def ref_pld(*events_counts, interval=1e-4):
    acct = pld.PLDAccountant(ADD_REMOVE, interval)
    for ev, n in events_counts:
        acct.compose(ev, n)
    return acct.get_epsilon(DELTA)


def votes(queries, noise="laplace", scale=10.0, aggregation="argmax", models=1):
    return PateVote(np.full((models, queries), 3), 5, noise, scale, aggregation)


@pytest.mark.parametrize("aggregation,per_query", [("argmax", 2), ("threshold", 1)])
def test_laplace_votes_match_dp_accounting(aggregation, per_query):
    got = eps_true([votes(200, scale=50.0, aggregation=aggregation),
                    votes(100, scale=50.0, aggregation=aggregation)], delta=DELTA)
    assert got.method == "pld" and got.releases == {"laplace(scale=50)": 300 * per_query}
    want = ref_pld((dp_accounting.LaplaceDpEvent(50.0), 300 * per_query))
    assert got.eps == pytest.approx(want, abs=1e-9)
    # pure DP: never more than the basic composition 300 * per_query / 50
    assert got.eps < 300 * per_query / 50.0


def test_gaussian_votes_compose_exactly():
    # n Gaussian(sigma) releases of sensitivity 1 are mu-GDP with mu = sqrt(n)/sigma
    # exactly; dp_accounting's PLD agrees to its discretisation.
    got = eps_true([votes(400, "gaussian", 40.0)], delta=DELTA)
    assert got.eps == pytest.approx(eps_from_mu(math.sqrt(800) / 40.0, DELTA), abs=1e-4)
    assert got.eps == pytest.approx(ref_pld((dp_accounting.GaussianDpEvent(40.0), 800)), abs=2e-3)


def test_subsampled_gaussian_matches_dp_accounting():
    got = eps_true([GaussianStep(1.1, 0.01, 500), GaussianStep(1.1, 0.01, 500)], delta=DELTA)
    inner = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1))
    assert got.eps == pytest.approx(ref_pld((inner, 1000)), abs=1e-9)
    assert got.releases == {"gaussian(scale=1.1, q=0.01)": 1000}


def test_composition_of_kinds_matches_dp_accounting():
    got = eps_true([votes(100, scale=20.0), votes(50, "gaussian", 15.0),
                    GaussianStep(2.0, 0.05, 200)], delta=DELTA)
    want = ref_pld((dp_accounting.GaussianDpEvent(15.0 / math.sqrt(100)), 1),
                   (dp_accounting.LaplaceDpEvent(20.0), 200),
                   (dp_accounting.PoissonSampledDpEvent(0.05, dp_accounting.GaussianDpEvent(2.0)), 200))
    assert got.eps == pytest.approx(want, abs=1e-9)


def test_sensitivity_scales_the_noise():
    # a record in two teachers moves two votes: Laplace(b) at sensitivity 2 = Laplace(b/2)
    two = eps_true([votes(100, scale=40.0)], delta=DELTA, sensitivity=2)
    assert two.eps == pytest.approx(eps_true([votes(100, scale=20.0)], delta=DELTA).eps, abs=1e-12)
    assert two.eps > eps_true([votes(100, scale=40.0)], delta=DELTA).eps


def test_masks_select_the_model():
    mask = np.array([True, False])
    ev = PateVote(np.full((2, 100), 3), 5, "laplace", 10.0, "argmax", mask=mask)
    assert eps_true([ev], delta=DELTA, model=0).eps > 0.0
    assert eps_true([ev], delta=DELTA, model=1).eps == 0.0


def test_confident_gnmax_falls_back_to_rdp_labelled():
    from raudit.accountants.confident import ConfidentGNMaxAccountant

    rng = np.random.default_rng(0)
    counts = rng.multinomial(20, [0.7, 0.2, 0.1], size=(1, 300))
    answered = rng.random((1, 300)) < 0.6
    ev = ConfidentGNMax(counts, answered, 12.0, 5.0, 3.0)
    got = eps_true([ev], delta=DELTA)
    acct = ConfidentGNMaxAccountant(1)
    acct.compose(ev)
    assert got.method == "rdp-data-dependent" and "RDP" in got.note
    assert got.eps == pytest.approx(float(acct.eps(DELTA)[0]), abs=1e-12)


def test_loud_laplace_is_composed_purely():
    # updated's noise_scale="direct" draws Laplace(lambda = 1e-3): 1,000-DP per release,
    # beyond the PLD grid; the basic composition is the answer there
    got = eps_true([votes(10, scale=1e-3), votes(100, scale=50.0)], delta=DELTA)
    rest = ref_pld((dp_accounting.LaplaceDpEvent(50.0), 200))
    assert got.method == "pure-dp" and got.eps == pytest.approx(20 * 1000.0 + rest, rel=1e-12)


def test_bad_input():
    with pytest.raises(ConfigError, match="no privacy events"):
        eps_true([], delta=DELTA)
    with pytest.raises(ConfigError, match="delta"):
        eps_true([votes(1)], delta=0.0)
    with pytest.raises(ConfigError, match="sensitivity"):
        eps_true([votes(1)], delta=DELTA, sensitivity=0)


# ------------------------------------------------ every generator that emits events

# expected method per registered generator (None: emits no privacy events)
# ("none": unbounded, and the note says why: label noise, or a critic on real rows)
METHOD = {"paper": "pld", "borealis": "pld", "smartnoise": "pld", "synthcity": "none",
          "updated": "pure-dp", "fixed": "pld", "dpgan": "pld", "gpate": "rdp-data-dependent",
          "original": "none", "turing": "none", "gan": "none", "identity": None,
          "independent": None, "randomized-response": None}
WHY = {"synthcity": "the critic trains on real rows", "gan": "the discriminator trains on real rows"}
SLOW = {"borealis", "dpgan", "updated"}


def _params():
    from raudit import generators

    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in generators.names()]


@pytest.mark.parametrize("name", _params())
def test_eps_true_of_every_registered_generator(name):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))
    from test_generator_contract import BINARY_ONLY, make, small_table

    from raudit.data.dataset import infer_columns
    from raudit.events import EventLog
    from raudit.generators.transcript import privacy_events, run_eps_true

    assert name in METHOD, f"add {name!r} to METHOD: which eps_true does it have?"
    df = small_table(binary=name in BINARY_ONLY)
    log = EventLog()
    if name == "gpate":  # settings under which G-PATE applies its steps (test_gpate's)
        from raudit import generators

        gen = generators.get("gpate")(teachers=8, sigma1=40.0, sigma2=20.0, batch=2, k_proj=1,
                                      max_iter=3)
    else:
        gen = make(name)
    gen = gen.fit(df, epsilon=5.0, seed=1, columns=infer_columns(df), observer=log)
    if METHOD[name] is None:
        assert privacy_events(log.events).empty
        with pytest.raises(ConfigError, match="no privacy events"):
            run_eps_true(log.events, delta=DELTA)
        return
    got = run_eps_true(log.events, delta=DELTA)
    assert got.method == METHOD[name], got
    if got.method == "none":
        assert got.eps == math.inf and WHY.get(name, "labels") in got.note
        return
    assert 0.0 < got.eps < math.inf
    claimed = gen.summary()["eps_hat"]
    if name == "gpate":  # every applied step charged with the same data-dependent RDP
        assert got.eps == pytest.approx(claimed, rel=1e-9)
    if name in ("fixed", "dpgan"):
        # correct accountants: the votes/steps alone never cost more than the claim (which
        # also pays the DP bounds pre-pass, not an emitted event)
        assert got.eps <= claimed * (1 + 1e-3)


def test_a_loud_gaussian_release_takes_its_exact_gdp_curve_not_a_pld_grid():
    # issue 47: G-PATE's shared optimiser state moves 30 votes per record, so its transcript
    # releases compose to mu ~ 300, whose PLD grid (~mu^2 / 1e-4 points) ran out of memory
    from raudit.accountants.true_curve import GDP_CAP, gdp_eps

    for mu in (0.5, 1.0, 5.0):  # the PLD's value and fdp's independent conversion
        pld_eps = eps_true([PateVote(np.zeros((1, 1), dtype=np.int64), 2, "gaussian", 1 / mu,
                                     "threshold")], delta=1e-5).eps
        assert gdp_eps(mu, 1e-5) == pytest.approx(pld_eps, rel=1e-6)
        assert gdp_eps(mu, 1e-5) == pytest.approx(eps_from_mu(mu, 1e-5), rel=1e-9)
    loud = eps_true([PateVote(np.zeros((1, 900), dtype=np.int64), 2, "gaussian", 0.1,
                              "threshold")], delta=1e-5)  # mu = 300 > GDP_CAP
    assert 300 > GDP_CAP and loud.method == "pld"
    assert loud.eps == gdp_eps(300.0, 1e-5) and 300 ** 2 / 2 < loud.eps < 300 ** 2 / 2 + 6 * 300
    assert gdp_eps(1e-6, 1e-5) == 0.0  # delta(0) = 4e-7 already
