"""The learning statistic (paired one-sided t over fits, the threshold), the single-class
share, and the coin-flip control: a generator whose votes are coins by arithmetic
equals its own control in distribution (fixed seeds, explicit tolerances)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from raudit.engine.driver import EngineConfig
from raudit.generators.gpate.dpgradagg import AggConfig, aggregate
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.aggregation import aggregator
from raudit.runs.utility import run_utility
from raudit.utility.learning import (curve_rows, fit_means, learning_threshold,
                                     paired_one_sided, pooled_controls, seed_means,
                                     single_class_share)
from raudit.utility.plan import UtilityRequest
from raudit.utility.runner import frame
from raudit.utility.verdict import learning_sentence

LOCAL = EngineConfig(backend="local")


# -- the statistic ---------------------------------------------------------------------

def test_paired_t_matches_the_hand_computed_case():
    # d = (0.1, 0.2, 0.2): mean 1/6, sd sqrt(1/300), se = 1/30, t = 5, df = 2; for df = 2
    # the t tail has the closed form P(T >= t) = (1 - t / sqrt(t^2 + 2)) / 2.
    test = paired_one_sided({0: 0.6, 1: 0.7, 2: 0.8, 7: 0.9}, {0: 0.5, 1: 0.5, 2: 0.6})
    assert test.n == 3 and test.df == 2  # fit 7 has no control: not paired
    assert test.diff == pytest.approx(1 / 6, abs=1e-12)
    assert test.se == pytest.approx(1 / 30, abs=1e-12)
    assert test.t == pytest.approx(5.0, abs=1e-9)
    assert test.p == pytest.approx((1 - 5 / math.sqrt(27)) / 2, abs=1e-12)


def test_paired_t_is_one_sided_and_handles_degenerate_cases():
    worse = paired_one_sided({0: 0.5, 1: 0.5, 2: 0.6}, {0: 0.6, 1: 0.7, 2: 0.8})
    assert worse.t == pytest.approx(-5.0) and worse.p == pytest.approx(1 - (1 - 5 / math.sqrt(27)) / 2)
    assert math.isnan(paired_one_sided({0: 0.9}, {0: 0.1}).p)  # one pair: no test
    stuck = paired_one_sided({0: 0.5, 1: 0.5}, {0: 0.5, 1: 0.5})  # collapsed arms
    assert stuck.p == 1.0 and stuck.diff == 0.0
    assert paired_one_sided({0: 0.75, 1: 0.875}, {0: 0.5, 1: 0.625}).p == 0.0  # same gain every fit


def test_learning_threshold_is_the_smallest_significant_eps():
    curve = [(10.0, 0.01), (0.5, 0.2), (1.0, 0.04), (5.0, float("nan")), (100.0, 0.001)]
    assert learning_threshold(curve) == 1.0
    assert learning_threshold(curve, alpha=0.02) == 10.0
    assert learning_threshold([(1.0, 0.3), (5.0, float("nan"))]) is None
    with pytest.raises(ValueError, match="alpha"):
        learning_threshold(curve, alpha=1.5)


def _point(eps, fits, control=False, eps_hat_max=None):
    return {"label": f"eps={eps:g}" + (" coin" if control else ""), "epsilon": eps,
            "pair_key": eps, "control": control, "status": "ok", "fit_means": fits,
            "auroc_B_mean": float(np.mean(list(fits.values()))), "auroc_B_se": 0.01,
            "eps_hat_max": eps_hat_max}


def test_a_point_that_released_more_than_its_eps_never_sets_the_threshold():
    """A data-dependent release can land far above eps (cervical at eps 10: about 1,800):
    that point's pass is shown, flagged, and not filed under its eps."""
    gain = {0: 0.7, 1: 0.8, 2: 0.75}  # d = (0.2, 0.3, 0.2) against 0.5: p well below 0.05
    base = {0: 0.5, 1: 0.5, 2: 0.55}
    pts = [_point(10.0, gain, eps_hat_max=1821.0), _point(10.0, base, True, 2556.0),
           _point(100.0, gain, eps_hat_max=99.9999999), _point(100.0, base, True, 99.9)]
    curve = curve_rows(pts)
    rows = {r["epsilon"]: r for r in curve["rows"]}
    assert rows[10.0]["over_eps"] and rows[10.0]["p"] < 0.05
    assert not rows[100.0]["over_eps"]  # a calibration a hair below eps is within it
    assert curve["threshold"] == 100.0
    line = learning_sentence("fixed", "cervical", curve)
    assert "released eps_hat up to 1821" in line and "learns from eps = 100" in line
    # without the eps_hat (generators that do not report one) nothing changes
    bare = curve_rows([{**p, "eps_hat_max": None} for p in pts])
    assert bare["threshold"] == 10.0 and not any(r["over_eps"] for r in bare["rows"])
    assert "learns from eps = 10 " in learning_sentence("fixed", "cervical", bare)
    only = curve_rows(pts[:2])
    assert only["threshold"] is None
    assert "no point within its eps passes" in learning_sentence("fixed", "cervical", only)


