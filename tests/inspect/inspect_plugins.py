"""Small plugin generators for `raudit inspect`'s tests: a correct toy PATE and the same
toy with one injected bug each (``bug=``), loaded as ``inspect_plugins:ToyPate``.

The toy is numpy only: teachers are per-partition column means that vote "real" when a
generated row is nearer their mean than the global midpoint; votes are aggregated by the
paper's noisy argmax with Lap(1/lambda) per class and charged to the paper's moments
accountant; an iteration whose charge would pass eps is discarded (nothing released),
so the correct toy never overshoots. Output rows are uniform within the bounds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from raudit.accountants.pate import eps_from_moments, vote_gap_table
from raudit.generators.base import Generator
from raudit.events import AccountantStep, TeacherBatch, Votes

BUGS = ("none", "shared-rows", "accountant-factor", "metadata")


class ToyPate(Generator):
    name = "toy-pate"
    description = "test plugin: a tiny PATE with optional injected bugs"

    def __init__(self, *, teachers: int = 3, lam: float = 1e-3, max_iter: int | None = 40,
                 batch: int = 16, bug: str = "none") -> None:
        if bug not in BUGS:
            raise ValueError(bug)
        super().__init__(teachers=teachers, lam=lam, max_iter=max_iter, batch=batch, bug=bug)

    def _bounds(self, data: pd.DataFrame, columns) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = data.min().to_numpy(float).copy(), data.max().to_numpy(float).copy()
        if self.options["bug"] != "metadata":  # public bounds where declared
            for j, c in enumerate(columns or ()):
                if c.bounds == "public":
                    lo[j], hi[j] = c.lower, c.upper
        return lo, hi

    def _fit(self, data, *, epsilon, delta, seed, columns, observer) -> None:
        o = self.options
        k, lam, b, L = o["teachers"], o["lam"], o["batch"], 100
        rng = np.random.default_rng(seed)
        x = data.to_numpy(float)
        n = len(x)
        self.lo_, self.hi_ = self._bounds(data, columns)
        self.columns_, self.dtypes_ = list(data.columns), data.dtypes
        self.integral_ = [bool(np.all(np.mod(x[:, j], 1) == 0)) for j in range(x.shape[1])]
        parts = np.array_split(rng.permutation(n), k)
        if o["bug"] == "shared-rows":
            parts = [parts[0]] + [np.concatenate([p, parts[0][:5]]) for p in parts[1:]]
        scale = np.where(self.hi_ > self.lo_, self.hi_ - self.lo_, 1.0)
        z = (x - self.lo_) / scale
        means = np.stack([z[p].mean(0) for p in parts])
        table = vote_gap_table("paper", k, lam, L)
        if o["bug"] == "accountant-factor":
            table = table / 2.0  # forgets the factor 2 of 2 lam^2 l(l+1)
        alpha, it = np.zeros(L), 0
        one = np.ones(1, dtype=bool)
        while o["max_iter"] is None or it < o["max_iter"]:
            fake = rng.random((b, x.shape[1]))
            dist = np.linalg.norm(fake[None] - means[:, None], axis=2)  # (k, b)
            n1 = (dist < np.median(dist)).sum(0)
            noise = rng.laplace(scale=1.0 / lam, size=(b, 2))
            labels = (n1 + noise[:, 1] > k - n1 + noise[:, 0]).astype(float)
            new = alpha + np.bincount(np.abs(2 * n1 - k), minlength=k + 1) @ table
            eps = eps_from_moments(new, delta)
            if eps > epsilon:
                break  # this iteration's answers are never released
            alpha = new
            if observer is not None:
                for t, p in enumerate(parts):
                    observer(TeacherBatch(it, t, rng.choice(p, size=(1, b)), one))
                observer(Votes(it, n1[None], k, 1.0 / lam, noise[None], labels[None], one, one, "argmax"))
                observer(AccountantStep(it, np.array([eps]), alpha[None].copy(), one))
            it += 1
        self.summary_ = {"iterations": it, "eps_hat": float(eps_from_moments(alpha, delta)),
                         "hyperparameters": {"teachers": k, "lam": lam, "max_iter": o["max_iter"]}}

    def sample(self, n: int, *, seed: int = 0) -> pd.DataFrame:
        rng = np.random.default_rng([seed, 1])
        u = rng.random((n, len(self.columns_)))
        out = self.lo_ + u * (self.hi_ - self.lo_)
        for j, integral in enumerate(self.integral_):
            if integral:
                out[:, j] = np.rint(out[:, j])
        return pd.DataFrame(out, columns=self.columns_).astype(self.dtypes_.to_dict())
