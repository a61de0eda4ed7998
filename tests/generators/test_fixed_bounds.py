"""`fixed`'s bounds and start options (lab/learning.md, "Epileptic"): ``bounds_mass`` and
``bounds_centre`` read the DP bounds off the same noisy histogram (post-processing: the plan
and the charge do not move), ``output_offset`` moves the generator's start by a constant."""

import dp_accounting
import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP
from raudit.generators.pategan.core.dp_bounds import DPBoundsEncoder, bin_edges, noisy_bounds, trim
from raudit.generators.pategan.fixed.nets import OffsetMLP

Fixed = generators.get("fixed")
BINS = len(bin_edges()) - 1


def _bin(value):
    return int(np.searchsorted(bin_edges(), value, side="right") - 1)


def test_trim_keeps_the_central_mass_of_the_kept_counts_by_hand():
    hist = np.zeros(BINS)
    # 10 in [-8,-4), 40 in [-4,-2), 40 in [2,4), 10 in [8,16); [0,1) holds noise -5
    for value, count in ((-5, 10), (-3, 40), (3, 40), (9, 10), (0.5, -5)):
        hist[_bin(value)] = count
    keep = hist > 0
    # cumulative shares 0.1, 0.5, 0.9, 1.0: 5 % falls in [-8,-4), 95 % in [8,16)
    assert trim(hist, keep, 0.9, False) == (-8.0, 16.0)
    # mass 0.7: 15 % is reached in [-4,-2), 85 % in [2,4)
    assert trim(hist, keep, 0.7, False) == (-4.0, 4.0)
    # centred: the median's bin is [-4,-2) (the cumulative share reaches 0.5 there), midpoint
    # -3; the bounds widen to be symmetric about it: h = max(-3 - -4, 4 - -3) = 7
    assert trim(hist, keep, 0.7, True) == (-10.0, 4.0)
    assert trim(np.full(BINS, -1.0), np.zeros(BINS, bool), 0.9, False) == (
        float(bin_edges()[0]), float(bin_edges()[1]))  # nothing positive: the mode's bin


def test_trimmed_bounds_step_over_a_dip_of_narrow_bins_the_run_stops_at():
    # epileptic's shape at eps = 10: a column centred near 0 with spread ~50 has few rows in
    # each of the narrow bins [-2,-1) .. [1,2), under 3 sigma; the run from the negative mode
    # stops there and clamps the whole positive half
    rng = np.random.default_rng(0)
    x = rng.normal(-3.0, 50.0, 9000).round()
    sigma = 29.0  # epileptic's histogram noise at eps = 10 (z 2.149 x sqrt(178))
    noise = rng.normal(0.0, sigma, BINS)
    lo, hi = noisy_bounds(x, noise, sigma)
    assert hi <= 0.0  # the default rule loses every positive value: the dip breaks its run
    lo, hi = noisy_bounds(x, noise, sigma, mass=0.9)
    assert lo < np.quantile(x, 0.05) and hi > np.quantile(x, 0.95)
    assert hi - lo <= 4 * (np.quantile(x, 0.95) - np.quantile(x, 0.05))  # not the full run
    lo, hi = noisy_bounds(x, noise, sigma, mass=0.9, centred=True)
    # symmetric about the midpoint of the kept counts' median bin: [-8,-4) here (the
    # data's median -3 lies in [-4,-2), which is kept; the failing dip bins above it are not)
    assert (lo + hi) / 2 == -6.0


def test_a_spurious_far_bin_moves_the_trim_over_all_bins_but_not_within_the_run():
    # cervical's failure (N = 686, eps 5): an empty bin far out passes the threshold with its
    # noise (~3-4 sigma, here 80 = 12 % of N) and holds more than (1 - mass) / 2 of the kept
    # counts, so the upper quantile of every passing bin lands in it: bound 2^19
    rng = np.random.default_rng(0)
    y = rng.normal(10, 3, 686).round()
    noise = np.zeros(BINS)
    noise[-2] = 80.0
    assert noisy_bounds(y, noise, 20.0, mass=0.9) == (4.0, 2.0 ** 19)
    assert noisy_bounds(y, noise, 20.0, mass=0.9, within_run=True) == (4.0, 16.0)
    assert noisy_bounds(y, noise, 20.0) == (4.0, 16.0)  # the run alone never reaches it


def test_within_the_run_the_centred_bounds_still_reach_past_the_dip():
    rng = np.random.default_rng(0)
    x = rng.normal(-3.0, 50.0, 9000).round()
    sigma = 29.0
    noise = rng.normal(0.0, sigma, BINS)
    clamped = lambda b: float(((x < b[0]) | (x > b[1])).mean())
    run = noisy_bounds(x, noise, sigma, mass=0.9, centred=True, within_run=True)
    assert run == (-128.0, 32.0)  # the run [-128, -2) widened about its median's bin [-8, -4)
    assert clamped(run) < 0.3 < 0.45 < clamped(noisy_bounds(x, noise, sigma))


def test_default_bounds_are_the_trimmed_centred_run():
    o = Fixed().options
    assert (o["bounds_mass"], o["bounds_centre"], o["bounds_keep"]) == (0.9, True, "run")
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"a": rng.normal(0, 50, 400).round(), "label": rng.integers(0, 2, 400)})
    cols = (ColumnMeta("a", "integer", -500.0, 500.0, "data"),
            ColumnMeta("label", "binary", 0.0, 1.0, "public"))
    kw = dict(teachers=3, iterations=2, batch=16, student_steps=1)
    fit = lambda **o: Fixed(**kw, **o).fit_many([df], epsilon=2.0, seeds=[5], columns=cols)[0]
    bounds = lambda m: m._batch.encoders[0].declared_bounds()["a"]
    assert bounds(fit()) == bounds(fit(bounds_mass=0.9, bounds_centre=True, bounds_keep="run"))
    assert bounds(fit()) != bounds(fit(bounds_mass=1.0, bounds_centre=False))


