"""Batched L2 logistic regression: G independent fits in one Newton solve (float64).

`updated` and `synthcity` refit k scikit-learn ``LogisticRegression`` teachers from
scratch every iteration, for every model: thousands of tiny fits per audit. Here all
G = M*k fits run at once as batched Newton steps on scikit-learn's default objective

    minimise  C * sum_i m_i * log(1 + exp(-s_i (x_i . w + b)))  +  ||w||^2 / 2

(``penalty="l2"``, ``C=1``, ``fit_intercept=True``, the intercept NOT penalised, as
in the lbfgs, newton-cg and sag solvers; s_i = +1 for label 1, -1 for label 0; m_i
masks padding rows). The objective is strictly convex, so every solver that converges
reaches the same (w, b): Newton gets there to machine precision in a handful of
steps, where lbfgs (``updated``: default max_iter=100, tol=1e-4) and sag
(``synthcity``: max_iter=10000, tol=1e-4) stop within their tolerance of it. The
tests compare against scikit-learn at tight and at default tolerances.

Each Newton step solves the (p+1)x(p+1) system by Cholesky with a backtracking line
search (Armijo), so separable data (large weights) converges too; it stops when every
gradient is below ``tol`` or every Newton decrement is at rounding level, each fit on its own.
"""

from __future__ import annotations

import torch
from raudit.generators.nn.whole import sigmoid, softplus


def _objective(xb: torch.Tensor, s: torch.Tensor, m: torch.Tensor, theta: torch.Tensor,
               c: float) -> torch.Tensor:
    z = torch.bmm(xb, theta.unsqueeze(-1)).squeeze(-1)
    loss = (m * softplus(-s * z)).sum(1)
    return c * loss + 0.5 * (theta[:, :-1] ** 2).sum(1)


