"""Batched logistic regression against scikit-learn's LogisticRegression (L2, C = 1, intercept)."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from raudit.generators.pategan.ports.logreg import fit_logreg, predict_logreg


def problems(g=4, n=100, p=12, shift=0.7, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(g, n, p))
    x[:, : n // 2] += shift
    y = np.zeros((g, n))
    y[:, : n // 2] = 1
    return x, y


def sklearn_fit(x, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LogisticRegression(**kw).fit(x, y)
    return m.coef_[0], m.intercept_[0], m.predict(x)


def test_matches_sklearn_exact_optimum():
    """Both solve the same strictly convex problem: at tight tolerance they agree to 1e-5."""
    x, y = problems()
    w, b = fit_logreg(torch.tensor(x), torch.tensor(y))
    for g in range(len(x)):
        coef, icpt, _ = sklearn_fit(x[g], y[g], tol=1e-12, max_iter=10_000)
        np.testing.assert_allclose(w[g].numpy(), coef, atol=1e-5)
        assert abs(b[g].item() - icpt) < 1e-5


@pytest.mark.parametrize("kw", [{}, {"solver": "sag", "max_iter": 10_000}],
                            ids=["updated-lbfgs-default", "synthcity-sag"])
def test_matches_the_upstream_solvers_within_their_tolerance(kw):
    """updated: LogisticRegression(); synthcity: solver='sag', max_iter=10000 (both tol 1e-4).
    Stated tolerance: coefficients within 0.05, predictions agree on >= 99 % of rows."""
    x, y = problems(seed=1, shift=1.0)
    w, b = fit_logreg(torch.tensor(x), torch.tensor(y))
    pred = predict_logreg(w, b, torch.tensor(x)).numpy()
    for g in range(len(x)):
        coef, icpt, sk_pred = sklearn_fit(x[g], y[g], **kw)
        assert np.abs(w[g].numpy() - coef).max() < 0.05
        assert abs(b[g].item() - icpt) < 0.05
        assert (pred[g] == sk_pred).mean() >= 0.99


def test_separable_data_converges_to_the_regularised_solution():
    x, y = problems(g=2, shift=4.0, seed=2)
    w, b = fit_logreg(torch.tensor(x), torch.tensor(y))
    for g in range(2):
        coef, icpt, _ = sklearn_fit(x[g], y[g], tol=1e-12, max_iter=10_000)
        np.testing.assert_allclose(w[g].numpy(), coef, atol=1e-4)


def test_masked_rows_are_ignored():
    """Padding rows (mask False) change nothing: equal to fitting the valid rows alone."""
    x, y = problems(g=2, n=80, seed=3)
    mask = np.ones((2, 80), dtype=bool)
    mask[1, 60:] = False
    x[1, 60:] = 100.0  # garbage in the padding
    w, b = fit_logreg(torch.tensor(x), torch.tensor(y), torch.tensor(mask))
    w1, b1 = fit_logreg(torch.tensor(x[1:, :60]), torch.tensor(y[1:, :60]))
    np.testing.assert_allclose(w[1].numpy(), w1[0].numpy(), atol=1e-9)
    assert abs(b[1].item() - b1[0].item()) < 1e-9


def test_a_fit_does_not_depend_on_the_others_in_its_batch():
    """Each fit stops on its own: alone, or first / middle / last of 3 and 4 fits of other
    data (one separable, which needs more Newton steps), it gets the same bits. Before,
    a joint stop let the slowest fit set everyone's iterations (refit's chunk size moved
    its teachers' last bits)."""
    x, y = problems(g=4, n=37, p=5, seed=3)  # n * G not a multiple of 32: sigmoid's tail
    x[1, : 37 // 2] += 8.0  # separable: many more steps than the others
    t = torch.tensor(x), torch.tensor(y)
    alone = [fit_logreg(t[0][i : i + 1], t[1][i : i + 1]) for i in range(4)]
    for idx in ([0, 1, 2], [2, 0, 1], [1, 2, 0], [3, 1, 2, 0]):
        w, b = fit_logreg(t[0][idx], t[1][idx])
        for j, i in enumerate(idx):
            assert torch.equal(w[j], alone[i][0][0]) and torch.equal(b[j], alone[i][1][0]), (idx, i)


@pytest.mark.parametrize("n,p", [(40, 120), (100, 12)], ids=["wider-than-long", "long"])
def test_the_rows_solve_and_the_columns_solve_reach_the_same_fit(n, p):
    """Both solve one Newton system per step, in the rows' space (n x n) or the columns'
    ((p+1) x (p+1)): the same optimum to 1e-8, with padding, on separable wide data too."""
    x, y = problems(g=3, n=n, p=p, shift=0.5, seed=4)
    mask = np.ones((3, n), dtype=bool)
    mask[2, n - 7:] = False
    x[2, n - 7:] = 50.0  # garbage in the padding
    t = torch.tensor(x), torch.tensor(y), torch.tensor(mask)
    w_r, b_r = fit_logreg(*t, by_rows=True)
    w_c, b_c = fit_logreg(*t, by_rows=False)
    np.testing.assert_allclose(w_r.numpy(), w_c.numpy(), atol=1e-8)
    np.testing.assert_allclose(b_r.numpy(), b_c.numpy(), atol=1e-8)
    auto = fit_logreg(*t)  # the cheaper side, bit for bit
    assert torch.equal(auto[0], w_r if p + 1 > n else w_c)


def test_a_wider_than_long_fit_matches_sklearn():
    """synthcity's teachers on isolet: ~1,250 rows of 3,708 encoded columns (p > n)."""
    x, y = problems(g=2, n=60, p=200, shift=0.3, seed=5)
    w, b = fit_logreg(torch.tensor(x), torch.tensor(y))
    for g in range(2):
        coef, icpt, _ = sklearn_fit(x[g], y[g], tol=1e-12, max_iter=10_000)
        np.testing.assert_allclose(w[g].numpy(), coef, atol=1e-5)
        assert abs(b[g].item() - icpt) < 1e-5