def test_fit_means_and_single_class_share():
    rows = pd.DataFrame({
        "status": ["ok"] * 6 + ["failed"], "setting": ["B"] * 4 + ["C", "B", "B"],
        "metric": ["auroc"] * 7, "fit_index": [0, 0, 1, 1, 1, 1, 2],
        "trial_id": ["a", "a", "b", "b", "b", "b", "c"], "sample_index": [0, 1, 0, 1, 0, 1, 0],
        "value": [0.6, 0.8, 0.5, 0.5, 0.9, 0.5, 0.99],
        "label_share": [0.3, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
        "single_class": [False] * 7})
    assert fit_means(rows) == {0: pytest.approx(0.7), 1: pytest.approx(0.5)}
    # datasets (a,0) 0.3, (a,1) 1.0, (b,0) 0.0, (b,1) 1.0: three of four single-class
    assert single_class_share(rows) == pytest.approx(0.75)
    old = rows.drop(columns="label_share").assign(single_class=[True, False, True, True, True,
                                                                True, False])
    assert single_class_share(old) == pytest.approx(0.75)  # schema < 9: Setting B's flag


def _pool_rows(specs):
    """Utility rows, one per (run, fit, arm): (run_id, fit_index, seed, control, value,
    options_json, eps_hat); Setting B AUROC, ok, eps 10."""
    recs = [{"impl": "fixed", "dataset": "cervical", "epsilon": 10.0, "delta": 1e-5,
             "teachers": float("nan"), "preset": "default", "conditional": None,
             "options_json": o, "run_id": r, "fit_index": f, "seed": sd, "control": c,
             "value": v, "eps_hat": e, "status": "ok", "setting": "B", "metric": "auroc",
             "job": r} for r, f, sd, c, v, o, e in specs]
    return pd.DataFrame(recs)


def test_pooled_controls_pair_fits_by_seed_across_runs():
    # two runs (root seeds) of one setting, fit indices 0.. in each: pairs by fit seed, so
    # run a's fit 0 (seed 11) and run b's fit 0 (seed 21) are two pairs, not one; the
    # differences (0.1, 0.2, 0.2) are the hand case above: p = (1 - 5 / sqrt 27) / 2
    rows = _pool_rows([
        ("a", 0, 11, None, 0.6, "{}", 10.0), ("a", 0, 11, "coin", 0.5, "{}", 10.0),
        ("a", 1, 12, None, 0.7, "{}", 10.0), ("a", 1, 12, "coin", 0.5, "{}", 10.0),
        ("b", 0, 21, None, 0.8, "{}", 10.0), ("b", 0, 21, "coin", 0.6, "{}", 10.0),
        # another setting (options differ): its own record, and one run only
        ("c", 0, 11, None, 0.9, '{"x":1}', 10.0), ("c", 0, 11, "coin", 0.4, '{"x":1}', 10.0),
        ("c", 1, 12, None, 0.9, '{"x":1}', 10.0), ("c", 1, 12, "coin", 0.5, '{"x":1}', 10.0),
        # a setting with no control arm: no record
        ("d", 0, 11, None, 0.9, '{"y":1}', 10.0)])
    assert seed_means(rows[rows["control"].isna() & (rows["options_json"] == "{}")]) == {
        11: pytest.approx(0.6), 12: pytest.approx(0.7), 21: pytest.approx(0.8)}
    recs = {r["options_json"]: r for r in pooled_controls(rows)}
    assert set(recs) == {"{}", '{"x":1}'}
    r = recs["{}"]
    assert (r["runs"], r["fits"], r["jobs"]) == (2, 3, ["a", "b"])
    assert r["diff"] == pytest.approx(1 / 6, abs=1e-12) and r["se"] == pytest.approx(1 / 30)
    assert r["p"] == pytest.approx((1 - 5 / math.sqrt(27)) / 2, abs=1e-12)
    assert r["real_mean"] == pytest.approx(0.7) and r["control_mean"] == pytest.approx(0.5 + 1 / 30)
    assert r["learns"] is (r["p"] < 0.05) and not r["over_eps"]
    assert recs['{"x":1}']["runs"] == 1 and recs['{"x":1}']["diff"] == pytest.approx(0.45)


def test_pooled_controls_flag_a_setting_that_spent_more_than_its_eps():
    rows = _pool_rows([("a", f, f, c, v, "{}", 40.0) for f in range(3)
                       for c, v in ((None, 0.9 - 0.01 * f), ("coin", 0.5))])
    (r,) = pooled_controls(rows)
    assert r["over_eps"] and r["eps_hat_max"] == 40.0
    assert r["p"] < 0.05 and not r["learns"]  # passes, but not at eps = 10


# -- the control -----------------------------------------------------------------------

def _votes(k: int, n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, k + 1, (2, n), generator=g)


@pytest.mark.parametrize("noise,agg", [("laplace", "argmax"), ("laplace", "threshold"),
                                       ("gaussian", "argmax")])
def test_coin_labels_are_fair_and_ignore_the_votes(noise, agg):
    k, n = 10, 20_000
    n1 = torch.full((2, n), k)  # every teacher says 1
    rng = CounterRNG([1, 2], purpose="test", dtype=torch.float64)
    labels, rec = aggregator(noise, agg, "coin")(n1, k, rng, 0.1)
    share = labels.double().mean(dim=1)
    assert torch.all((share - 0.5).abs() < 4 * 0.5 / math.sqrt(n))  # 4 sd, fair coins
    assert torch.all(rec == 0)
    # the real mechanism at this noise follows the unanimous votes: the control differs
    real, _ = aggregator(noise, agg)(n1, k, CounterRNG([1, 2], purpose="test",
                                                       dtype=torch.float64), 0.1)
    assert bool(real.all())  # a gap of 5 to 10 against noise of scale 0.1
    with pytest.raises(ValueError, match="control"):
        aggregator(noise, agg, "dice")


def test_votes_under_overwhelming_noise_equal_the_coin_in_distribution():
    # GNMax with sigma = 10^4 against a vote gap of at most k = 10: the real labels are
    # coins by arithmetic (P(majority) - 1/2 < 3e-4). Same votes, 40,000 queries per arm:
    # the shares of label 1 and of "label = majority" agree within 4 binomial sd.
    k, n = 10, 40_000
    n1 = _votes(k, n, 0)
    real, _ = aggregator("gaussian", "argmax")(n1, k, CounterRNG([3, 4], purpose="t",
                                                                 dtype=torch.float64), 1e4)
    coin, _ = aggregator("gaussian", "argmax", "coin")(n1, k, CounterRNG([3, 4], purpose="t",
                                                                         dtype=torch.float64), 1e4)
    sd = 0.5 / math.sqrt(n)
    majority = n1 > k / 2
    for labels in (real, coin):
        assert torch.all((labels.double().mean(1) - 0.5).abs() < 4 * sd)
        assert torch.all(((labels == majority).double().mean(1) - 0.5).abs() < 4 * sd)
    assert not torch.equal(real, coin)  # the control replaced the labels


def test_gpate_coin_keeps_what_is_charged_and_randomises_the_answer():
    m, k, b, d = 1, 40, 50, 6
    grads = torch.full((m, k, b, d), 0.9e-4, dtype=torch.float64)  # unanimous: the top bin
    cfg = AggConfig(k_proj=3, clip=1e-4, bins=10, threshold=20, sigma1=1.0, sigma2=1.0,
                    projection="none")
    real = aggregate(grads, cfg, CounterRNG([5], purpose="a", dtype=torch.float64))
    coin = aggregate(grads, AggConfig(**{**cfg.__dict__, "control": "coin"}),
                     CounterRNG([5], purpose="a", dtype=torch.float64))
    assert torch.equal(real.answered, coin.answered) and torch.equal(real.counts, coin.counts)
    assert bool((real.choice == 9).all())
    counts = np.bincount(coin.choice.flatten().numpy(), minlength=10)
    # 300 answers over 10 bins: uniform at the chi-square test's 0.1 % level
    assert stats.chisquare(counts).pvalue > 1e-3


def test_a_generator_whose_votes_are_coins_equals_its_control(tmp_path):
    # fixed at eps = 0.05 with 20 iterations: sigma is in the thousands against k = 9
    # teachers, so its votes are coins. 8 paired fits x 2 samples, LR in Setting B (about
    # a second: 20 iterations on 455 rows).
    req = UtilityRequest(impl="fixed", dataset="breast-cancer", epsilons=(0.05,),
                         options={"iterations": 20}, fits=8, samples=2, classifiers=("lr",),
                         settings=("B",), control="coin", max_iter=None)
    res = run_utility(req, tmp_path / "u", LOCAL)
    (row,) = res["learning"][0]["rows"]
    assert row["fits"] == 8
    df = frame(tmp_path / "u")
    real = fit_means(df[df["control"].isna()])
    ctrl = fit_means(df[df["control"] == "coin"])
    assert real != ctrl  # the control ran, with other labels
    # equal in distribution: neither the paired test (two-sided) nor a two-sample KS over
    # the fits' means tells them apart at 5 %
    assert 0.025 < row["p"] < 0.975, row
    assert stats.ks_2samp(list(real.values()), list(ctrl.values())).pvalue > 0.05
    assert res["learning"][0]["threshold"] is None
