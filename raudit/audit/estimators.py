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

Bounds and estimates are kept apart. A *bound* (assumption "none": CP, curve; the
anytime and one-run audits have their own) holds at its stated confidence for any
(eps, delta)-DP mechanism: only bounds are named eps_emp and only they decide the
verdict. An *estimate* (Jeffreys, Bayes, GDP, GDP fit, multi-sample) holds only under
its assumption: :func:`shown` says how a table prints it, capped and flagged where its
value says nothing about the mechanism (above the audit's ceiling, or an attack that
made no error, whose value the trial count sets) and left out, with the reason, where
its assumption is known false (a Gaussian trade-off for a Laplace or
randomized-response mechanism, from the generator's declared ``releases``). The full
values stay in the JSON and the Parquet columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from raudit.audit.bayes import eps_bayesian
from raudit.audit.epsilon import eps_clopper_pearson, eps_jeffreys
from raudit.audit.fdp import tradeoff_bounds
from raudit.registry import Registry

__all__ = ["ASSUMPTIONS", "ESTIMATORS", "Estimator", "Evidence", "best", "bound_names", "column_of",
           "estimate", "estimate_lines", "estimate_names", "estimate_rows", "known_false", "register", "shown",
           "values_of"]

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

    @property
    def is_bound(self) -> bool:
        """A bound for any mechanism (module docstring), else an estimate."""
        return self.assumption == "none"

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


def _counts(fn: Callable[..., float]) -> Callable[[Evidence], float]:
    def run(ev: Evidence) -> float:
        return fn(*ev.counts, delta=ev.delta, alpha=ev.alpha)
    return run


_ONE = "at the threshold chosen on validation"
register(Estimator("cp", _counts(eps_clopper_pearson), "eps_emp CP",
                   f"eps_lo <= eps with confidence >= 1 - alpha/2 {_ONE} (Clopper-Pearson "
                   "limits on FPR and FNR, alpha/4 each)", "none", column="eps_cp",
                   in_verdict=True))
register(Estimator("jeffreys", _counts(eps_jeffreys), "Jeffreys estimate",
                   f"eps_lo <= eps with confidence about 1 - alpha/2 {_ONE} (Jeffreys "
                   "intervals: near-nominal average coverage, no guarantee; APPROXIMATE: "
                   "up to 5.7% overshoot at the privacy boundary where 5% is nominal)",
                   "approximate-coverage", column="eps_jeffreys"))
register(Estimator("bayes", _counts(eps_bayesian), "Bayes estimate",
                   f"P[eps >= eps_lo | data] = 1 - alpha/2 under Jeffreys priors on FPR and FNR "
                   f"{_ONE} (Zanella-Beguelin et al. 2023): credible, not a frequentist bound; "
                   "APPROXIMATE: it overshoots the privacy boundary in up to 19% of repeats at "
                   "alpha = 0.1 (tests/audit/test_calibration.py)",
                   "jeffreys-prior", column="eps_bayes"))
register(Estimator("curve", lambda ev: ev.tradeoff["eps_curve"], "eps_emp curve",
                   "eps_lo <= eps with confidence >= 1 - alpha/2, every threshold of a grid at "
                   "once (Bonferroni-corrected Clopper-Pearson limits)", "none",
                   column="eps_curve", in_verdict=True))
register(Estimator("gdp", lambda ev: ev.tradeoff["eps_gdp"], "GDP estimate",
                   "eps at delta of the mu-GDP the attack rules out (confidence >= 1 - alpha/2); "
                   "a bound on eps only if the mechanism's trade-off curve is Gaussian",
                   "gaussian-tradeoff", column="eps_gdp"))


def _eps_fit(ev: Evidence) -> float | None:
    from raudit.audit.fdp import eps_from_mu

    mu = ev.mu_fit
    return None if mu is None or not 0.0 < ev.delta < 1.0 else eps_from_mu(mu, ev.delta)


register(Estimator("gdp_fit", _eps_fit, "GDP fit estimate",
                   "eps at delta of the mu-GDP that a binormal equal-variance fit of the raw "
                   "statistic of ALL trials rules out (noncentral-t bound, confidence >= "
                   "1 - alpha/2 under that model); only where the statistic is known "
                   "(transcript, active)", "gaussian-tradeoff"))
register(Estimator("bayes_multi", lambda ev: ev.multi_sample.get("eps_bayes_multi"),
                   "Bayes estimate, all samples",
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


def bound_names() -> list[str]:
    """Names of the registered bounds (assumption "none"), CP first."""
    return [n for n in ESTIMATORS.names() if ESTIMATORS.get(n).is_bound]


def estimate_names() -> list[str]:
    """Names of the registered estimates (an assumption beyond independent trials)."""
    return [n for n in ESTIMATORS.names() if not ESTIMATORS.get(n).is_bound]


#: the release kinds (raudit.generators.capabilities.Capabilities.releases) under which an
#: assumption is known false: a Laplace or randomized-response mechanism's trade-off curve
#: is not Gaussian (its GDP estimate exceeded eps_true in 30 of 30 seeds, issue 49)
FALSE_UNDER = {"gaussian-tradeoff": ("laplace", "randomized-response")}


def known_false(name: str, releases: Iterable[str] | None) -> str | None:
    """Why estimator ``name``'s assumption is known false for a mechanism releasing
    ``releases`` (noise kinds), or None (it may hold, or nothing is known)."""
    est = ESTIMATORS.get(name)
    bad = [k for k in (releases or ()) if k in FALSE_UNDER.get(est.assumption, ())]
    if not bad:
        return None
    return (f"not shown: it assumes a Gaussian trade-off curve, which a mechanism releasing "
            f"{' and '.join(bad)} noise does not have")


def shown(name: str, value: float | None, *, ceiling: float | None, no_error: bool,
          releases: Iterable[str] | None = ()) -> str | None:
    """How a table prints estimate ``name`` (module docstring): its value and assumption,
    capped at the audit's ceiling and flagged, or the one-line reason it is left out;
    None when it gave no value."""
    if value is None or value != value:
        return None
    why = known_false(name, releases)
    if why is not None:
        return why
    est = ESTIMATORS.get(name)
    text = f"{value:.3f} (assumes {est.assumption})"
    flags = []
    if ceiling is not None and ceiling == ceiling and value > ceiling:
        text = f"> {ceiling:.3f} (assumes {est.assumption})"
        flags.append(f"ABOVE THE CEILING: capped at the most these trials can certify "
                     f"(full value {value:.4g} in the JSON)")
    if no_error:
        flags.append("the attack made no error on the test split: the value is set by the "
                     "trial count, not by the mechanism")
    return text + "".join(f"; {f}" for f in flags)


def estimate_lines(row: Mapping[str, Any], values: Mapping[str, float | None]
                   ) -> list[tuple[str, str]]:
    """(label, text) of every estimate an audit's summary ``row`` gave, as its tables print
    them (:func:`shown`: capped at ``eps_max``, flagged, or left out with the reason given
    the row's ``mechanism_releases``), then the GDP mu where GDP may hold."""
    kinds = row.get("mechanism_releases")
    releases = tuple(kinds.split(",")) if isinstance(kinds, str) and kinds else ()
    no_error = row.get("fp") == 0 and row.get("fn") == 0 and bool(row.get("tp") or row.get("tn"))
    ceiling = row.get("eps_max")
    out = []
    for name in estimate_names():
        text = shown(name, values.get(name), ceiling=None if ceiling is None else float(ceiling),
                     no_error=no_error, releases=releases)
        if text is not None:
            out.append((ESTIMATORS.get(name).label, text))
    mu = row.get("mu_gdp")
    if mu is not None and mu == mu and known_false("gdp", releases) is None:
        out.append(("GDP mu", f"mu >= {float(mu):.3f} (a bound on mu; the GDP estimate reads "
                    "it as eps)"))
    return out
