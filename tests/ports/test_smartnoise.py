"""`smartnoise`: the OpenDP SmartNoise PATEGAN port, bugs on (spec section 6)."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.accountants import create, eps_data_independent, iterations_to_reach
from raudit.events import PateVote
from raudit.errors import ConfigError, DataError
from raudit.events import EventLog, TeacherBatch, Votes
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.ports.smartnoise import encoding as sne
from raudit.generators.pategan.ports.smartnoise import port as snp
from raudit.generators.pategan.core.nets import EpsilonTooSmall

SmartNoise = generators.get("smartnoise")


def table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 4)) * [1, 5, 10, 0.1], columns=["a", "b", "c", "d"])
    df["count"] = rng.integers(0, 9, size=n)
    df["label"] = (rng.random(n) < 0.3).astype(int)
    return df


def test_architecture_shapes_and_init():
    nets = SmartNoise().nets(10)
    rng = CounterRNG([0], dtype=torch.float64)
    g, t = nets.generator.create(rng), nets.teacher.create(rng)
    assert {k: tuple(v.shape[1:]) for k, v in g.views().items()} == {
        "w0": (64, 64), "g0": (64,), "b0": (64,), "w1": (64, 64), "g1": (64,), "b1": (64,),
        "w2": (64, 10), "g2": (10,), "b2": (10,)}  # Linear(bias=False) + LayerNorm per block
    assert torch.all(g["g2"] == 1) and torch.all(g["b2"] == 0)
    assert {k: tuple(v.shape[1:]) for k, v in t.views().items()} == {
        "w0": (10, 6), "b0": (6,), "w1": (6, 3), "b1": (3,), "w2": (3, 1), "b2": (1,)}
    assert nets.teacher.activations == ["leaky_relu", "leaky_relu", "sigmoid"]
    # biases keep nn.Linear's default U(-1/sqrt(fan_in), 1/sqrt(fan_in)); weights Xavier
    assert t["b0"].abs().max() <= 1 / math.sqrt(10) and t["b0"].std() > 0
    assert t["w0"].abs().max() <= math.sqrt(6 / 16)


@pytest.mark.parametrize("binary", [False, True])
def test_generator_matches_torch_modules(binary):
    """The stacked generator computes snsynth's Generator.forward (torch.nn modules, same weights)."""
    net = SmartNoise(binary=binary).nets(5).generator
    p = net.create(CounterRNG([0], dtype=torch.float64))
    z = torch.rand(1, 50, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0))

    def block(i, n_in, n_out):
        lin, ln = torch.nn.Linear(n_in, n_out, bias=False).double(), torch.nn.LayerNorm(n_out).double()
        with torch.no_grad():
            lin.weight.copy_(p[f"w{i}"][0].T)
            ln.weight.copy_(p[f"g{i}"][0])
            ln.bias.copy_(p[f"b{i}"][0])
        return torch.nn.Sequential(lin, ln, torch.nn.Tanh() if binary else torch.nn.LeakyReLU(0.2))

    b0, b1, b2 = block(0, 64, 64), block(1, 64, 64), block(2, 64, 5)
    x = b0(z[0]) + z[0]
    x = b1(x) + x
    torch.testing.assert_close(net(p, z)[0], b2(x), rtol=0, atol=1e-12)
    out = net(p, z)
    assert (out.abs().max() <= 1) if binary else (out.max() > 1)  # Tanh only in binary mode


def test_study_encoding_features_to_minus_one_one_label_one_hot():
    df = table()
    enc = sne.SmartNoiseEncoder().fit(df, None)
    x = enc.transform(df)
    assert x.shape == (len(df), 5 + 2)
    assert x[:, :5].min() == -1 and x[:, :5].max() == 1
    np.testing.assert_array_equal(x[:, 5:].argmax(1), df["label"].to_numpy())
    back = enc.inverse(x)
    np.testing.assert_allclose(back.to_numpy(float), df.to_numpy(float), atol=1e-12)


def test_library_encoding_infers_ordinal_columns():
    df = table()
    assert sne.column_plan(df, "library") == (("continuous", 1),) * 4 + (("onehot", 9), ("onehot", 2))
    x = sne.SmartNoiseEncoder(encoding="library").fit(df, None).transform(df)
    assert x.shape == (len(df), 4 + 9 + 2) and x[:, :4].min() == 0  # MinMaxTransformer(): [0, 1]


