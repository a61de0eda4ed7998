"""The eps estimators an audit reports, one registry entry each, with what it guarantees
and what it assumes.

An estimator is a function of the audit's :class:`Evidence` (the attack's scores on the
validation and test splits, the counts at the threshold chosen on validation, delta,
alpha) that returns eps_lo, or None when it does not apply (e.g. one synthetic dataset
per model for the multi-sample bound). :func:`raudit.audit.analyse.analyse` runs every
registered estimator; the summary row, ``raudit audit``'s table, the report and the
long ``estimates`` table iterate this registry. Adding an estimator is one function,
one :func:`register` call and a golden test (the contract suite in
``tests/contract/test_estimator_contract.py`` picks it up)::

    def eps_mine(ev: Evidence) -> float | None:
        return ...

    register(Estimator("mine", eps_mine, label="eps_emp mine",
                       guarantee="eps_lo <= eps with confidence 1 - alpha, any mechanism",
                       assumption="none"))

``column``: the summary column of the estimators the summary table had before this
registry (their ids and columns never change); a new estimator is written to the
``estimates`` table only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from raudit.audit.bayes import eps_bayesian
from raudit.audit.epsilon import eps_clopper_pearson, eps_jeffreys
from raudit.audit.fdp import tradeoff_bounds
from raudit.registry import Registry

__all__ = ["ASSUMPTIONS", "ESTIMATORS", "Estimator", "Evidence", "best", "column_of", "estimate",
           "estimate_rows", "register", "values_of"]

#: what an estimator assumes beyond independent trials and a threshold fixed before the
#: test split is seen; "none" is a bound for any (eps, delta)-DP mechanism
ASSUMPTIONS = ("none", "approximate-coverage", "jeffreys-prior", "gaussian-tradeoff",
               "independent-samples")


@dataclass
class Evidence:
    """What the estimators read; the expensive parts are computed once, on first use."""

    val: tuple[np.ndarray, np.ndarray]  # (scores, labels) of the validation split
    test: tuple[np.ndarray, np.ndarray]
    counts: tuple[int, int, int, int]  # tp, fn, tn, fp on test at the validation threshold
    delta: float
    alpha: float
    multi: Callable[[], dict[str, Any]] = field(default=lambda: {})  # the multi-sample bound
    #: (statistic, labels) of every trial where the attack's raw statistic is known (the
    #: transcript and active levels' likelihood ratio); None for trained attacks
    statistic: tuple[np.ndarray, np.ndarray] | None = None

    @cached_property
    def tradeoff(self) -> dict[str, float]:
        """eps_curve, mu_gdp, eps_gdp (:func:`raudit.audit.fdp.tradeoff_bounds`)."""
        return tradeoff_bounds(*self.val, *self.test, delta=self.delta, alpha=self.alpha)

    @cached_property
    def mu_fit(self) -> float | None:
        """mu_lo of the binormal fit of the raw statistic (:mod:`raudit.audit.gdp_fit`)."""
        from raudit.audit.gdp_fit import mu_fit

        return None if self.statistic is None else mu_fit(*self.statistic, alpha=self.alpha)

    @cached_property
    def multi_sample(self) -> dict[str, Any]:
        return self.multi()


@dataclass(frozen=True)
class Estimator:
    name: str
    fn: Callable[[Evidence], float | None]
    label: str  # how a table or figure names it
    guarantee: str  # one sentence: what eps_lo promises, and at what confidence
    assumption: str  # one of ASSUMPTIONS
    column: str | None = None  # its summary column, for the estimators that had one
    in_verdict: bool = False  # a candidate for the audit's best distribution-free bound

    def __post_init__(self) -> None:
        if self.assumption not in ASSUMPTIONS:
            raise ValueError(f"estimator {self.name}: assumption must be one of "
                             f"{', '.join(ASSUMPTIONS)}, got {self.assumption!r}")
        if self.in_verdict and self.assumption != "none":
            raise ValueError(f"estimator {self.name}: only assumption-free bounds may decide "
                             "the verdict")


ESTIMATORS: Registry[Estimator] = Registry("estimator")


def register(est: Estimator) -> Estimator:
    ESTIMATORS.register(est.name, est)
    return est


def _counts(fn):
    def run(ev: Evidence) -> float:
        return fn(*ev.counts, delta=ev.delta, alpha=ev.alpha)
    return run


_ONE = "at the threshold chosen on validation"
register(Estimator("cp", _counts(eps_clopper_pearson), "eps_emp CP",
                   f"eps_lo <= eps with confidence >= 1 - alpha/2 {_ONE} (Clopper-Pearson "
                   "limits on FPR and FNR, alpha/4 each)", "none", column="eps_cp",
                   in_verdict=True))
register(Estimator("jeffreys", _counts(eps_jeffreys), "eps_emp Jeffreys",
                   f"eps_lo <= eps with confidence about 1 - alpha/2 {_ONE} (Jeffreys "
                   "intervals: near-nominal average coverage, no guarantee; APPROXIMATE: "
                   "up to 5.7% overshoot at the privacy boundary where 5% is nominal)",
                   "approximate-coverage", column="eps_jeffreys"))
register(Estimator("bayes", _counts(eps_bayesian), "eps_emp Bayes",
                   f"P[eps >= eps_lo | data] = 1 - alpha/2 under Jeffreys priors on FPR and FNR "
                   f"{_ONE} (Zanella-Beguelin et al. 2023): credible, not a frequentist bound; "
                   "APPROXIMATE: it overshoots the privacy boundary in up to 19% of repeats at "
                   "alpha = 0.1 (tests/audit/test_calibration.py)",
                   "jeffreys-prior", column="eps_bayes"))
register(Estimator("curve", lambda ev: ev.tradeoff["eps_curve"], "eps_emp curve",
                   "eps_lo <= eps with confidence >= 1 - alpha/2, every threshold of a grid at "
                   "once (Bonferroni-corrected Clopper-Pearson limits)", "none",
                   column="eps_curve", in_verdict=True))
register(Estimator("gdp", lambda ev: ev.tradeoff["eps_gdp"], "eps_emp GDP",
                   "eps at delta of the mu-GDP the attack rules out (confidence >= 1 - alpha/2); "
                   "a bound on eps only if the mechanism's trade-off curve is Gaussian",
                   "gaussian-tradeoff", column="eps_gdp"))


def _eps_fit(ev: Evidence) -> float | None:
    from raudit.audit.fdp import eps_from_mu

    mu = ev.mu_fit
    return None if mu is None or not 0.0 < ev.delta < 1.0 else eps_from_mu(mu, ev.delta)


register(Estimator("gdp_fit", _eps_fit, "eps_emp GDP fit",
                   "eps at delta of the mu-GDP that a binormal equal-variance fit of the raw "
                   "statistic of ALL trials rules out (noncentral-t bound, confidence >= "
                   "1 - alpha/2 under that model); only where the statistic is known "
                   "(transcript, active)", "gaussian-tradeoff"))
register(Estimator("bayes_multi", lambda ev: ev.multi_sample.get("eps_bayes_multi"),
                   "eps_emp Bayes, all samples",
                   "as bayes, on every (model, synthetic dataset) pair: holds only if a model's "
                   "datasets were independent trials, which they are not", "independent-samples",
                   column="eps_bayes_multi"))


def estimate(ev: Evidence) -> dict[str, float | None]:
    """{estimator name: eps_lo or None} for every registered estimator."""
    out = {}
    for name in ESTIMATORS.names():
        value = ESTIMATORS.get(name).fn(ev)
        out[name] = None if value is None else float(value)
    return out


def best(values: Mapping[str, float | None]) -> str:
    """The audit's best distribution-free bound: CP, unless another assumption-free
    candidate is strictly larger (ties and NaN stay with CP, as before the registry)."""
    chosen = "cp"
    for n in ESTIMATORS.names():
        if n == chosen or not ESTIMATORS.get(n).in_verdict:
            continue
        v, w = values.get(n), values.get(chosen)
        if v is not None and w is not None and v > w:
            chosen = n
    return chosen


def column_of(name: str) -> str:
    """The summary (or report) column of estimator ``name``."""
    return ESTIMATORS.get(name).column or f"eps_{name}"


def values_of(row: Mapping[str, Any]) -> dict[str, float | None]:
    """{estimator: eps_lo or None} of a result row: its ``estimates``, else the summary
    columns of the estimators that have one."""
    given = row.get("estimates")
    if given is not None:
        return {n: given.get(n) for n in ESTIMATORS.names()}
    out = {}
    for n in ESTIMATORS.names():
        v = row.get(column_of(n))
        out[n] = None if v is None or (isinstance(v, float) and v != v) else float(v)
    return out


def estimate_rows(audit_id: str, values: Mapping[str, float | None], alpha: float
                  ) -> list[dict[str, Any]]:
    """Rows of the long ``estimates`` table: one per estimator that gave a value."""
    return [{"audit_id": audit_id, "estimator": name, "eps_lo": float(v),
             "alpha": float(alpha), "assumption": ESTIMATORS.get(name).assumption}
            for name in ESTIMATORS.names() if (v := values.get(name)) is not None]
