"""`fixed`'s training options (lab/learning.md, "fixed that learns"): teacher_lr,
student_balance and critic=joint change the networks' training, never the privacy plan."""

import numpy as np
import pytest
import torch

from raudit import generators
from raudit.data.dataset import infer_columns
from raudit.errors import ConfigError
from raudit.generators.pategan.fixed.generator import plan
from raudit.generators.pategan.fixed.nets import JointCritic
from raudit.generators.pategan.core.loop import student_loss
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP

from test_fixed import table  # fixed's tests' small mixed table (this folder is on sys.path)

Fixed = generators.get("fixed")


def test_bad_training_options_are_one_line_errors():
    for kwargs, word in (({"teacher_lr": 0}, "teacher_lr"), ({"student_balance": "yes"}, "student_balance"),
                         ({"critic": "bogus"}, "critic"),
                         ({"critic": "joint", "conditional": False}, "conditional")):
        with pytest.raises(ConfigError, match=word) as err:
            Fixed(**kwargs)
        assert "\n" not in str(err.value)


def test_joint_critic_is_a_per_label_first_layer():
    rng = CounterRNG([3], purpose="t", dtype=torch.float64)
    plain = MLP([3, 2, 1], ["relu", "sigmoid"])
    joint = JointCritic(plain.widths, plain.activations)
    assert joint.widths == [5, 2, 1]
    p = joint.create(rng)
    w0 = p.views()["w0"][0]
    x = torch.tensor([[[0.2, 0.7, 1.0], [0.2, 0.7, 0.0]]], dtype=w0.dtype)
    with torch.no_grad():
        out = joint(p, x, logits=True)
    # by hand: label 1 uses rows 0-1 of w0 for the features, label 0 rows 2-3; row 4 reads y
    w0, b0 = w0.detach().double(), p.views()["b0"][0].detach().double()
    w1, b1 = p.views()["w1"][0].detach().double(), p.views()["b1"][0].detach().double()
    for i, z in enumerate([torch.tensor([0.2, 0.7, 0, 0, 1.0]), torch.tensor([0, 0, 0.2, 0.7, 0.0])]):
        h = torch.relu(z.double() @ w0 + b0)  # float32 network: agreement to float32 precision
        assert float(out[0, i, 0]) == pytest.approx(float(h @ w1[:, 0] + b1[0]), abs=1e-6)


def test_student_balance_weighs_each_released_class_half():
    logits = torch.tensor([[[0.3], [-1.0], [2.0], [0.5]]])
    target = torch.tensor([[[1.0], [0.0], [0.0], [0.0]]])
    per = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
    want = 0.5 * per[0, 0, 0] + 0.5 * per[0, 1:, 0].mean()
    assert float(student_loss(logits, target, None, True)) == pytest.approx(float(want))
    answered = torch.tensor([[True, True, False, True]])  # unanswered queries carry no label
    want = 0.5 * per[0, 0, 0] + 0.5 * (per[0, 1, 0] + per[0, 3, 0]) / 2
    assert float(student_loss(logits, target, answered, True)) == pytest.approx(float(want))
    # without balance: the mean over the answered queries, as before the option
    assert float(student_loss(logits, target, answered, False)) == pytest.approx(
        float((per[0, 0, 0] + per[0, 1, 0] + per[0, 3, 0]) / 3))


@pytest.mark.parametrize("analysis", ["independent", "data-dependent"])
def test_training_options_leave_the_privacy_plan_and_charge_unchanged(analysis):
    cols = infer_columns(table(), bounds="public")
    kw = dict(teachers=3, iterations=3, batch=16, student_steps=2, analysis=analysis)
    base = Fixed(**kw).fit_many([table(seed=3)], epsilon=1.0, seeds=[5], columns=cols)[0]
    tuned = Fixed(**kw, critic="joint", teacher_lr=1e-5, lr=1e-3, student_balance=True,
                  teacher_steps=1).fit_many([table(seed=3)], epsilon=1.0, seeds=[5], columns=cols)[0]
    a, b = base.summary(), tuned.summary()
    assert a["sigma"] == b["sigma"]
    if analysis == "independent":
        _, sigma = plan(1.0, 1e-5, 3 * 2 * 16, 0, 0.2)
        assert b["sigma"] == pytest.approx(sigma)
        assert a["eps_hat"] == b["eps_hat"]  # data-independent: a function of the queries only
    assert b["eps_hat"] <= 1.0 or analysis == "data-dependent"
    s = tuned.sample(200, seed=0)
    assert set(np.unique(s["label"])) == {0, 1} and np.isfinite(s.to_numpy(float)).all()
    assert not np.allclose(base.sample(50, seed=0).to_numpy(float), s.iloc[:50].to_numpy(float))


def test_soft_target_is_the_noisy_vote_share_by_hand():
    from raudit.generators.pategan.core.aggregation import soft_target
    n1 = torch.tensor([[7, 2, 10]])
    noise = torch.tensor([[[0.5, -1.0], [0.0, 3.0], [0.0, 5.0]]], dtype=torch.float64)  # (Y0, Y1)
    # margin (n1 + Y1) - (k - n1 + Y0): 6 - 3.5 = 2.5; 5 - 8 = -3; 15 - 0 = 15 (clipped)
    assert soft_target(n1, 10, noise)[0].tolist() == pytest.approx([0.625, 0.35, 1.0])
    # the argmax GNMax releases is the soft target's side of 1/2
    from raudit.generators.pategan.core.aggregation import gaussian_argmax
    rng = CounterRNG([4], purpose="t", dtype=torch.float64)
    n1 = torch.tensor([[0, 3, 5, 6, 9, 10]])
    labels, noise = gaussian_argmax(n1, 10, rng, 2.0)
    assert ((soft_target(n1, 10, noise) > 0.5) == labels).all()


def test_soft_labels_change_the_student_not_the_plan_and_the_control_keeps_its_coins():
    cols = infer_columns(table(), bounds="public")
    kw = dict(teachers=3, iterations=5, batch=16, student_steps=2, lr=1e-2)

    def fit(labels, control=None):
        return Fixed(**kw, labels=labels).fit_many(
            [table(seed=3)], epsilon=1e4, seeds=[5], columns=cols,
            train_options={"control": control} if control else None)[0]
    hard, soft = fit("hard"), fit("soft")
    assert hard.summary()["sigma"] == soft.summary()["sigma"]
    assert hard.summary()["eps_hat"] == soft.summary()["eps_hat"]
    # the generators part after the soft student's first step moves them differently
    assert not np.array_equal(hard.sample(50, seed=0).to_numpy(float),
                              soft.sample(50, seed=0).to_numpy(float))
    # the coin control replaces every answer by a fair coin whatever the label mode: same fits
    np.testing.assert_array_equal(fit("hard", "coin").sample(50, seed=0).to_numpy(float),
                                  fit("soft", "coin").sample(50, seed=0).to_numpy(float))


def test_bad_label_options_are_one_line_errors():
    for kwargs, word in (({"labels": "fuzzy"}, "labels"),
                         ({"labels": "soft", "analysis": "data-dependent"}, "labels=soft")):
        with pytest.raises(ConfigError, match=word) as err:
            Fixed(**kwargs)
        assert "\n" not in str(err.value)
