"""`fixed`'s training options (lab/learning.md, "fixed that learns"): teacher_lr,
teacher_steps, lr and critic=joint change the networks' training, never the privacy plan."""

import numpy as np
import pytest
import torch

from raudit import generators
from raudit.data.dataset import infer_columns
from raudit.errors import ConfigError
from raudit.generators.pategan.fixed.generator import plan
from raudit.generators.pategan.fixed.nets import JointCritic
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP

from test_fixed import table  # fixed's tests' small mixed table (this folder is on sys.path)

Fixed = generators.get("fixed")


def test_bad_training_options_are_one_line_errors():
    for kwargs, word in (({"teacher_lr": 0}, "teacher_lr"), ({"critic": "bogus"}, "critic"),
                         ({"critic": "joint", "conditional": False}, "conditional"),
                         ({"critic": "joint", "arch": "smartnoise"}, "critic=joint")):
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


def test_the_student_learns_only_from_answered_queries():
    # Confident-GNMax: an unanswered query carries no label; per model the mean over the rest
    from raudit.generators.pategan.core.loop import student_loss
    logits = torch.tensor([[[0.3], [-1.0], [2.0], [0.5]]])
    target = torch.tensor([[[1.0], [0.0], [0.0], [0.0]]])
    per = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
    answered = torch.tensor([[True, True, False, True]])
    assert float(student_loss(logits, target, answered)) == pytest.approx(
        float((per[0, 0, 0] + per[0, 1, 0] + per[0, 3, 0]) / 3))


@pytest.mark.parametrize("analysis", ["independent", "data-dependent"])
def test_training_options_leave_the_privacy_plan_and_charge_unchanged(analysis):
    cols = infer_columns(table(), bounds="public")
    kw = dict(teachers=3, iterations=3, batch=16, student_steps=2, analysis=analysis)
    base = Fixed(**kw).fit_many([table(seed=3)], epsilon=1.0, seeds=[5], columns=cols)[0]
    tuned = Fixed(**kw, critic="joint", teacher_lr=1e-5, lr=1e-3,
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
