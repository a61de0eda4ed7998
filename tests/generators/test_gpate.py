"""G-PATE: DPGradAgg, the stopping rule, events, and the image configuration."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.accountants import create
from raudit.errors import ConfigError
from raudit.events import AccountantStep, EventLog, GradientVotes, TeacherBatch
from raudit.generators.gpate.dpgradagg import AggConfig, aggregate, vote_counts
from raudit.generators.gpate.nets import ImageNets
from raudit.generators.nn.rng import CounterRNG


def table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n), "c": rng.integers(0, 4, n)})
    df["label"] = (df.a + rng.normal(size=n) > 0).astype(int)
    return df


def test_vote_counts_bins_like_np_histogram():
    c = 1.0
    values = torch.tensor([-5.0, -1.0, -0.81, -0.8, 0.0, 0.19, 0.2, 0.99, 1.0, 7.0], dtype=torch.float64)
    got = vote_counts(values.view(1, -1, 1, 1), c, 10)[0, 0, 0].numpy()
    edges = np.hstack([np.arange(-c, c, 2 * c / 10), c])
    want, _ = np.histogram(np.clip(values.numpy(), -c, c), edges)
    np.testing.assert_array_equal(got, want)


def test_unanimous_teachers_without_noise_release_the_bin_midpoint():
    # 7 teachers agree on every coordinate; no projection, negligible noise
    g = torch.full((1, 7, 2, 3), 0.35, dtype=torch.float64)
    g[..., 1] = -2.0  # clipped to -c: first bin
    cfg = AggConfig(clip=1.0, bins=10, threshold=3.5, sigma1=1e-6, sigma2=1e-6, projection="none")
    out = aggregate(g, cfg, CounterRNG([0], dtype=torch.float64))
    np.testing.assert_allclose(out.grad[0, :, 0].numpy(), 0.3)  # bin [0.2, 0.4)
    np.testing.assert_allclose(out.grad[0, :, 1].numpy(), -0.9)
    assert out.answered.all() and int(out.counts.max()) == 7


def test_threshold_above_k_answers_nothing():
    g = torch.randn(2, 5, 4, 6, dtype=torch.float64)
    cfg = AggConfig(k_proj=3, clip=1.0, threshold=50.0, sigma1=1.0, sigma2=1.0)
    out = aggregate(g, cfg, CounterRNG([1, 2], dtype=torch.float64))
    assert not out.answered.any() and torch.all(out.grad == 0)
    assert torch.all(out.choice == -1)
    assert out.counts.shape == (2, 4, 3, 10) and torch.all(out.counts.sum(-1) == 5)


def test_projection_is_fresh_per_record_with_variance_one_over_k():
    from raudit.generators.gpate.dpgradagg import projection
    p = projection(CounterRNG([3], dtype=torch.float64), 200, 30, 5)
    assert p.shape == (1, 200, 30, 5)
    assert float(p.var()) == pytest.approx(1 / 5, rel=0.03)  # 30,000 draws, fixed seed
    assert not torch.allclose(p[0, 0], p[0, 1])


def test_stops_before_the_step_that_would_exceed_eps():
    log = EventLog()
    gen = generators.get("gpate")(teachers=8, sigma1=40.0, sigma2=20.0, batch=2, k_proj=1, max_iter=500)
    gen.fit(table(), epsilon=2.0, seed=0, observer=log)
    s = gen.summary()
    assert s["eps_hat"] <= 2.0 and s["stopped"] == "epsilon" and s["iterations"] >= 2
    votes = log.of(GradientVotes)
    steps = log.of(AccountantStep)
    assert s["iterations"] == sum(int(v.charged[0]) for v in votes) == len(votes) - 1
    # replay the accountant: the refused last step would have crossed eps
    acct = create("gnmax", models=1)
    from raudit.events import ConfidentGNMax
    for v in votes:
        ev = ConfidentGNMax(v.counts.reshape(1, -1, v.counts.shape[-1]), v.answered.reshape(1, -1),
                            v.threshold, v.sigma1, v.sigma2)
        if v.charged[0]:
            acct.compose(ev)
        else:
            assert acct.eps_if(ev, 1e-5)[0] > 2.0
    assert acct.eps(1e-5)[0] == pytest.approx(s["eps_hat"])
    assert steps[-1].eps_hat[0] == pytest.approx(s["eps_hat"])
    # the data-dependent bound may equal the independent one (then they agree to rounding)
    assert s["eps_data_independent"] >= s["eps_hat"] * (1 - 1e-12)
    assert len(log.of(TeacherBatch)) == 8 * len(votes)


def test_runs_to_max_iter_when_eps_allows_and_models_batch_independently():
    gen = generators.get("gpate")(teachers=4, sigma1=2.0, sigma2=1.0, max_iter=3)
    many = gen.fit_many([table(seed=1), table(seed=2)], epsilon=1e6, seeds=[5, 6])
    assert [m.summary()["iterations"] for m in many] == [3, 3]
    assert many[0].summary()["stopped"] == "max_iter"
    assert many[0].summary()["queries"] == 3 * 30 * 5


def test_bad_options_fail_fast():
    for bad in ({"config": "nope"}, {"bins": 1}, {"sigma1": -1.0}, {"accountant": "paper"},
                {"preset": "paper"}, {"beta1": 1.0}):
        with pytest.raises(ConfigError):
            generators.get("gpate")(**bad)
    with pytest.raises(ConfigError, match="784 pixel"):
        generators.get("gpate")(config="image").check(table(), epsilon=1.0)


def test_image_configuration_trains_a_tiny_mnist_shaped_table():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 256, size=(30, 784)), columns=[f"p{i}" for i in range(784)])
    df["is_zero"] = np.arange(30) % 2
    gen = generators.get("gpate")(config="image", teachers=2, batch=3, max_iter=2, sigma1=1.0,
                                  sigma2=1.0).fit(df, epsilon=1e6, seed=0)
    out = gen.sample(4, seed=1)
    assert out.shape == (4, 785) and out.to_numpy().min() >= 0 and out.to_numpy().max() <= 255
    assert gen.summary()["iterations"] == 2
    nets = ImageNets(785)
    p = nets.teacher.create(CounterRNG([0, 1]), copies=3)
    assert nets.teacher(p, torch.zeros(2, 5, 785), shared=3, logits=True).shape == (6, 5, 1)
    assert math.isfinite(float(gen.summary()["eps_hat"]))


def test_a_run_that_cannot_step_says_so_before_training_and_names_eps_and_size():
    from raudit.errors import NoStep

    gen = generators.get("gpate")()  # tabular: 120 rows -> 8 teachers, sigma1 = 6
    hp = gen.resolve(120, 4)
    cost = gen.step_cost(hp, 4, 1e-5)
    assert cost.floor < cost.guaranteed
    with pytest.raises(NoStep, match="cannot take a single step") as err:
        gen.fit(table(), epsilon=cost.floor * 0.99, seed=0)
    msg = str(err.value)
    assert "\n" not in msg and f"eps >= {cost.floor:.4g}" in msg and "rows (" in msg
    # the table size it names is enough: at that many teachers the floor is under eps
    k = int(msg.split(" teachers of ")[0].rsplit("(", 1)[1].replace(",", ""))
    assert gen.step_cost(hp, 4, 1e-5, k).floor <= cost.floor * 0.99
    assert gen.step_cost(hp, 4, 1e-5, k - 1).floor > cost.floor * 0.99
    # at the guaranteed eps the first step is always taken
    ok = generators.get("gpate")(max_iter=1).fit(table(), epsilon=cost.guaranteed, seed=0)
    assert ok.summary()["iterations"] == 1 and "no_step" not in ok.summary()


def test_step_floor_is_a_lower_bound_on_any_first_step():
    # every histogram of k votes over the bins with the same max costs at least the floor
    from raudit.accountants.gnmax import DEFAULT_ORDERS, eps_from_rdp, rdp_confident_gnmax
    from raudit.generators.gpate.budget import step_cost

    k, bins, q = 12, 4, 5
    cost = step_cost(k=k, queries=q, bins=bins, threshold=6.0, sigma1=9.0, sigma2=3.0, delta=1e-5)
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.multinomial(k, rng.dirichlet(np.full(bins, 0.3)), size=(1, q))
        answered = rng.random((1, q)) < 0.5
        rdp = rdp_confident_gnmax(counts, answered, 6.0, 9.0, 3.0, DEFAULT_ORDERS)
        eps = float(eps_from_rdp(rdp[0], DEFAULT_ORDERS, 1e-5))
        assert cost.floor <= eps * (1 + 1e-12) and eps <= cost.guaranteed * (1 + 1e-12)


def test_a_data_dependent_zero_step_fit_is_named_in_its_summary():
    gen = generators.get("gpate")(max_iter=3)
    hp = gen.resolve(120, 4)
    cost = gen.step_cost(hp, 4, 1e-5)
    # between the floor (12.0) and the certain eps (90.7) a step depends on the votes;
    # these (seed 0) make it too dear, and the summary says so
    s = gen.fit(table(), epsilon=cost.floor * 1.5, seed=0).summary()
    assert s["iterations"] == 0
    assert s["no_step"].startswith("took no step") and f"{cost.guaranteed:.4g}" in s["no_step"]


def test_teacher_hidden_is_a_tabular_option_whose_default_keeps_the_one_layer_teacher():
    from raudit.generators.gpate.nets import nets_for

    assert nets_for("tabular", 4).teacher.widths == [4, 1]  # upstream's logistic regression
    assert nets_for("tabular", 4, 0.5, teacher_hidden=8).teacher.widths == [4, 8, 1]
    assert generators.get("gpate")().resolve(120, 4).teacher_hidden == 0
    for bad in ({"teacher_hidden": -1}, {"teacher_hidden": 1.5},
                {"config": "image", "teacher_hidden": 4}):
        with pytest.raises(ConfigError):
            generators.get("gpate")(**bad)
    gen = generators.get("gpate")(conditional=True, teacher_hidden=8, max_iter=3)
    assert gen.fit(table(), epsilon=1e6, seed=0).summary()["iterations"] == 3


def test_a_linear_teacher_points_both_labels_the_same_way_a_hidden_layer_need_not():
    """Why the option exists: d/dx of a logistic regression on (x, y) is w (1 - D), the same
    direction whatever the label, so it cannot teach which features go with which label."""
    from raudit.generators.gpate.nets import nets_for

    def grads(hidden):
        net = nets_for("tabular", 3, teacher_hidden=hidden).teacher
        p = net.create(CounterRNG([5]))
        x = torch.tensor([[[0.2, 0.7, 0.0], [0.2, 0.7, 1.0]]], requires_grad=True)  # label last
        (g,) = torch.autograd.grad(net(p, x, logits=True).sum(), x)
        return g[0, :, :2]

    lin = grads(0)
    assert torch.allclose(lin[0], lin[1])
    hid = grads(16)
    assert not torch.allclose(hid[0], hid[1])


def test_label_heads_teacher_reads_the_label_only_to_pick_its_head():
    """teacher_label=heads: the logit of (x, y) is head y's logit on x, so the gradient a
    record receives depends on its label even with no hidden layer (the linear teacher's
    does not, test above); the shared-batch path equals copying the batch to each teacher."""
    from raudit.generators.gpate.nets import LabelHeadTeacher, nets_for

    net = nets_for("tabular", 3, 0.5, teacher_label="heads").teacher
    assert isinstance(net, LabelHeadTeacher) and net.widths == [2, 2]
    p = net.create(CounterRNG([5]))
    x = torch.tensor([[[0.2, 0.7, 0.0], [0.2, 0.7, 1.0]]], requires_grad=True)
    out = net(p, x, logits=True)
    w, b = p.views()["w0"][0], p.views()["b0"][0]
    heads = x[0, :, :2].detach() @ w + b  # (2 records, 2 heads)
    assert torch.allclose(out[0, :, 0], torch.stack([heads[0, 0], heads[1, 1]]))
    (g,) = torch.autograd.grad(out.sum(), x)
    assert torch.allclose(g[0, 0, :2], w[:, 0]) and torch.allclose(g[0, 1, :2], w[:, 1])
    assert float(g[0, :, 2].abs().sum()) == 0.0  # the label picks, it is not moved
    p3 = net.create(CounterRNG([0, 1]), copies=3)
    xs = torch.rand(2, 4, 3)  # 2 models (seeds) x 3 teachers each
    xs[..., -1] = torch.tensor([0.0, 1.0, 1.0, 0.0])
    assert torch.allclose(net(p3, xs, shared=3, logits=True),
                          net(p3, xs.repeat_interleave(3, dim=0), logits=True), atol=1e-6)


def test_teacher_heads_lr_and_decay_are_options_whose_defaults_keep_the_reference():
    hp = generators.get("gpate")().resolve(120, 4)
    assert (hp.teacher_label, hp.teacher_lr, hp.teacher_decay) == ("input", None, 0.0)
    for bad in ({"teacher_label": "heads"}, {"teacher_label": "nope", "conditional": True},
                {"config": "image", "conditional": True, "teacher_label": "heads"},
                {"teacher_lr": 0.0}, {"teacher_decay": -0.1}):
        with pytest.raises(ConfigError):
            generators.get("gpate")(**bad)
    # clip wide enough that the votes see the gradients' size, not only their signs
    base = dict(conditional=True, teachers=4, sigma1=2.0, sigma2=1.0, max_iter=10, clip=0.05)
    fit = lambda **o: generators.get("gpate")(**base, **o).fit(table(), epsilon=1e6, seed=0)
    ref = fit()
    same = fit(teacher_lr=1e-3, teacher_decay=0.0)  # the defaults spelt out
    pd.testing.assert_frame_equal(same.sample(5, seed=1), ref.sample(5, seed=1))
    assert same.summary()["eps_hat"] == ref.summary()["eps_hat"]
    for o in ({"teacher_label": "heads"}, {"teacher_lr": 1e-2}, {"teacher_decay": 10.0}):
        g = fit(**o)
        assert g.summary()["iterations"] == 10
        assert not g.sample(5, seed=1).equals(ref.sample(5, seed=1))  # the option reaches training


@pytest.mark.parametrize("k_proj", [10, 100])
def test_saturated_votes_follow_the_mean_gradient_at_cosine_0_8_sqrt_q_over_d(k_proj):
    # What the MNIST generator receives (measured: lab/learning.md): teachers agree (cosine
    # 0.9-0.98) and their projected gradients are 100-500x the clip c, so every vote falls in
    # an edge bin and each answer is the sign of one random projection of the mean gradient.
    # Back-projected, that follows the mean gradient at cosine sqrt(2/pi) sqrt(q/d) per record
    # (0.090 at q = 10, d = 784), and is unbiased in direction: averaged over records it
    # converges to it.
    gen = torch.Generator().manual_seed(0)
    b, d, k = 300, 784, 5
    g = torch.randn(1, 1, 1, d, generator=gen, dtype=torch.float64).expand(1, k, b, d) * 1e-2
    cfg = AggConfig(k_proj=k_proj, clip=1e-4, bins=10, threshold=2.5, sigma1=1e-6, sigma2=1e-6)
    out = aggregate(g.contiguous(), cfg, CounterRNG([4], dtype=torch.float64))
    assert out.answered.all()
    cos = torch.nn.functional.cosine_similarity(out.grad[0], g[0, 0], dim=-1)
    want = math.sqrt(2 / math.pi) * math.sqrt(k_proj / d)
    assert float(cos.mean()) == pytest.approx(want, rel=0.1)
    mean = out.grad[0].mean(0)
    assert float(torch.nn.functional.cosine_similarity(mean, g[0, 0, 0], dim=0)) > 0.75