def test_dp_bounds_histogram():
    vals = np.array([0.3] * 50 + [1.5] * 50 + [5.0] * 50 + [-3.0] * 50)
    assert sne.approx_bounds(vals, 10.0, np.zeros(128)) == (-4.0, 8.0)
    with pytest.raises(DataError):
        sne.approx_bounds(vals[:3], 0.01, np.zeros(128))


def test_dp_bounds_draw_per_model_noise(monkeypatch):
    seen = []
    real = sne.approx_bounds
    monkeypatch.setattr(sne, "approx_bounds", lambda v, e, noise: seen.append((e, noise.copy())) or real(v, e, noise))
    df = table(n=400)
    gens = SmartNoise(bounds="dp", preprocessor_eps=2.0, teachers=2, max_iter=2).fit_many(
        [df, df], epsilon=3.0, seeds=[0, 1])
    assert len(seen) == 2 * 5 and all(e == pytest.approx(2.0 / 5) for e, _ in seen)
    assert not np.allclose(seen[0][1], seen[5][1])  # another seed, other noise
    s = gens[0].summary()
    assert s["epsilon_training"] == pytest.approx(1.0) and s["preprocessor_eps"] == 2.0
    with pytest.raises(ConfigError, match="too small"):
        SmartNoise(bounds="dp", preprocessor_eps=2.995).fit(df, epsilon=3.0, seed=0)
    with pytest.raises(ConfigError, match="preprocessor_eps"):
        SmartNoise(bounds="dp").fit(df, epsilon=3.0, seed=0)


def test_dp_bounds_noise_is_each_models_own_seed_wherever_its_table_sits():
    """The encoder of model i is built with seeds[i] (``encoder(seed)``): a table object
    passed twice, with an equal copy between them, gives each model the bounds its own
    seed draws, as an encoder fitted alone with that seed."""
    df, other = table(n=400), table(n=400, seed=1)
    gens = SmartNoise(bounds="dp", preprocessor_eps=2.0, teachers=2, max_iter=2).fit_many(
        [df, other, df, df.copy()], epsilon=3.0, seeds=[7, 8, 9, 7])
    for g, t, seed in zip(gens, [df, other, df, df], [7, 8, 9, 7]):
        alone = sne.SmartNoiseEncoder(bounds="dp", preprocessor_eps=2.0, seed=seed).fit(t, None)
        enc = g._batch.encoders[g._index]
        np.testing.assert_array_equal(enc.lo, alone.lo)
        np.testing.assert_array_equal(enc.hi, alone.hi)
    assert not np.array_equal(gens[0]._batch.encoders[gens[0]._index].lo,
                              gens[2]._batch.encoders[gens[2]._index].lo)  # seeds 7 and 9
    with pytest.raises(ConfigError, match="seed"):
        sne.SmartNoiseEncoder(bounds="dp", preprocessor_eps=2.0).fit(df, None)


def test_teachers_see_array_split_slices_in_row_order():
    log = EventLog()
    SmartNoise(teachers=3, batch=16, max_iter=20).fit(table(n=100), epsilon=1e6, seed=0, observer=log)
    seen = [set() for _ in range(3)]
    for e in log.of(TeacherBatch):
        seen[e.teacher].update(e.rows[0].tolist())
    assert [(min(s), max(s)) for s in seen] == [(0, 33), (34, 66), (67, 99)]  # np.array_split
    assert [len(s) for s in seen] == [34, 33, 33]


def test_accountant_is_missing_log_with_n_dependent_delta():
    log, lam = EventLog(), 1.0
    g = SmartNoise(teachers=5, batch=16, lam=lam, max_iter=3).fit(table(), epsilon=1e6, seed=1, observer=log)
    delta = 1 / (120 * math.sqrt(120))  # upstream default 1/(N sqrt N)
    assert g.summary()["delta"] == pytest.approx(delta, rel=1e-15)
    acct = {v: create(v, lam=lam, orders=100, k=5) for v in ("missing-log", "paper")}
    for e in log.of(Votes):
        for a in acct.values():
            a.compose(PateVote(e.n1, a.k, mask=e.charged))
    assert g.summary()["eps_hat"] == pytest.approx(acct["missing-log"].eps(delta)[0], rel=1e-12)
    assert g.summary()["eps_hat"] != pytest.approx(acct["paper"].eps(delta)[0], rel=1e-3)


