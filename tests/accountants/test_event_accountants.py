"""Accountants that consume privacy events (issue 9): PATE moments variants, dp_accounting RDP/PLD."""

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting import pld, rdp

from raudit import generators
from raudit.accountants import ACCOUNTANTS, VARIANTS, accepting, create, eps_from_moments
from raudit.events import GNMaxAnswer, GNMaxThreshold, GaussianStep, NoisyLabels, PateVote
from raudit.errors import ConfigError, UnknownNameError
from raudit.events import AccountantStep, EventLog, Votes


def table(n=90, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["label"] = (rng.random(n) < 0.4).astype(int)
    return df


@pytest.fixture(scope="module")
def recorded():
    """Votes of a short paper run (2 models, 9 teachers, data-dependent regime)."""
    log = EventLog()
    Paper = generators.get("paper")
    models = Paper(teachers=9, batch=8, lam=0.3, orders=20).fit_many(
        [table()] * 2, epsilon=60.0, seeds=[3, 4], observer=log)
    return log, models


@pytest.mark.parametrize("variant", VARIANTS.names())
def test_pate_variants_on_recorded_votes_equal_the_inline_sums(recorded, variant):
    log, _ = recorded
    votes = log.of(Votes)
    acct = create(variant, models=2, lam=0.3, orders=20, k=9)
    inline = np.zeros((2, 20))
    for v in votes:
        acct.compose(PateVote(v.n1, v.k, "laplace", v.noise_scale, "argmax", v.charged))
        for m in np.flatnonzero(v.charged):  # the old inline charge, model by model
            inline[m] += VARIANTS.get(variant).moments(v.n1[m:m + 1], 9, 0.3, 20)[0]
    np.testing.assert_allclose(acct.alpha, inline, rtol=1e-12, atol=0)
    np.testing.assert_allclose(acct.eps(1e-5), eps_from_moments(inline, 1e-5), rtol=1e-12)


def test_recorded_votes_reproduce_the_runs_own_eps(recorded):
    log, models = recorded
    acct = create("paper", models=2, lam=0.3, orders=20, k=9)
    for v in log.of(Votes):
        acct.compose(PateVote(v.n1, v.k, "laplace", v.noise_scale, "argmax", v.charged))
    last = log.of(AccountantStep)[-1]
    np.testing.assert_array_equal(acct.alpha, last.moments)
    assert acct.eps(1e-5).tolist() == [m.summary()["eps_hat"] for m in models]


@pytest.mark.parametrize("bad", [
    lambda n1: PateVote(n1, 7),                              # wrong k
    lambda n1: PateVote(n1, 5, noise_kind="gaussian"),          # not a Laplace vote
    lambda n1: PateVote(n1[:2], 5),                          # wrong number of models
    lambda n1: PateVote(n1 + 10, 5),                         # counts above k
    lambda n1: GaussianStep(1.0),                            # wrong event type
])
def test_rejected_event_leaves_the_pate_accountant_unchanged(bad):
    n1 = np.random.default_rng(1).integers(0, 6, size=(3, 10))
    acct = create("fixed", models=3, lam=0.2, orders=10, k=5)
    acct.compose(PateVote(n1, 5))
    before, queries = acct.alpha.copy(), acct.queries.copy()
    with pytest.raises(ConfigError):
        acct.compose(bad(n1))
    np.testing.assert_array_equal(acct.alpha, before)
    np.testing.assert_array_equal(acct.queries, queries)


def test_gaussian_rdp_equals_dp_accountings_own_values():
    acct = create("rdp", models=3)
    acct.compose(GaussianStep(1.1, 0.01, count=1000))
    acct.compose(GaussianStep(1.1, 0.01, count=500, mask=np.array([True, True, False])))
    acct.compose(GNMaxThreshold(150.0, count=20, mask=np.array([False, True, False])))
    acct.compose(GNMaxAnswer(40.0, count=20, mask=np.array([False, True, False])))
    got = acct.eps(1e-5)

    def reference(steps, gnmax):
        ref = rdp.RdpAccountant()
        ref.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), steps)
        if gnmax:
            ref.compose(dp_accounting.GaussianDpEvent(150.0), 20)
            ref.compose(dp_accounting.GaussianDpEvent(40.0 / np.sqrt(2.0)), 20)
        return ref.get_epsilon(1e-5)

    assert got.tolist() == [reference(1500, False), reference(1500, True), reference(1000, False)]
    assert got[1] > got[0] > got[2]


def test_gaussian_pld_equals_dp_accountings_own_values():
    acct = create("pld", models=1)
    acct.compose(GaussianStep(2.0, count=10))
    acct.compose(NoisyLabels("laplace", 5.0, count=3))
    ref = pld.PLDAccountant()
    ref.compose(dp_accounting.GaussianDpEvent(2.0), 10)
    ref.compose(dp_accounting.LaplaceDpEvent(5.0), 3)
    assert acct.eps(1e-6)[0] == ref.get_epsilon(1e-6)


def test_rejected_gaussian_event_leaves_the_accountant_unchanged():
    acct = create("rdp", models=2)
    acct.compose(GaussianStep(1.0, count=5))
    before = acct.eps(1e-5).copy()
    with pytest.raises(ConfigError):
        acct.compose(GaussianStep(1.0, mask=np.array([True, False, True])))  # 3 models, not 2
    with pytest.raises(ConfigError):
        acct.compose(PateVote(np.zeros((2, 3), dtype=int), 5))
    np.testing.assert_array_equal(acct.eps(1e-5), before)
    assert {k: v.tolist() for k, v in acct.counts.items()} == {("gaussian", 1.0, 1.0): [5, 5]}


@pytest.mark.parametrize("make", [
    lambda: GaussianStep(0.0), lambda: GaussianStep(1.0, sampling_rate=1.5),
    lambda: GaussianStep(1.0, count=0), lambda: NoisyLabels("uniform", 1.0),
    lambda: PateVote(np.zeros(3), 5), lambda: PateVote(np.zeros((1, 3)), 5, aggregation="mode"),
])
def test_bad_events_are_config_errors(make):
    with pytest.raises(ConfigError):
        make()


def test_registry_names_errors_and_event_types():
    assert set(VARIANTS.names()) | {"rdp", "pld", "gnmax", "gnmax-independent"} == set(ACCOUNTANTS.names())
    with pytest.raises(UnknownNameError, match="missing-log"):
        create("moments")
    with pytest.raises(ConfigError, match="no parameter lam"):
        create("rdp", lam=0.1)
    assert accepting(GaussianStep) == ["pld", "rdp"]
    assert accepting(PateVote) == VARIANTS.names()
