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
