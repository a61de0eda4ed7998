"""One privacy specification, resolved in one place for `train`, `audit` and the rest.

::

    spec = PrivacySpec(epsilon=1.0)                  # delta: the implementation's rule
    p = spec.resolve(generator, n_rows=len(train))   # -> ResolvedPrivacy(epsilon, delta, rule)
    generator.fit_many(tables, epsilon=p.epsilon, delta=p.delta, ...)

A generator declares how it picks delta when the user gives none
(:meth:`raudit.generators.base.Generator.delta_rule`): a number (the PATE-GAN
family's :data:`STUDY_DELTA`), the name of a rule in :data:`DELTA_RULES` (smartnoise's
``"1/(N sqrt N)"``, N the training rows) or ``None`` for a pure-DP mechanism that
ignores delta, which is then given :data:`STUDY_DELTA` so that the audit's bounds and
every summary carry one number. The resolved delta is what trains and what is
recorded (train's summary.json, the audit's rows). An audit resolves it once on the
full table D (N = |D_in|) and trains both worlds with it, as the study passes one
delta to every run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from raudit.errors import ConfigError
from raudit.registry import Registry

__all__ = ["DELTA_RULES", "STUDY_DELTA", "PrivacySpec", "ResolvedPrivacy", "delta_for",
           "fmt_delta", "fmt_eps", "rule_deltas", "training_notes"]

#: The study's delta, and the one place the number is written: the delta the PATE-GAN
#: family declares, the stand-in for pure-DP mechanisms (which ignore delta) in bounds and
#: summaries, and the default of the eps estimators.
STUDY_DELTA = 1e-5


def _n_sqrt_n(n):
    """smartnoise (snsynth PATEGAN): delta = 1 / (N sqrt N); works on numbers and arrays."""
    import numpy as np
    return 1.0 / (n * np.sqrt(n))


#: named delta rules: name -> f(training rows) -> delta.
DELTA_RULES: Registry[Callable[[Any], Any]] = Registry("delta rule")
DELTA_RULES.register("1/(N sqrt N)", _n_sqrt_n)


def delta_for(rule: float | str | None, n_rows):
    """delta of ``rule`` (a number, a DELTA_RULES name, None = pure DP) for ``n_rows`` rows."""
    if rule is None:
        return STUDY_DELTA
    if isinstance(rule, str):
        return DELTA_RULES.get(rule)(n_rows)
    return float(rule)


def _check(epsilon: Any, delta: Any) -> None:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) \
            or not math.isfinite(epsilon) or epsilon <= 0:
        raise ConfigError(f"epsilon must be a positive number, got {epsilon!r}")
    if delta is not None and (isinstance(delta, bool) or not isinstance(delta, (int, float))
                              or not 0 < delta < 1):
        raise ConfigError(f"delta must be in (0, 1), got {delta!r}")


@dataclass(frozen=True)
class ResolvedPrivacy:
    """The numbers a run trains with and records."""

    epsilon: float
    delta: float
    delta_rule: str  # "given", "fixed", a DELTA_RULES name, or "pure-dp"
    n_rows: int

    def as_dict(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "delta_rule": self.delta_rule,
                "delta_rows": self.n_rows}


@dataclass(frozen=True)
class PrivacySpec:
    """epsilon, and delta or (``None``) the implementation's own delta rule."""

    epsilon: float
    delta: float | None = None

    def __post_init__(self) -> None:
        _check(self.epsilon, self.delta)

    def resolve(self, generator: Any, n_rows: int) -> ResolvedPrivacy:
        """The delta ``generator`` (an instance: rules may depend on its preset) uses on
        ``n_rows`` training rows."""
        if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 1:
            raise ConfigError(f"n_rows must be an integer >= 1, got {n_rows!r}")
        if self.delta is not None:
            return ResolvedPrivacy(float(self.epsilon), float(self.delta), "given", n_rows)
        rule = generator.delta_rule() if hasattr(generator, "delta_rule") else \
            getattr(generator, "default_delta", None)
        name = "pure-dp" if rule is None else rule if isinstance(rule, str) else "fixed"
        delta = float(delta_for(rule, n_rows))
        _check(self.epsilon, delta)
        return ResolvedPrivacy(float(self.epsilon), delta, name, n_rows)


def rule_deltas(generator: Any, n_rows):
    """delta of ``generator``'s declared rule for ``n_rows`` (a number, or an array of rows
    per model): what a generator trains with when it is fit without a delta, per model."""
    rule = generator.delta_rule() if hasattr(generator, "delta_rule") else \
        getattr(generator, "default_delta", None)
    return delta_for(rule, n_rows)


def fmt_eps(value: Any) -> str:
    """An eps for display: 5 significant digits (1.0074, not 1.0074419767378342); the full
    value stays in JSON and Parquet."""
    try:
        return f"{float(value):.5g}"
    except (TypeError, ValueError):
        return "not reported"


def fmt_delta(value: Any) -> str:
    """A delta for display: 3 significant digits (1.46e-05, not 1.4577259475218659e-05)."""
    try:
        return f"{float(value):.3g}"
    except (TypeError, ValueError):
        return "?"


def training_notes(iterations: Any, eps_hat: Any, epsilon: Any, *,
                   steps_expected: bool, why_over: str | None = None) -> list[str]:
    """What a reader of one training run must not miss, in words: no step taken (where
    the generator trains by steps), and a final eps_hat above the eps it was given (why:
    ``why_over`` where the generator says, else the stopping rule's overshoot)."""
    notes = []
    if steps_expected and not iterations:
        notes.append("0 training iterations were applied: the released generator is the "
                     "untrained one (its output says nothing about the training data, or "
                     "about its utility)")
    try:
        over = float(eps_hat) > float(epsilon)
    except (TypeError, ValueError):
        over = False
    if over:
        notes.append(f"final eps_hat {fmt_eps(eps_hat)} is above eps = {float(epsilon):g}: " + (
            why_over or "its stopping rule checks the budget after a step, so the last step "
                        "ran past eps"))
    return notes