def test_encoder_passes_the_options_and_keeps_the_noise():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(0, 50, 3000).round(), "label": rng.integers(0, 2, 3000)})
    cols = (ColumnMeta("a", "integer", -4000.0, 4000.0, "data"),
            ColumnMeta("label", "binary", 0.0, 1.0, "public"))
    full = DPBoundsEncoder(noise_multiplier=0.5, seed=3).fit(df, cols)
    cut = DPBoundsEncoder(noise_multiplier=0.5, seed=3, mass=0.9, centred=True).fit(df, cols)
    assert cut.hi[0] - cut.lo[0] < full.hi[0] - full.lo[0]
    assert (cut.lo[1], cut.hi[1]) == (0.0, 1.0)  # the public label is untouched
    enc = cut.transform(df)[:, 0]
    assert abs(np.median(enc) - 0.5) < 0.1  # the data's centre at the encoding's centre


def _eps_by_hand(z_bounds, sigma, queries, delta=1e-5):
    acct = dp_accounting.rdp.RdpAccountant()
    acct.compose(dp_accounting.GaussianDpEvent(z_bounds), 1)
    acct.compose(dp_accounting.GaussianDpEvent(sigma / np.sqrt(2)), queries)  # GNMax, L2 sqrt 2
    return acct.get_epsilon(delta)


def test_bounds_options_are_post_processing_the_charge_does_not_move():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.normal(0, 50, 400).round(), "b": rng.normal(5, 2, 400),
                       "label": rng.integers(0, 2, 400)})
    cols = (ColumnMeta("a", "integer", -500.0, 500.0, "data"),
            ColumnMeta("b", "continuous", 0.0, 10.0, "data"),
            ColumnMeta("label", "binary", 0.0, 1.0, "public"))
    kw = dict(teachers=3, iterations=3, batch=16, student_steps=2)
    fit = lambda **o: Fixed(**kw, **o).fit_many([df], epsilon=2.0, seeds=[5], columns=cols)[0]
    base = fit(bounds_mass=1.0, bounds_centre=False)  # the rule before 2026-11-25
    cut = fit(bounds_keep="all", output_offset=0.5)
    a, b = base.summary(), cut.summary()
    for key in ("sigma", "bounds_noise_multiplier", "eps_hat", "queries", "dp_bounds_columns"):
        assert a[key] == b[key], key
    # by hand: one Gaussian histogram (z) and 3 x 2 x 16 GNMax answers, composed in RDP
    assert b["eps_hat"] == pytest.approx(_eps_by_hand(b["bounds_noise_multiplier"], b["sigma"], 96),
                                         rel=1e-9)
    assert b["eps_hat"] <= 2.0
    bounds_a = base._batch.encoders[0].declared_bounds()["a"]
    bounds_b = cut._batch.encoders[0].declared_bounds()["a"]
    q05, q95 = np.quantile(df["a"], [0.05, 0.95])
    assert bounds_a[1] < q95  # the default run stops at the dip of narrow bins near 0
    assert bounds_b[0] < q05 and bounds_b[1] > q95
    s = cut.sample(300, seed=0)
    assert s["a"].between(*bounds_b).all() and set(np.unique(s["label"])) == {0, 1}


def test_offset_generator_adds_the_constant_to_the_mlp():
    rng = CounterRNG([3], purpose="t", dtype=torch.float64)
    plain = MLP([4, 6, 3], ["relu", "linear"])
    shifted = OffsetMLP(plain.widths, plain.activations, offset=0.5)
    p = plain.create(rng)
    z = torch.randn(1, 5, 4, dtype=p.flat.dtype)
    with torch.no_grad():
        assert torch.equal(shifted(p, z), plain(p, z) + 0.5)


def test_output_offset_moves_the_first_fakes_to_the_centre():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({f"x{i}": rng.normal(0.5, 0.02, 300) for i in range(6)})
    df["label"] = rng.integers(0, 2, 300)
    cols = tuple(ColumnMeta(c, "continuous", 0.0, 1.0, "public") for c in df.columns[:-1]) + (
        ColumnMeta("label", "binary", 0.0, 1.0, "public"),)
    kw = dict(teachers=2, iterations=1, batch=8, student_steps=1, lr=1e-9, teacher_lr=1e-9)
    fit = lambda **o: Fixed(**kw, **o).fit_many([df], epsilon=1e4, seeds=[1], columns=cols)[0]
    plain, shifted = fit(), fit(output_offset=0.5)
    x0 = plain._batch.sample_encoded([0], 2000, [7]).numpy()[0][:, :-1]
    x1 = shifted._batch.sample_encoded([0], 2000, [7]).numpy()[0][:, :-1]
    # the same networks (lr ~ 0: one step moves nothing visible), shifted by 0.5
    np.testing.assert_allclose(x1, x0 + 0.5, atol=1e-5)
    assert abs(x0.mean()) < 0.15 and abs(x1.mean() - 0.5) < 0.15


def test_bad_bounds_and_offset_options_are_one_line_errors():
    for kwargs, word in (({"bounds_mass": 0.0}, "bounds_mass"), ({"bounds_mass": 1.5}, "bounds_mass"),
                         ({"bounds_centre": "yes"}, "bounds_centre"),
                         ({"bounds_keep": "some"}, "bounds_keep"),
                         ({"output_offset": 2.0}, "output_offset"),
                         ({"output_offset": 0.5, "arch": "smartnoise"}, "output_offset")):
        with pytest.raises(ConfigError, match=word) as err:
            Fixed(**kwargs)
        assert "\n" not in str(err.value)
