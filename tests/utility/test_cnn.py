"""The G-PATE paper's CNN evaluation (raudit.utility.cnn) on tiny inputs."""

import numpy as np
import pytest

from raudit.utility.cnn import balanced_accuracy, cnn_accuracy


def stripes(n, seed):
    """Class 1: a bright top half; class 0: a bright bottom half; plus noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    img = rng.uniform(0, 60, size=(n, 28, 28))
    img[y == 1, :14] += 180
    img[y == 0, 14:] += 180
    return img.reshape(n, 784), y


@pytest.mark.slow
def test_the_cnn_learns_a_separable_task_and_is_deterministic():
    xtr, ytr = stripes(128, 0)
    xte, yte = stripes(200, 1)
    a = cnn_accuracy(xtr, ytr, xte, yte, epochs=2, batch=16, seed=3)
    assert a.accuracy >= 0.95 and a.balanced_accuracy >= 0.95 and not a.single_class
    assert cnn_accuracy(xtr, ytr, xte, yte, epochs=2, batch=16, seed=3) == a


def test_labels_that_carry_nothing_score_at_chance():
    xtr, _ = stripes(128, 0)
    xte, yte = stripes(400, 1)
    coin = np.random.default_rng(7).integers(0, 2, 128)  # labels independent of the images
    a = cnn_accuracy(xtr, coin, xte, yte, epochs=2, batch=16, seed=3)
    assert 0.35 <= a.balanced_accuracy <= 0.65  # 400 test rows, fixed seeds


def test_one_synthetic_class_predicts_it_everywhere():
    xtr, _ = stripes(20, 0)
    xte, yte = stripes(50, 1)
    a = cnn_accuracy(xtr, np.zeros(20), xte, yte)
    assert a.single_class and a.balanced_accuracy == 0.5
    assert a.accuracy == pytest.approx(float(np.mean(yte == 0)))


def test_bad_inputs_are_refused():
    x, y = stripes(10, 0)
    with pytest.raises(ValueError, match="784"):
        cnn_accuracy(x[:, :100], y, x, y)
    with pytest.raises(ValueError, match="labels"):
        cnn_accuracy(x, y + 5, x, y)
    with pytest.raises(ValueError, match="as many labels"):
        cnn_accuracy(x, y[:5], x, y)
    assert balanced_accuracy(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])) == 0.75


def _recorded(monkeypatch):
    """Every training epoch and every scoring, in order: ("train",) or ("score", rows)."""
    from raudit.utility import cnn

    seen: list[tuple] = []
    train, score = cnn._train_epoch, cnn._score

    def train_spy(*a, **kw):
        seen.append(("train",))
        return train(*a, **kw)

    def score_spy(p, forward, x, y):
        out = score(p, forward, x, y)
        seen.append(("score", len(y), out[0]))
        return out

    monkeypatch.setattr(cnn, "_train_epoch", train_spy)
    monkeypatch.setattr(cnn, "_score", score_spy)
    return seen


def test_the_strict_protocol_reads_the_test_set_once_after_training(monkeypatch):
    from raudit.utility.cnn import evaluate

    seen = _recorded(monkeypatch)
    xtr, ytr = stripes(60, 0)
    xte, yte = stripes(37, 1)  # 37 test rows: no other scored set has that many
    r = evaluate(xtr, ytr, xte, yte, protocol="strict", epochs=3, seed=3)
    assert [s[0] for s in seen] == ["train"] * 3 + ["score", "score"]
    val, test = seen[3], seen[4]
    assert val[1] == r.validation_rows == 6 and r.train_rows == 54  # 10 % held out, scored
    assert test[1] == 37 and r.accuracy == test[2]  # the one test read: the final score
    assert (r.protocol, r.optimistic, r.epoch, r.test_history) == ("strict", False, 3, ())
    assert r.label == "strict"
    inverted = evaluate(xtr, ytr, xte, 1 - yte, protocol="strict", epochs=3, seed=3)
    assert inverted.epoch == 3 and inverted.accuracy == pytest.approx(1 - r.accuracy, abs=1e-12)


def test_the_optimistic_protocol_reports_the_best_test_epoch(monkeypatch):
    from dataclasses import replace

    from raudit.utility.cnn import PROTOCOLS, evaluate

    seen = _recorded(monkeypatch)
    xtr, ytr = stripes(60, 0)
    xte, yte = stripes(37, 1)
    # the paper's protocol with steps large enough that 60 rows move the model (at lr 1e-3
    # and batch 512 four epochs are four tiny steps: one accuracy throughout)
    fast = replace(PROTOCOLS["paper-optimistic"], lr=0.01, batch=32)
    r = evaluate(xtr, ytr, xte, yte, protocol=fast, epochs=4, seed=3)
    # the test set is scored after every epoch (the paper's validation_data) ...
    assert [s[0] for s in seen] == ["train", "score"] * 4
    history = [s[2] for s in seen if s[0] == "score"]
    assert all(s[1] == 37 for s in seen if s[0] == "score")
    assert r.test_history == tuple(history) and history[0] < max(history)
    # ... and the reported model is the epoch best on it
    assert r.accuracy == max(history) and r.epoch == history.index(max(history)) + 1 == 2
    assert r.optimistic and r.validation_rows == 0 and r.train_rows == 60
    assert "optimistic" in r.label and "4 epochs" in r.label
    # the same training scored on the inverted test labels picks another epoch: the choice
    # is made on the test set (strict keeps its epoch: see the test above)
    inverted = evaluate(xtr, ytr, xte, 1 - yte, protocol=fast, epochs=4, seed=3)
    assert inverted.test_history == pytest.approx([1 - a for a in history], abs=1e-12)
    assert inverted.epoch == 1


def test_the_protocols_are_named_choices():
    from raudit.utility.cnn import PROTOCOLS, protocol_named

    paper = protocol_named("paper-optimistic")
    assert (paper.optimizer, paper.lr, paper.batch, paper.epochs, paper.samples, paper.select) == (
        "sgd", 1e-3, 512, 600, 100_000, "best-test")
    strict = PROTOCOLS["strict"]
    assert (strict.select, strict.validation, strict.optimistic) == ("final", 0.1, False)
    with pytest.raises(ValueError, match="unknown CNN protocol 'paper'; known: strict, paper-optimistic"):
        protocol_named("paper")
