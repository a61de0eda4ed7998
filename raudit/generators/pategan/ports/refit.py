"""What `updated` and `synthcity` share: logistic-regression teachers refit from scratch
every iteration (M models x k teachers in one batched fit), their votes, and a moments
accountant charged per query with a validity mask.

Both upstreams keep their own accountant inline; raudit charges the named variant
from :mod:`raudit.accountants.pate` through its per-vote-gap table, so a NaN of the
``updated`` formula reaches exactly the models that cast such a vote.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from raudit.accountants.pate import eps_from_moments, vote_gap_table
from raudit.generators.batched import BatchedGenerator
from raudit.events import AccountantStep
from raudit.generators.teacher_loss import real_losses
from raudit.generators.pategan.ports.logreg import fit_logreg

#: what both ports declare they emit, so that callers asking (--threat-model transcript)
#: see their votes; device and progress stay the batched base's
CAPABILITIES = dataclasses.replace(BatchedGenerator.capabilities,
                                   events=("teacher_batch", "votes", "accountant_step",
                                           "teacher_loss"), privacy_events=("PateVote",),
                                   releases=("laplace",))


class RefitTeachers:
    """k logistic regressions per model, refit on each call of :meth:`fit`."""

    def __init__(self, models: int, k: int):
        self.models, self.k = models, k
        self.w: torch.Tensor | None = None
        self.b: torch.Tensor | None = None

    def fit(self, real: torch.Tensor, real_ok: torch.Tensor, fake: torch.Tensor,
            fake_ok: torch.Tensor) -> None:
        """real (M, k, R, d) labelled 1, fake (M, k, F, d) labelled 0; *_ok mark valid rows."""
        m, k = self.models, self.k
        x = torch.cat([real, fake], dim=2).reshape(m * k, -1, real.shape[-1])
        y = torch.cat([torch.ones(real.shape[:3]), torch.zeros(fake.shape[:3])], dim=2)
        ok = torch.cat([real_ok, fake_ok], dim=2).reshape(m * k, -1)
        self.w, self.b = fit_logreg(x, y.reshape(m * k, -1).to(x.device), ok)

    @torch.no_grad()
    def losses_on(self, real: torch.Tensor, ok: torch.Tensor) -> np.ndarray:
        """(M, k, k) BCE of every teacher j on teacher i's real rows ``real`` (M, k, R, d),
        valid where ``ok`` (M, 1 or k, R) (the TeacherLoss event)."""
        m, k, r, d = real.shape
        w = self.w.view(m, self.k, d)
        logits = torch.einsum("mird,mjd->mjir", real.to(torch.float64), w) + self.b.view(m, k, 1, 1)
        return real_losses(logits, ok[:, None])

    @torch.no_grad()
    def votes(self, x: torch.Tensor) -> torch.Tensor:
        """n1 (M, B): how many of each model's teachers ``predict`` 1 on its rows x (M, B, d)."""
        m, b, d = x.shape
        w = self.w.view(m, self.k, d).transpose(1, 2)  # (M, d, k)
        z = torch.bmm(x.to(torch.float64), w) + self.b.view(m, 1, self.k)
        return (z > 0).sum(2)


class QueryAccountant:
    """Running moments (M, L) of one accountant variant; queries charged under a mask."""

    def __init__(self, variant: str, *, k: int, lam: float, orders: int, models: int):
        self.table = vote_gap_table(variant, k, lam, orders)  # (k + 1, L)
        self.k = k
        self.alpha = np.zeros((models, orders))
        self.charged = np.zeros(models, dtype=np.int64)

    def charge(self, n1: np.ndarray, valid: np.ndarray) -> None:
        """Add the moments of the queries n1 (M, B) where ``valid`` (M, B)."""
        gap = np.abs(2 * n1.astype(np.int64) - self.k)
        inc = np.where(valid[..., None], self.table[gap], 0.0)  # NaN only where charged
        self.alpha += inc.sum(1)
        self.charged += valid.sum(1)

    def eps(self, delta: np.ndarray) -> np.ndarray:
        """eps_hat per model; ``delta`` (M,) (one value per model)."""
        out = np.empty(self.alpha.shape[0])
        for d in np.unique(delta):
            sel = delta == d
            out[sel] = eps_from_moments(self.alpha[sel], float(d))
        return out


def account_iteration(acct: "QueryAccountant", deltas: np.ndarray, epsilon: float, it: int,
                      active: np.ndarray, eps_hat: np.ndarray, stopped: list,
                      observer=None, progress=None) -> np.ndarray:
    """The end of outer iteration ``it`` (counted from 1) of both ports: eps_hat of the
    active models, the AccountantStep event, the progress tick, and stopping. A NaN
    eps_hat stops its model (NaN < eps is False) with reason "nan", as upstream's loop
    silently does. Updates ``active`` and ``stopped`` in place; returns eps_hat."""
    eps_hat = np.where(active, acct.eps(deltas), eps_hat)
    if observer is not None:
        observer(AccountantStep(it - 1, eps_hat.copy(), acct.alpha.copy(), active.copy()))
    if progress is not None:
        progress(it)
    for i in np.flatnonzero(active & ~(eps_hat < epsilon)):
        stopped[i] = "nan" if np.isnan(eps_hat[i]) else "epsilon"
    active &= eps_hat < epsilon
    return eps_hat
