"""`fixed -o sign_query=on`: the teachers' one-bit vote, its plan, its control, its errors."""

import hashlib

import dp_accounting
import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.audit.mechanisms import schedule_eps_true, schedule_of
from raudit.data.dataset import infer_columns
from raudit.errors import ConfigError
from raudit.events import EventLog, Votes
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.fixed.generator import plan
from raudit.generators.pategan.fixed.sign import answer, plan_sign, sign_sigma, teacher_votes

Fixed = generators.get("fixed")


def linked(n=200, seed=0, sign=1.0):
    """A table whose column b moves with the label (``sign``: the direction)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.normal(3, 1, n)})
    df["label"] = (rng.random(n) < 0.3).astype(int)
    df["b"] += sign * 2.0 * df["label"]
    return df


# Four teachers; t2 holds one class (abstains). Worked by hand in the comments.
ROWS = [(0.2, 0.5, 0), (0.8, 0.5, 1),                  # t0: mu1 - mu0 = (0.6, 0)
        (0.9, 0.1, 0), (0.1, 0.3, 1), (0.3, 0.5, 1),   # t1: (0.2, 0.4) - (0.9, 0.1) = (-0.7, 0.3)
        (0.5, 0.5, 1),                                 # t2: label 1 only
        (0.4, 0.2, 0), (0.4, 0.6, 1)]                  # t3: (0, 0.4)
PARTS = [[0, 1, 0], [2, 3, 4], [5, 0, 0], [6, 7, 0]]
SIZES = [2, 3, 1, 2]
# synthetic means: label 1 (0.8, 0.35), label 0 (0.2, 0.55): d_s = (0.6, -0.2)
SYNTH = [(0.9, 0.5, 1), (0.1, 0.5, 0), (0.7, 0.2, 1), (0.3, 0.6, 0)]


def test_teacher_votes_by_hand():
    # <d_t, d_s>: t0 +0.36 (as is), t1 -0.48 (flipped), t2 abstains, t3 -0.08 (flipped)
    x = torch.tensor([ROWS], dtype=torch.float32)
    votes = teacher_votes(x, torch.tensor([PARTS]), torch.tensor([SIZES]),
                          torch.tensor([SYNTH], dtype=torch.float32))
    assert votes.tolist() == [[1, 2]]
    # the synthetic labels flipped: every voting teacher turns round
    flipped = torch.tensor([[(a, b, 1 - y) for a, b, y in SYNTH]], dtype=torch.float32)
    again = teacher_votes(x, torch.tensor([PARTS]), torch.tensor([SIZES]), flipped)
    assert again.tolist() == [[2, 1]]


def test_answer_is_the_noisy_argmax_and_the_control_a_coin_of_its_own_stream():
    counts = np.array([[30, 15], [10, 35], [20, 20]])
    rng = CounterRNG([1, 2, 3], purpose="fixed-sign", dtype=torch.float64)
    flip, noise = answer(counts, 1e-9, rng, None)
    assert flip[:2].tolist() == [False, True] and abs(noise).max() < 1e-8
    flip, noise = answer(counts, 5.3, CounterRNG([1, 2, 3], purpose="fixed-sign",
                                                 dtype=torch.float64), None)
    assert flip.tolist() == ((counts + noise)[:, 1] > (counts + noise)[:, 0]).tolist()
    coin, _ = answer(counts, 5.3, CounterRNG([1, 2, 3], purpose="fixed-sign",
                                             dtype=torch.float64), "coin")
    u = CounterRNG([1, 2, 3], purpose="fixed-sign", dtype=torch.float64).uniform(2)[:, 0]
    assert coin.tolist() == (u.numpy() < 0.5).tolist()
    other, _ = answer(counts[::-1].copy(), 5.3, CounterRNG([1, 2, 3], purpose="fixed-sign",
                                                           dtype=torch.float64), "coin")
    assert other.tolist() == coin.tolist()  # the votes play no part


def test_plan_with_the_sign_answer_composes_to_eps_in_dp_accounting():
    eps, delta, q, cols = 10.0, 1e-5, 1000, 30
    z_b, sigma, s = plan_sign(eps, delta, q, cols, 0.2, 0.1)
    # one GNMax answer of sensitivity sqrt 2 at sigma_s costs eps 1 = 0.1 x 10 alone. By hand:
    # its exact curve (mu-GDP, mu = sqrt 2 / sigma) reaches eps 1 at sigma 5.3, and RDP
    # (alpha / sigma^2) converts more loosely, so the RDP plan needs more noise; the classic
    # conversion min_alpha alpha / s^2 + log(1 / delta) / (alpha - 1), looser still, is >= 1
    assert 5.3 < s < 6.0 and s == sign_sigma(eps, delta, 0.1)
    alpha = 1 + np.sqrt(np.log(1 / delta) * s ** 2)
    assert 1.0 <= alpha / s ** 2 + np.log(1 / delta) / (alpha - 1) < 1.3

    def eps_of(events):
        acct = dp_accounting.rdp.RdpAccountant()
        for event, count in events:
            acct.compose(event, count)
        return acct.get_epsilon(delta)
    assert eps_of([(dp_accounting.GaussianDpEvent(s / np.sqrt(2)), 1)]) == pytest.approx(1.0, rel=1e-3)
    total = eps_of([(dp_accounting.GaussianDpEvent(z_b), 1),
                    (dp_accounting.GaussianDpEvent(s / np.sqrt(2)), 1),
                    (dp_accounting.GaussianDpEvent(sigma / np.sqrt(2)), q)])
    assert total <= eps and total == pytest.approx(eps, rel=1e-3)
    # the answer is paid by the training votes: their noise rises over the plan without it
    z_b0, sigma0 = plan(eps, delta, q, cols, 0.2)
    assert z_b0 == z_b and sigma > sigma0


def test_a_run_charges_the_answer_once_and_reports_it():
    log = EventLog()
    gen = Fixed(teachers=5, iterations=3, batch=8, sign_query="on")
    cols = infer_columns(linked(), bounds="public")
    models = gen.fit_many([linked(seed=1), linked(n=150, seed=2)], epsilon=2.0, seeds=[1, 2],
                          columns=cols, observer=log)
    _, sigma, s = plan_sign(2.0, 1e-5, 3 * 2 * 8, 0, 0.2, 0.1)
    votes = log.of(Votes)
    assert len(votes) == 3 * 2 + 1 and votes[-1].noise_scale == s and votes[-1].n1.shape == (2, 1)
    for m, v in zip(models, votes[-1].labels[:, 0]):
        summ = m.summary()
        assert summ["sigma"] == pytest.approx(sigma) and summ["sign_sigma"] == s
        assert summ["eps_hat"] <= 2.0 and summ["eps_hat"] == pytest.approx(2.0, rel=1e-3)
        assert summ["sign_flip"] == bool(v) and sum(summ["sign_votes"]) <= 5
    # the dry-run schedule (audits' eps_true) holds the answer too, at the same mu
    true = schedule_eps_true(schedule_of("fixed", {"teachers": 5, "iterations": 3, "batch": 8,
                                                   "sign_query": "on"}, 2.0, 1e-5), 1e-5)
    assert true.eps <= 2.0 and true.eps > 0.9 * 2.0


def _sample_hash(models) -> str:
    h = hashlib.sha256()
    for m in models:
        h.update(np.round(m.sample(50, seed=3).to_numpy(dtype=float), 5).tobytes())
    return h.hexdigest()[:16]


def test_default_off_leaves_a_pinned_fit_unchanged():
    def fit(**o):
        gen = Fixed(teachers=3, iterations=4, batch=16, **o)
        return gen.fit_many([linked(seed=1), linked(n=150, seed=2)], epsilon=2.0, seeds=[1, 2],
                            columns=infer_columns(linked()))
    base = _sample_hash(fit())
    # taken at 10e2de7, before sign_query existed (same samples, rounded to 1e-5)
    assert base == "8d9abe600aaf304d"
    assert _sample_hash(fit(sign_query="off", sign_share=0.3)) == base


def test_control_replaces_the_vote_by_a_coin_and_flips_only_the_label():
    cols = infer_columns(linked(), bounds="public")
    runs = {}
    for sign, query in ((1.0, "off"), (1.0, "on"), (-1.0, "on")):
        gen = Fixed(teachers=5, iterations=3, batch=8, sign_query=query)
        runs[sign, query] = gen.fit_many([linked(seed=1, sign=sign), linked(n=150, seed=2, sign=sign)],
                                         epsilon=2.0, seeds=[1, 2], columns=cols,
                                         train_options={"control": "coin"})
    coins = CounterRNG([1, 2], purpose="fixed-sign", dtype=torch.float64).uniform(2)[:, 0] < 0.5
    for j, flip in enumerate(coins.tolist()):
        off, on = runs[1.0, "off"][j], runs[1.0, "on"][j]
        assert on.summary()["sign_flip"] == flip == runs[-1.0, "on"][j].summary()["sign_flip"]
        a, b = off.sample(40, seed=5), on.sample(40, seed=5)
        # coins do not read sigma: the same generator; only the label column may turn
        assert np.array_equal(a.iloc[:, :-1].to_numpy(), b.iloc[:, :-1].to_numpy())
        assert (b["label"] == (1 - a["label"] if flip else a["label"])).all()


@pytest.mark.parametrize("options,match", [
    ({"sign_share": 0.0}, "sign_share"), ({"sign_share": 0.8}, "sign_share"),
    ({"sign_share": "x"}, "sign_share"), ({"sign_query": "yes"}, "sign_query"),
    ({"sign_query": "on", "analysis": "data-dependent"}, "sign_query"),
    ({"sign_query": "on", "conditional": False}, "sign_query"),
])
def test_bad_sign_options_are_one_line_errors(options, match):
    with pytest.raises(ConfigError, match=match):
        Fixed(**options)


def test_a_label_that_is_not_binary_is_rejected_before_training():
    df = linked()
    df.loc[0, "label"] = 2
    with pytest.raises(ConfigError, match="sign_query=on needs a binary 0/1 label"):
        Fixed(teachers=3, iterations=1, sign_query="on").fit(df, epsilon=1.0, seed=0)
