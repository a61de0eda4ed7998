"""Empirical eps lower bounds: goldens (EVALUATION.md section 3), properties, thresholds."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raudit.audit.bayes import eps_bayesian
from raudit.audit.epsilon import eps_clopper_pearson, eps_jeffreys
from raudit.audit.thresholds import audit_bound, choose_threshold, eps_ceiling, evaluate_threshold
from raudit.errors import ConfigError, UnknownNameError

DELTA = 1e-5

# (TP, FN, TN, FP) -> (CP, Jeffreys), delta 1e-5, alpha 0.1: EVALUATION.md section 3
GOLDEN = {
    (400, 0, 400, 0): (4.682, 5.068),
    (400, 0, 399, 1): (4.677, 5.062),
    (100, 0, 100, 0): (3.281, 3.674),
    (390, 10, 395, 5): (3.496, 3.560),
    (300, 100, 380, 20): (2.225, 2.246),
}


@pytest.mark.parametrize("counts", sorted(GOLDEN))
def test_clopper_pearson_and_jeffreys_goldens(counts):
    cp, jeffreys = GOLDEN[counts]
    assert abs(eps_clopper_pearson(*counts, delta=DELTA, alpha=0.1) - cp) <= 5e-4
    assert abs(eps_jeffreys(*counts, delta=DELTA, alpha=0.1) - jeffreys) <= 5e-4


def test_ceiling_400_per_class():
    # "ceiling is 4.6815 (alpha = 0.1) and 4.3174 (alpha = 0.02)"
    assert eps_ceiling(400, 400, delta=DELTA, alpha=0.1) == pytest.approx(4.6815, abs=5e-5)
    assert eps_ceiling(400, 400, delta=DELTA, alpha=0.02) == pytest.approx(4.3174, abs=5e-5)


@pytest.mark.parametrize(
    "n,table", [(100, 3.28), (400, 4.68), (1_000, 5.60), (10_000, 7.91), (100_000, 10.21)]
)
def test_ceiling_closed_form(n, table):
    beta = 0.025  # one-sided tail alpha/4
    r = beta ** (1 / n)
    closed = math.log((r - DELTA) / (1 - r))
    assert eps_ceiling(n, n, delta=DELTA, alpha=0.1) == pytest.approx(closed, abs=1e-9)
    # the spec rounds 7.9048 (= ln n - ln ln 40 to 3 decimals: 7.905) up to 7.91
    assert abs(closed - table) <= 0.006


def test_bayesian_goldens():
    # 2.3615 holds to 3 decimals. The reference prints 3.758 for (390,10,395,5) but
    # integrates with epsabs 5e-3 and root xtol 1e-2; the exact value is 3.7600
    # (checked below by Monte Carlo and, while writing this, by scipy dblquad).
    assert abs(eps_bayesian(300, 100, 380, 20, delta=DELTA, alpha=0.1) - 2.361) <= 5e-4
    exact = eps_bayesian(390, 10, 395, 5, delta=DELTA, alpha=0.1)
    assert abs(exact - 3.758) <= 2.5e-3
    assert exact == pytest.approx(3.75997, abs=1e-4)  # 65k-node rule: 3.759969
    mc = eps_bayesian(390, 10, 395, 5, method="monte-carlo", samples=4_000_000, seed=5)
    assert mc == pytest.approx(exact, abs=1.5e-3)  # MC standard error ~3e-4
    assert abs(mc - 3.758) > abs(mc - 3.760)


def test_bayesian_newton_fallback(monkeypatch):
    # if the fine-rule derivative is useless, the bracketing fallback still converges
    import raudit.audit.bayes as mod

    want = eps_bayesian(390, 10, 395, 5)
    real = mod._mass_in_region

    def no_slope(*args, **kwargs):
        out = real(*args, **kwargs)
        return (out[0], 0.0) if isinstance(out, tuple) else out

    monkeypatch.setattr(mod, "_mass_in_region", no_slope)
    assert eps_bayesian(390, 10, 395, 5) == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize(
    "counts", [(390, 10, 395, 5), (300, 100, 380, 20), (400, 0, 400, 0), (100, 0, 100, 0), (5, 0, 50, 2)]
)
def test_bayesian_quadrature_matches_monte_carlo(counts):
    # independent route: the alpha/2 quantile of the smallest eps containing posterior
    # draws; 1e6 draws give a standard error of about 3e-3 in eps
    quad = eps_bayesian(*counts, delta=DELTA, alpha=0.1)
    mc = eps_bayesian(*counts, delta=DELTA, alpha=0.1, method="monte-carlo", samples=1_000_000, seed=11)
    assert quad == pytest.approx(mc, abs=0.012)


def test_bayesian_is_fast():
    counts = list(GOLDEN)
    start = time.perf_counter()
    for c in counts:
        eps_bayesian(*c, delta=DELTA)
    per_call = (time.perf_counter() - start) / len(counts)
    assert per_call < 0.25  # ~10-20 ms on a laptop core; loose to stay unflaky


@pytest.mark.parametrize("counts", sorted(GOLDEN))
def test_ordering_cp_jeffreys_bayes(counts):
    cp = eps_clopper_pearson(*counts)
    j = eps_jeffreys(*counts)
    b = eps_bayesian(*counts)
    assert cp < j < b


def test_zero_and_degenerate_counts():
    assert eps_clopper_pearson(0, 0, 0, 0) == 0.0
    assert eps_jeffreys(0, 0, 0, 0) == 0.0
    assert eps_clopper_pearson(200, 200, 200, 200) == 0.0  # a coin flip proves nothing
    assert eps_clopper_pearson(0, 400, 0, 400) == 0.0  # every answer wrong
    assert eps_clopper_pearson(0, 400, 400, 0) == 0.0  # always "out"
    for fn in (eps_bayesian,):
        assert np.isfinite(fn(400, 0, 400, 0)) and fn(400, 0, 400, 0) > 6.0
        assert 0.0 < fn(200, 200, 200, 200) < 0.05
        assert np.isfinite(fn(0, 0, 0, 0))


def test_vectorised_counts():
    tp = np.array([400, 390, 300])
    fn, tn, fp = 400 - tp, np.array([400, 395, 380]), np.array([0, 5, 20])
    got = eps_clopper_pearson(tp, fn, tn, fp)
    want = [eps_clopper_pearson(*map(int, c)) for c in zip(tp, fn, tn, fp)]
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_bad_inputs():
    with pytest.raises(ConfigError):
        eps_clopper_pearson(-1, 0, 1, 0)
    with pytest.raises(ConfigError):
        eps_jeffreys(1.5, 0, 1, 0)
    with pytest.raises(ConfigError):
        eps_clopper_pearson(1, 0, 1, 0, alpha=0.0)
    with pytest.raises(ConfigError):
        eps_bayesian(1, 0, 1, 0, method="exact")
    with pytest.raises(UnknownNameError):
        eps_ceiling(10, 10, method="nope")


# -------------------------------------------------------------------- properties

counts_st = st.tuples(*[st.integers(0, 500)] * 4)


@settings(max_examples=200, deadline=None)
@given(counts=counts_st, which=st.sampled_from(["fn", "fp"]), est=st.sampled_from(["cp", "jeffreys"]))
def test_more_errors_never_increase_eps(counts, which, est):
    f = eps_clopper_pearson if est == "cp" else eps_jeffreys
    tp, fn, tn, fp = counts
    before = f(tp, fn, tn, fp)
    if which == "fn" and tp > 0:
        assert f(tp - 1, fn + 1, tn, fp) <= before + 1e-12
    if which == "fp" and tn > 0:
        assert f(tp, fn, tn - 1, fp + 1) <= before + 1e-12


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 100_000), extra=st.integers(1, 10_000), est=st.sampled_from(["cp", "jeffreys"]))
def test_ceiling_grows_with_trials(n, extra, est):
    small, large = eps_ceiling(n, n, method=est), eps_ceiling(n + extra, n + extra, method=est)
    assert large >= small and (small == 0.0 or large > small)  # 0 until there are enough trials


@settings(max_examples=100, deadline=None)
@given(counts=counts_st)
def test_smaller_alpha_gives_smaller_bound(counts):
    assert eps_clopper_pearson(*counts, alpha=0.02) <= eps_clopper_pearson(*counts, alpha=0.1) + 1e-12


def test_bayesian_monotone_on_examples():
    seq = [eps_bayesian(400 - e, e, 400 - e, e) for e in (0, 1, 5, 20, 100)]
    assert all(a > b for a, b in zip(seq, seq[1:]))
    ceil = [eps_ceiling(n, n, method="bayes") for n in (10, 100, 1_000, 10_000)]
    assert all(a < b for a, b in zip(ceil, ceil[1:]))


# -------------------------------------------------------------------- thresholds


def _naive_best(scores, labels, delta=DELTA, alpha=0.1):
    best = (-1.0, None, None)
    for direction in ("scores", "inverted"):
        s = scores if direction == "scores" else 1 - scores
        for t in sorted(set(s.tolist())):
            pred = s >= t
            c = (
                int(np.sum(pred & labels)),
                int(np.sum(~pred & labels)),
                int(np.sum(~pred & ~labels)),
                int(np.sum(pred & ~labels)),
            )
            e = eps_clopper_pearson(*c, delta=delta, alpha=alpha)
            if e > best[0]:
                best = (e, t, direction)
    return best


def test_threshold_toy_separable():
    val = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9] * 20)
    lab = np.array([0, 0, 0, 1, 1, 1] * 20)
    t, direction = choose_threshold(val, lab)
    assert direction == "scores" and 0.3 < t <= 0.7
    assert evaluate_threshold(val, lab, t, direction) == (60, 0, 60, 0)


def test_threshold_toy_inverted():
    val = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1] * 20)
    lab = np.array([0, 0, 0, 1, 1, 1] * 20)
    t, direction = choose_threshold(val, lab)
    assert direction == "inverted"
    assert evaluate_threshold(val, lab, t, direction) == (60, 0, 60, 0)


@pytest.mark.parametrize("seed", range(5))
def test_threshold_scan_matches_naive_loop(seed):
    rng = np.random.default_rng(seed)
    lab = rng.random(400) < 0.5
    scores = np.round(np.clip(rng.normal(0.5 + 0.15 * (lab - 0.5) * (1 if seed % 2 else -1), 0.2), 0, 1), 2)
    t, direction = choose_threshold(scores, lab)
    e_best, t_naive, d_naive = _naive_best(scores, lab)
    counts = evaluate_threshold(scores, lab, t, direction)
    assert eps_clopper_pearson(*counts) == pytest.approx(e_best, abs=1e-12)
    assert (t, direction) == (pytest.approx(t_naive), d_naive)


def test_threshold_with_bayes_and_callable_estimators():
    rng = np.random.default_rng(3)
    lab = np.arange(24) % 2 == 0
    scores = np.round(np.where(lab, rng.uniform(0.4, 1, 24), rng.uniform(0, 0.6, 24)), 3)
    t, direction = choose_threshold(scores, lab, estimator="bayes")
    # brute force over every candidate; note the joint-Beta region is two-sided, so an
    # "anti" threshold (almost everything predicted in) can win on few trials
    best = max(
        (eps_bayesian(*evaluate_threshold(scores, lab, c, d)), c, d)
        for d in ("scores", "inverted")
        for c in np.unique(scores if d == "scores" else 1 - scores)
    )
    assert eps_bayesian(*evaluate_threshold(scores, lab, t, direction)) == pytest.approx(best[0], abs=1e-12)
    calls = []

    def tpr_minus_fpr(tp, fn, tn, fp, *, delta, alpha):
        calls.append(1)
        return tp / max(tp + fn, 1) - fp / max(tn + fp, 1)

    t, direction = choose_threshold(scores, lab, estimator=tpr_minus_fpr)
    assert calls and direction == "scores"
    with pytest.raises(UnknownNameError):
        choose_threshold(scores, lab, estimator="nope")


def test_threshold_rejects_bad_inputs():
    with pytest.raises(ConfigError):
        choose_threshold([0.1, np.nan], [0, 1])
    with pytest.raises(ConfigError):
        choose_threshold([0.1, 0.2], [0, 2])
    with pytest.raises(ConfigError):
        evaluate_threshold([0.1, 0.2], [0, 1], 0.5, "sideways")


def test_audit_bound_perfect_attack_is_saturated():
    rng = np.random.default_rng(0)
    val_lab = np.repeat([1, 0], 200)
    test_lab = np.repeat([1, 0], 400)
    val = np.where(val_lab == 1, rng.uniform(0.6, 1, 400), rng.uniform(0, 0.4, 400))
    # the chosen threshold is the smallest positive validation score (>= 0.6)
    test = np.where(test_lab == 1, rng.uniform(0.7, 1, 800), rng.uniform(0, 0.4, 800))
    out = audit_bound(val, val_lab, test, test_lab)
    assert out["auc"] == 1.0 and out["direction"] == "scores"
    assert (out["tp"], out["fn"], out["tn"], out["fp"]) == (400, 0, 400, 0)
    assert out["eps_cp"] == pytest.approx(4.6815, abs=5e-5) and out["saturated"]
    assert out["eps_max"] == pytest.approx(out["eps_cp"])
    assert out["eps_bayes"] > out["eps_jeffreys"] > out["eps_cp"]
    assert out["tpr"] == 1.0 and out["fpr"] == 0.0


def test_audit_bound_useless_attack():
    rng = np.random.default_rng(1)
    val, test = rng.random(400), rng.random(800)
    out = audit_bound(val, np.arange(400) % 2, test, np.arange(800) % 2)
    assert 0.4 < out["auc"] < 0.6
    assert out["eps_cp"] < 0.5 and not out["saturated"]


# ------------------------------------------------ coverage on the privacy boundary
# Mechanisms whose best attack sits ON their eps boundary (raudit.audit.known), with
# >= 400 test trials per world: enough that an estimator 20% too optimistic, or a
# threshold chosen on the test split, overshoots far more often than the stated
# level allows. The acceptance region is the exact binomial one for that level.

ALPHA = 0.1


def _boundary_bounds(mech, *, repeats, n_test, seed, threshold_on="val"):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(repeats):
        vs, vl = mech.sample(rng, n_test // 2)
        ts, tl = mech.sample(rng, n_test)
        if threshold_on == "test":  # only for the test that shows why it is forbidden
            vs, vl = ts, tl
        rows.append(audit_bound(vs, vl, ts, tl, delta=DELTA, alpha=ALPHA))
    return {k: np.array([r[k] for r in rows]) for k in ("eps_cp", "eps_jeffreys", "eps_bayes")}


@pytest.mark.parametrize("kind,eps", [("randomized-response", 2.0), ("laplace", 1.0)])
def test_bounds_cover_a_mechanism_on_its_boundary(kind, eps):
    from raudit.audit.known import KnownMechanism, max_overshoots

    mech = KnownMechanism(kind, eps)
    repeats = 120
    got = _boundary_bounds(mech, repeats=repeats, n_test=2000, seed=int(10 * eps))
    true = mech.eps_at(DELTA)
    over = {k: int(np.sum(v > true)) for k, v in got.items()}
    # CP holds with >= 1 - alpha/2 by construction; Jeffreys approximately (labelled
    # so); the joint-Beta bound is a credible bound, not a confidence bound: it
    # overshoots the boundary in up to 19% of repeats (RR eps 4) (labelled approximate), and is
    # held to 25% only so that a grossly optimistic version still fails.
    assert over["eps_cp"] <= max_overshoots(repeats, ALPHA / 2), over
    assert over["eps_jeffreys"] <= max_overshoots(repeats, ALPHA / 2), over
    assert over["eps_bayes"] <= max_overshoots(repeats, 0.25), over
    # and the bounds see the mechanism: not vacuous
    assert np.mean(got["eps_cp"]) > 0.7 * true


@pytest.mark.slow
def test_threshold_chosen_on_the_test_split_overshoots():
    # Why the threshold must come from validation: chosen on the test split, CP on a
    # Laplace mechanism overshoots its eps far more often than the stated 5%.
    from raudit.audit.known import KnownMechanism, max_overshoots

    mech = KnownMechanism("laplace", 1.0)
    got = _boundary_bounds(mech, repeats=200, n_test=2000, seed=10, threshold_on="test")
    assert np.sum(got["eps_cp"] > mech.eps_at(DELTA)) > max_overshoots(200, ALPHA / 2)


def test_audit_bound_reads_the_test_split_at_the_validation_threshold():
    # Validation separates the worlds at 0.6; the test split would be separated
    # perfectly at 0.55, which validation never saw: the bound must use 0.6 (and
    # certify nothing), never the threshold that suits the test split.
    val_lab, test_lab = np.repeat([0, 1], 200), np.repeat([0, 1], 400)
    val = np.where(val_lab == 1, 0.6, 0.4)
    test = np.where(test_lab == 1, 0.55, 0.45)
    t_val, d_val = choose_threshold(val, val_lab)
    out = audit_bound(val, val_lab, test, test_lab)
    assert (out["threshold"], out["direction"]) == (t_val, d_val) == (0.6, "scores")
    assert (out["tp"], out["fn"], out["tn"], out["fp"]) == evaluate_threshold(test, test_lab, 0.6)
    assert out["eps_cp"] == 0.0 and out["tp"] == 0


def test_the_beta_quantile_is_scipys_to_the_bit():
    # epsilon._beta_isf calls scipy's kernel without stats.beta's argument checks
    from scipy import stats

    from raudit.audit.epsilon import _beta_isf

    rng = np.random.default_rng(7)
    n = rng.integers(1, 20_000, 5_000).astype(float)
    x = np.floor(rng.random(5_000) * n)
    for tail in (0.05, 0.1 / 808, 1e-6):
        assert np.array_equal(_beta_isf(tail, x + 1.0, n - x), stats.beta.isf(tail, x + 1.0, n - x))
        assert np.array_equal(_beta_isf(tail, x + 0.5, n - x + 0.5),
                              stats.beta.isf(tail, x + 0.5, n - x + 0.5))


def test_a_bound_nan_at_every_threshold_is_an_error_not_a_missing_threshold():
    """choose_threshold returned (None, None) when its estimator was NaN everywhere, and
    the None failed later as a TypeError in evaluate_threshold; now typed (float, str)."""
    with pytest.raises(ConfigError, match="NaN at every candidate"):
        choose_threshold([0.1, 0.2, 0.7], [0, 1, 1], estimator=lambda *c, **kw: float("nan"))
