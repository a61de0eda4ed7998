"""`fixed`: the privacy-correct PATE-GAN (fixed budget, GNMax on RDP, iid teachers, DP bounds)."""

import dp_accounting
import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.data.dataset import ColumnMeta, infer_columns
from raudit.errors import ConfigError, DataError
from raudit.events import AccountantStep, EventLog, TeacherBatch, Votes
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.dp_bounds import DPBoundsEncoder, bin_edges, noisy_bounds
from raudit.generators.pategan.fixed.generator import plan
from raudit.generators.pategan.core.partitions import iid_partition

Fixed = generators.get("fixed")


def table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.normal(3, 1, n)})
    df["label"] = (rng.random(n) < 0.3).astype(int)
    return df


def dp_accounting_eps(events, delta):
    acct = dp_accounting.rdp.RdpAccountant()
    for event, count in events:
        acct.compose(event, count)
    return acct.get_epsilon(delta)


@pytest.mark.parametrize("eps,queries,cols", [(1.0, 12_800, 28), (0.5, 640, 0), (4.0, 3_200, 3)])
def test_plan_spends_eps_exactly_as_dp_accounting_counts_it(eps, queries, cols):
    z_bounds, sigma = plan(eps, 1e-5, queries, cols, 0.2)
    assert (z_bounds is None) == (cols == 0)
    events = [(dp_accounting.GaussianDpEvent(sigma / np.sqrt(2)), queries)]  # GNMax: L2 sens. sqrt 2
    if z_bounds is not None:
        events.append((dp_accounting.GaussianDpEvent(z_bounds), 1))
        assert dp_accounting_eps(events[1:], 1e-5) == pytest.approx(0.2 * eps, rel=1e-3)
    total = dp_accounting_eps(events, 1e-5)
    assert total <= eps and total == pytest.approx(eps, rel=1e-3)


def test_fixed_budget_every_query_charged_and_events():
    log = EventLog()
    gen = Fixed(teachers=3, iterations=4, batch=16, student_steps=2)
    models = gen.fit_many([table(seed=1), table(n=150, seed=2)], epsilon=1.0, seeds=[1, 2],
                          columns=infer_columns(table(), bounds="public"), observer=log)
    _, sigma = plan(1.0, 1e-5, 4 * 2 * 16, 0, 0.2)
    for m in models:  # the stopping time is fixed: the same for every table
        s = m.summary()
        assert s["iterations"] == 4 and s["queries"] == 128
        assert s["sigma"] == pytest.approx(sigma) and s["eps_hat"] <= 1.0
        assert s["eps_hat"] == pytest.approx(1.0, rel=1e-3)
    votes = log.of(Votes)
    assert len(votes) == 4 * 2
    assert all(v.noise_kind == "gaussian" and v.charged.all() and v.drawn.shape == (2, 16, 2)
               for v in votes)
    steps = log.of(AccountantStep)
    assert [s.iteration for s in steps] == [0, 1, 2, 3]
    assert np.all(np.diff(np.stack([s.eps_hat for s in steps]), axis=0) > 0)
    # teachers read disjoint rows: no row is seen by two teachers of one model
    for model in range(2):
        owner = {}
        for e in log.of(TeacherBatch):
            for r in e.rows[model].ravel():
                assert owner.setdefault(int(r), e.teacher) == e.teacher


def test_iid_partition_is_a_partition():
    rows = torch.tensor([50, 37])
    parts, sizes = iid_partition(CounterRNG([3, 4]), rows, 50, 4)
    for m in range(2):
        got = np.concatenate([parts[m, t, : sizes[m, t]].numpy() for t in range(4)])
        assert sorted(got.tolist()) == list(range(int(rows[m])))


def test_noisy_bounds_ignore_a_lone_outlier_and_use_public_bounds():
    x = np.r_[np.zeros(300), np.full(300, 3.0), [5000.0]]  # one record holds the max
    zero = np.zeros(len(bin_edges()) - 1)
    assert noisy_bounds(x, zero, sigma=10.0) == (0.0, 4.0)  # [0,1) and [2,4) pass, 5000 does not
    df = pd.DataFrame({"a": x, "label": (np.arange(len(x)) % 2)})
    cols = (ColumnMeta("a", "continuous", -1.0, 10.0, "data"),
            ColumnMeta("label", "binary", 0.0, 1.0, "public"))
    enc = DPBoundsEncoder(noise_multiplier=2.0, seed=0).fit(df, cols)
    assert enc.dp_columns == [0] and (enc.lo[1], enc.hi[1]) == (0.0, 1.0)
    assert enc.hi[0] < 5000.0 and enc.lo[0] == 0.0
    with pytest.raises(ValueError):
        DPBoundsEncoder(noise_multiplier=None).fit(df, cols)