def fit_logreg(x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None, *,
               c: float = 1.0, max_iter: int = 50, tol: float = 1e-10,
               by_rows: bool | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Fit G logistic regressions: x (G, n, p), y (G, n) in {0, 1}, mask (G, n) valid rows.

    Returns (w (G, p), b (G,)) in float64. ``tol`` bounds the largest gradient entry
    relative to the number of valid rows. ``by_rows``: solve each Newton step in the rows'
    space (:func:`_step_by_rows`); None: where p + 1 > n, the cheaper side.
    """
    x = x.to(torch.float64)
    g, n, p = x.shape
    m = torch.ones(g, n, dtype=x.dtype, device=x.device) if mask is None else mask.to(x.dtype)
    s = 2.0 * y.to(x.dtype) - 1.0
    xb = torch.cat([x, torch.ones(g, n, 1, dtype=x.dtype, device=x.device)], dim=2)
    theta = torch.zeros(g, p + 1, dtype=x.dtype, device=x.device)
    reg = torch.ones(p + 1, dtype=x.dtype, device=x.device)
    reg[-1] = 0.0  # the intercept is not penalised
    scale = m.sum(1).clamp(min=1.0)
    f = _objective(xb, s, m, theta, c)
    # Each fit stops on its own tests and is frozen from then on, as scikit-learn fits
    # each teacher alone: a joint stop (all fits below tol) made a fit's iterations, so
    # its bits, depend on the other fits of its chunk.
    live = torch.ones(g, dtype=torch.bool, device=x.device)
    # Wider than long (p + 1 > n: synthcity's encoding of isolet is 3,708 columns for its
    # teachers' ~1,250 rows) the Newton system is solved in the rows' space, X X^T once
    # per fit: the (p+1)^2 Hessian took 20 CPU-s per model and iteration there. The same
    # system either way, so the same optimum; narrower tables keep the column solve bit
    # for bit.
    gram = torch.bmm(x, x.transpose(1, 2)) if (by_rows if by_rows is not None
                                               else p + 1 > n) else None
    for _ in range(max_iter):
        z = torch.bmm(xb, theta.unsqueeze(-1)).squeeze(-1)
        sig = sigmoid(z)
        grad = c * torch.bmm(xb.transpose(1, 2), (m * (sig - (s + 1) / 2)).unsqueeze(-1)).squeeze(-1)
        grad = grad + reg * theta
        live = live & ~(grad.abs().amax(1) / scale < tol)
        if not bool(live.any()):
            break
        curv = c * m * sig * (1 - sig)  # the Hessian's row weights D
        step = (_step_by_rows(x, gram, curv, grad) if gram is not None else
                _step_by_columns(xb, curv, grad, reg))
        t = torch.ones(g, dtype=x.dtype, device=x.device)
        slope = (grad * step).sum(1)  # the squared Newton decrement
        live = live & ~(slope / f.abs().clamp(min=1.0) < 1e-20)  # at its optimum to rounding
        if not bool(live.any()):
            break
        done = ~live
        new = theta
        for _ in range(40):  # Armijo backtracking, per fit
            cand = theta - t[:, None] * step
            f_c = _objective(xb, s, m, cand, c)
            # Armijo, with a rounding slack so a converged fit is not halved 40 times
            ok = (f_c <= f - 1e-4 * t * slope + 1e-13 * f.abs()) | done
            new = torch.where((ok & ~done)[:, None], cand, new)
            f = torch.where(ok & ~done, f_c, f)
            done = ok
            if bool(done.all()):
                break
            t = torch.where(done, t, t / 2)
        theta = new
    return theta[:, :-1], theta[:, -1]


def _step_by_columns(xb: torch.Tensor, curv: torch.Tensor, grad: torch.Tensor,
                     reg: torch.Tensor) -> torch.Tensor:
    """The Newton step H^-1 grad, H = Xb^T D Xb + diag(reg + 1e-12) ((p+1)^2 per fit)."""
    h = torch.bmm(xb.transpose(1, 2), xb * curv.unsqueeze(-1))
    h = h + torch.diag_embed(reg + 1e-12).expand(xb.shape[0], -1, -1)
    chol, info = torch.linalg.cholesky_ex(h)
    step = torch.cholesky_solve(grad.unsqueeze(-1), chol).squeeze(-1)
    bad = info != 0  # numerically singular: fall back to a gradient step
    if bool(bad.any()):
        step = torch.where(bad[:, None], grad / (h.diagonal(dim1=1, dim2=2) + 1.0), step)
    return step


def _step_by_rows(x: torch.Tensor, gram: torch.Tensor, curv: torch.Tensor,
                  grad: torch.Tensor) -> torch.Tensor:
    """The same step as :func:`_step_by_columns` through an n x n system per fit.

    With A = lam I + X^T D X (lam = 1 + 1e-12, the weights' block), u = X^T D 1 and
    c0 = sum D + 1e-12 (the intercept's), H = [[A, u], [u^T, c0]]. The intercept is
    eliminated by its 1 x 1 Schur complement, and A^-1 v by Woodbury with S = D^1/2:
    A^-1 v = (v - X^T S (lam I + S X X^T S)^-1 S X v) / lam, whose matrix has every
    eigenvalue >= lam (Woodbury through the intercept's 1/1e-12 would not)."""
    n = x.shape[1]
    lam = 1.0 + 1e-12
    sq = curv.sqrt()
    inner = sq.unsqueeze(-1) * gram * sq.unsqueeze(1)
    inner = inner + lam * torch.eye(n, dtype=x.dtype, device=x.device)
    chol, info = torch.linalg.cholesky_ex(inner)
    u = torch.bmm(x.transpose(1, 2), curv.unsqueeze(-1))  # (G, p, 1)
    v = torch.cat([grad[:, :-1].unsqueeze(-1), u], dim=2)  # A^-1 of both columns at once
    sv = sq.unsqueeze(-1) * torch.bmm(x, v)
    solved = (v - torch.bmm(x.transpose(1, 2), sq.unsqueeze(-1) * torch.cholesky_solve(sv, chol))) / lam
    a_grad, a_u, u = solved[..., 0], solved[..., 1], u[..., 0]
    schur = curv.sum(1) + 1e-12 - (u * a_u).sum(1)
    db = (grad[:, -1] - (u * a_grad).sum(1)) / schur
    step = torch.cat([a_grad - a_u * db.unsqueeze(-1), db.unsqueeze(-1)], dim=1)
    bad = (info != 0) | ~(schur > 0) | ~torch.isfinite(step).all(1)
    if bool(bad.any()):  # numerically singular: a gradient step on H's diagonal, as there
        diag = torch.cat([(curv.unsqueeze(-1) * x * x).sum(1) + lam,
                          (curv.sum(1) + 1e-12).unsqueeze(-1)], dim=1)
        step = torch.where(bad[:, None], grad / (diag + 1.0), step)
    return step


def predict_logreg(w: torch.Tensor, b: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """scikit-learn's ``predict``: label 1 where the decision function x . w + b > 0. (G, n)."""
    z = torch.bmm(x.to(w.dtype), w.unsqueeze(-1)).squeeze(-1) + b[:, None]
    return z > 0