@pytest.mark.parametrize("eps,batch,delta", [(0.3, 16, 1e-5), (0.5, 12, 1e-5), (1.0, 32, None)])
def test_checks_eps_hat_at_the_top(eps, batch, delta):
    """lam = 1e-3, L = 100: eps_hat depends only on the query count; checked at the loop's top."""
    df = table()
    g = SmartNoise(teachers=3, batch=batch).fit(df, epsilon=eps, delta=delta, seed=0)
    d = delta or 1 / (len(df) * math.sqrt(len(df)))
    expected = iterations_to_reach(eps, 1e-3, 100, d, queries_per_iteration=5 * batch, check="top")
    assert g.summary()["iterations"] == expected
    # the last check (before the last iteration) was below eps; the iteration then overshoots
    assert eps_data_independent((expected - 1) * 5 * batch, 1e-3, 100, d) <= eps <= g.summary()["eps_hat"]


def test_epsilon_too_small():
    """log(1/delta)/L = 0.115 > 0.1 before any query: smartnoise refuses to train."""
    with pytest.raises(EpsilonTooSmall, match="floor"):
        SmartNoise(teachers=2).fit(table(), epsilon=0.1, delta=1e-5, seed=0)
    assert SmartNoise(teachers=2, check="after", max_iter=1).fit(
        table(), epsilon=0.1, delta=1e-5, seed=0).summary()["iterations"] == 1


def test_paper_preset_delta_is_the_papers():
    g = SmartNoise(preset="paper", teachers=2, max_iter=1).fit(table(n=200), epsilon=1.0, seed=0)
    assert g.summary()["delta"] == 1e-5 and g.summary()["hyperparameters"]["batch"] == 64


def test_laplace_noise_has_scale_one_over_lambda():
    log = EventLog()
    SmartNoise(teachers=3, batch=64, max_iter=4).fit(table(n=300), epsilon=1e6, seed=3, observer=log)
    votes = log.of(Votes)
    noise = np.concatenate([e.drawn[0] for e in votes])
    assert all(e.noise_scale == pytest.approx(1000.0) for e in votes)  # lambda = 1e-3 hard-coded
    assert noise.size == 4 * 5 * 64
    assert np.mean(np.abs(noise)) == pytest.approx(1000.0, rel=0.12)  # sd of the mean ~ 2.8%
    for e in votes:
        np.testing.assert_array_equal(e.labels[0], e.n1[0] + e.drawn[0] > 1.5)


def test_generation_noise_mismatch_is_an_option():
    df = table()
    normal = SmartNoise(teachers=2, batch=16, max_iter=5).fit(df, epsilon=1e6, seed=0)
    uniform = SmartNoise(teachers=2, batch=16, max_iter=5, generation_noise="uniform").fit(df, epsilon=1e6, seed=0)
    assert normal.summary()["eps_hat"] == uniform.summary()["eps_hat"]
    a, b = normal.sample(200, seed=1), uniform.sample(200, seed=1)
    assert not np.allclose(a.to_numpy(float), b.to_numpy(float))


@pytest.mark.parametrize("bounds", ["data", "metadata"])
def test_output_schema_dtypes_and_scale(bounds):
    df = table(n=150)
    out = SmartNoise(teachers=2, batch=16, max_iter=30, bounds=bounds).fit(
        df, epsilon=1e6, seed=0).sample(300, seed=2)
    assert list(out.columns) == list(df.columns) and (out.dtypes == df.dtypes).all()
    assert ((out >= df.min()) & (out <= df.max())).all().all()
    assert set(out["label"].unique()) <= {0, 1}


def test_batched_equals_single_float64():
    tables, seeds = [table(seed=1), table(n=110, seed=2), table(n=130, seed=3)], [11, 12, 13]
    opts = dict(teachers=3, batch=16, max_iter=8)
    many = SmartNoise(**opts).fit_many(tables, epsilon=1e6, seeds=seeds)
    for t, s, m in zip(tables, seeds, many):
        alone = SmartNoise(**opts).fit(t, epsilon=1e6, seed=s)
        np.testing.assert_allclose(m.sample(50, seed=5).to_numpy(float),
                                   alone.sample(50, seed=5).to_numpy(float), rtol=0, atol=1e-9)
        assert m.summary()["delta"] == alone.summary()["delta"] == 1 / (len(t) * math.sqrt(len(t)))