def test_dp_bounds_are_charged_and_reported():
    df = table()
    cols = infer_columns(df)  # data bounds: a and b need DP bounds, the label does not
    cols = cols[:2] + (ColumnMeta("label", "binary", 0.0, 1.0, "public"),)
    m = Fixed(teachers=2, iterations=2, batch=8, student_steps=1).fit(df, epsilon=1.0, seed=0,
                                                                       columns=cols)
    s = m.summary()
    assert s["dp_bounds_columns"] == 2 and s["bounds_noise_multiplier"] is not None
    assert s["eps_hat"] <= 1.0 and s["eps_hat"] == pytest.approx(1.0, rel=1e-3)


def test_dp_bounds_noise_is_each_models_own_seed_wherever_its_table_sits():
    """Model i's encoder draws the histogram noise of seeds[i] (``encoder(seed)``), also
    when one table object fills several places of the chunk."""
    df, other = table(), table(seed=1)
    cols = infer_columns(df)[:2] + (ColumnMeta("label", "binary", 0.0, 1.0, "public"),)
    models = Fixed(teachers=2, iterations=2, batch=8, student_steps=1).fit_many(
        [df, other, df], epsilon=1.0, seeds=[3, 4, 5], columns=cols)
    z = models[0].summary()["bounds_noise_multiplier"]
    for m, t, seed in zip(models, [df, other, df], [3, 4, 5]):
        alone = DPBoundsEncoder(noise_multiplier=z, seed=seed, mass=0.9, centred=True,
                                within_run=True).fit(t, cols)  # fixed's default bounds rule
        assert m._batch.encoders[m._index].declared_bounds() == alone.declared_bounds()
    assert models[0].summary()["output_bounds"] != models[2].summary()["output_bounds"]


def test_rejects_bad_options():
    for kwargs in ({"bounds_share": 1.0}, {"iterations": 0}, {"preset": "paper"}, {"lr": -1}):
        with pytest.raises(ConfigError):
            Fixed(**kwargs)
    with pytest.raises(ConfigError, match="teachers"):
        Fixed(teachers=50).fit(table(n=20), epsilon=1.0)


def test_conditional_generator_writes_a_public_prior_label_and_charges_the_same():
    cols = infer_columns(table(), bounds="public")
    gen = Fixed(teachers=3, iterations=3, batch=16, student_steps=2, conditional=True,
                label_prior=0.2)
    m = gen.fit_many([table(seed=3)], epsilon=1.0, seeds=[5], columns=cols)[0]
    _, sigma = plan(1.0, 1e-5, 3 * 2 * 16, 0, 0.2)  # the label costs nothing: it reads no record
    assert m.summary()["sigma"] == pytest.approx(sigma)
    y = m.sample(4000, seed=1)["label"]
    assert set(np.unique(y)) == {0, 1}
    assert abs(y.mean() - 0.2) < 4 * np.sqrt(0.2 * 0.8 / 4000)  # binomial sd 0.0063


def test_conditional_takes_the_label_as_public_0_1_and_rejects_other_labels():
    cols = infer_columns(table())  # bounds from the data: a, b and the label lack public ones
    m = Fixed(teachers=2, iterations=2, batch=8, student_steps=1).fit(table(), epsilon=1.0,
                                                                      columns=cols)
    assert m.summary()["dp_bounds_columns"] == 2  # the label is schema, not DP-bounded
    assert set(m.sample(500, seed=0)["label"]) == {0, 1}
    bad = table().assign(label=lambda d: d["label"] * 2)
    with pytest.raises(DataError, match="0/1 label"):
        Fixed(teachers=2).fit(bad, epsilon=1.0)
    Fixed(teachers=2, iterations=1, conditional=False).fit(bad, epsilon=1.0)
    for kwargs in ({"label_prior": 0.0}, {"label_prior": 1.0}, {"conditional": 1}):
        with pytest.raises(ConfigError):
            Fixed(**kwargs)


def test_query_batch_sets_the_answers_charged_apart_from_the_teacher_batch():
    log = EventLog()
    gen = Fixed(teachers=3, iterations=3, batch=16, student_steps=2, query_batch=5)
    m = gen.fit_many([table(seed=4)], epsilon=1.0, seeds=[2],
                     columns=infer_columns(table(), bounds="public"), observer=log)[0]
    _, sigma = plan(1.0, 1e-5, 3 * 2 * 5, 0, 0.2)
    assert m.summary()["queries"] == 30 and m.summary()["sigma"] == pytest.approx(sigma)
    votes = log.of(Votes)
    assert len(votes) == 6 and all(v.drawn.shape == (1, 5, 2) for v in votes)
    assert all(e.rows.shape[-1] == 16 for e in log.of(TeacherBatch))  # teachers keep batch 16