def test_tables_with_other_one_hot_widths_train_apart():
    """One-hot categories come from the records: dropping the rows with count == 8 removes a
    category, the encoded width changes, and the two tables train in separate calls."""
    d_in = table(n=80, seed=5)
    d_out = d_in[d_in["count"] != 8]
    opts = dict(teachers=2, batch=8, max_iter=3, encoding="library")
    many = SmartNoise(**opts).fit_many([d_in, d_out], epsilon=1e6, seeds=[0, 1])
    assert [m._batch.trained.generator["w2"].shape[-1] for m in many] == [4 + 9 + 2, 4 + 8 + 2]
    alone = SmartNoise(**opts).fit(d_out, epsilon=1e6, seed=1)
    pd.testing.assert_frame_equal(many[1].sample(20, seed=0), alone.sample(20, seed=0))
    assert 8 not in set(many[1].sample(200, seed=0)["count"])


@pytest.mark.parametrize("binary", [False, True])
def test_generator_forward_without_gradients_has_the_same_bits(binary):
    """The in-place forward used for the teachers' and votes' fakes (no autograd) against
    the autograd forward the generator step uses."""
    from raudit.generators.pategan.ports.smartnoise.nets import ResidualGenerator

    for m, n, latent, d in [(3, 96, 64, 30), (2, 7, 8, 13)]:
        net, rng = ResidualGenerator(latent, d, binary), CounterRNG(list(range(m)), dtype=torch.float64)
        p = net.create(rng)
        z = rng.uniform(n, latent)
        with torch.no_grad():
            fast = net(p, z)
        assert torch.equal(fast, net(p, z).detach())


def test_fakes_drawn_in_blocks_of_models_train_the_same_bits(monkeypatch):
    """loop.fakes draws the no-gradient fakes block by block over the models (cache-sized
    blocks): blocks of 1 and 2 models and all at once give the same trained models."""
    from raudit.generators.pategan.ports.smartnoise import port

    tables, seeds = [table(seed=1)] * 4 + [table(seed=2)], [11, 12, 13, 14, 15]
    opts = dict(teachers=3, batch=16, max_iter=6)
    out = []
    for block in (None, 3 * 16 * 64, 2 * 3 * 16 * 64):  # all, 1 model, 2 models per block
        monkeypatch.setattr(port, "BLOCK_ELEMENTS", block)
        many = SmartNoise(**opts).fit_many(tables, epsilon=1e6, seeds=seeds)
        out.append([(m._batch.trained.generator.flat, m.summary()["iterations"]) for m in many])
    for other in out[1:]:
        for (a, it_a), (b, it_b) in zip(out[0], other):
            assert it_a == it_b and torch.equal(a, b)


def test_a_chunk_of_one_table_is_set_up_once(monkeypatch):
    """An audit chunk passes one table object M times: its checks, column plan and encoder
    fit run once and the models share the encoder (the fit reads no seed), and the models
    are the same bits as each trained from its own copy of the table (set up apart);
    bounds="dp" draws noise per model, so there every model keeps its own encoder."""
    df = table(n=200)
    plans = []
    real = sne.column_plan
    counted = lambda t, e: plans.append(id(t)) or real(t, e)  # noqa: E731
    monkeypatch.setattr(sne, "column_plan", counted)  # the encoder's fit
    monkeypatch.setattr(snp, "column_plan", counted)  # group_tables' key
    opts = dict(teachers=2, batch=16, max_iter=3)
    shared = SmartNoise(**opts).fit_many([df] * 3, epsilon=1e6, seeds=[4, 5, 6])
    assert len(plans) == 2  # group_tables' key and the one encoder fit, not 2 x 3
    assert len({id(m._batch.encoders[m._index]) for m in shared}) == 1
    apart = SmartNoise(**opts).fit_many([df.copy() for _ in range(3)], epsilon=1e6, seeds=[4, 5, 6])
    assert len({id(m._batch.encoders[m._index]) for m in apart}) == 3
    for a, b in zip(shared, apart):
        pd.testing.assert_frame_equal(a.sample(30, seed=1), b.sample(30, seed=1))
    dp = SmartNoise(bounds="dp", preprocessor_eps=2.0, **opts).fit_many([df] * 2, epsilon=3.0,
                                                                         seeds=[0, 1])
    assert dp[0]._batch.encoders[0] is not dp[1]._batch.encoders[1]