def _bin(value):
    return int(np.searchsorted(bin_edges(), value, side="right") - 1)


def test_noisy_bounds_grow_from_the_mode_and_ignore_a_far_spurious_bin():
    x = np.r_[np.full(300, 2.5), np.full(200, 5.0), np.full(100, 20.0)]  # [2,4), [4,8), [16,32)
    noise = np.zeros(len(bin_edges()) - 1)
    noise[_bin(-5000.0)] = 50.0  # an empty bin far away whose noise (5 sigma) passes 3 sigma
    # the run steps over the empty [8,16) (one failing bin) to [16,32): bounds [2, 32]
    assert noisy_bounds(x, noise, sigma=10.0) == (2.0, 32.0)
    noise[_bin(20.0)] = -1e3  # [16,32) now fails: [8,16) and [16,32) are two failing bins
    assert noisy_bounds(x, noise, sigma=10.0) == (2.0, 8.0)


def test_binary_columns_take_schema_bounds_without_budget():
    df = pd.DataFrame({"flag": [1, 1, 1, 1], "n": [3.0, 5.0, 6.0, 7.0], "label": [0, 1, 0, 1]})
    cols = (ColumnMeta("flag", "binary", 1.0, 1.0, "data", (0.0, 1.0)),
            ColumnMeta("n", "continuous", 3.0, 7.0, "data"),
            ColumnMeta("label", "binary", 0.0, 1.0, "data", (0.0, 1.0)))
    enc = DPBoundsEncoder(noise_multiplier=1.0, seed=0).fit(df, cols)
    assert enc.dp_columns == [1]  # only n is DP-bounded; flag's 0 stays in range
    assert (enc.lo[0], enc.hi[0]) == (0.0, 1.0) and (enc.lo[2], enc.hi[2]) == (0.0, 1.0)
    odd = (ColumnMeta("flag", "binary", 1.0, 2.0, "data", (1.0, 2.0)),) + cols[1:]
    assert DPBoundsEncoder(noise_multiplier=1.0).fit(df.assign(flag=2), odd).dp_columns == [0, 1]


def test_summary_declares_the_output_bounds_the_samples_respect():
    m = Fixed(teachers=2, iterations=2, batch=8, student_steps=1).fit(table(), epsilon=1.0, seed=0)
    bounds = m.summary()["output_bounds"]
    assert list(bounds) == ["a", "b", "label"] and bounds["label"] == (0.0, 1.0)
    s = m.sample(500, seed=1)
    for c, (lo, hi) in bounds.items():
        assert s[c].min() >= lo and s[c].max() <= hi


@pytest.mark.parametrize("arch", ["mlp", "borealis", "smartnoise"])
def test_every_arch_spends_the_same_planned_budget(arch):
    cols = infer_columns(table(), bounds="public")
    gen = Fixed(teachers=2, iterations=3, batch=8, student_steps=1, arch=arch)
    m = gen.fit_many([table(seed=1)], epsilon=1.0, seeds=[2], columns=cols)[0]
    _, sigma = plan(1.0, 1e-5, 3 * 1 * 8, 0, 0.2)
    assert m.summary()["sigma"] == pytest.approx(sigma)
    assert m.summary()["eps_hat"] <= 1.0
    s = m.sample(50, seed=0)
    assert list(s.columns) == ["a", "b", "label"] and np.isfinite(s.to_numpy(float)).all()
    with pytest.raises(ConfigError, match="arch"):
        Fixed(arch="resnet")


def test_an_eps_no_noise_can_serve_names_the_smallest_that_can():
    # the RDP-to-(eps, delta) conversion has a floor: below it no sigma calibrates, and
    # the error says from which eps one does (and that one does, 0.1 % below does not)
    from raudit.generators.pategan.core.noise_calibration import NoNoise

    with pytest.raises(NoNoise, match="smallest it can be calibrated for is") as err:
        plan(0.001, 1e-5, 12_800, 5, 0.2)
    msg = str(err.value)
    assert "\n" not in msg
    least = float(msg.split("calibrated for is ")[1].split(";")[0])
    plan(least * 1.001, 1e-5, 12_800, 5, 0.2)  # no error
    with pytest.raises(NoNoise):
        plan(least / 1.002, 1e-5, 12_800, 5, 0.2)
