"""eps_true: the privacy curve of the mechanism AS IMPLEMENTED, from the events a run emits.

A generator's own accountant (eps_claimed) charges what its code decides to charge,
with the analysis its authors chose. eps_true composes what the run actually
released, as privacy events (:mod:`raudit.events`; a run's training events say what
they released, collected by :func:`raudit.generators.transcript.privacy_events`, which
counts EVERY vote, charged or not), with dp_accounting's privacy-loss distributions.
It is the limit no audit can exceed; where eps_true > eps_claimed the accountant is
wrong by computation alone.

* :class:`PateVote`: one record moves ``sensitivity`` votes of each query (1 for a
  partition of the rows among teachers). The transcript is the noisy histogram (the
  released label is its post-processing): ``argmax`` = two Laplace (Gaussian)
  releases per query, ``threshold`` = one, each of sensitivity ``sensitivity``.
* :class:`GaussianStep`: ``count`` Poisson-subsampled Gaussian steps (DP-SGD).
* :class:`ConfidentGNMax` (G-PATE): data-dependent, no PLD exists: the
  data-dependent RDP bound of :mod:`raudit.accountants.gnmax` at ``sensitivity``, method
  "rdp-data-dependent" (an upper bound on the true curve, labelled as such).

Full-batch Gaussian releases compose exactly into one (mu-GDP: 1/sigma^2 adds up);
the rest goes through dp_accounting's ``PLDAccountant`` (connect-the-dots, interval
1e-4: within 1e-5 of a 100x finer grid for 100,000 Laplace(1,000) releases).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import dp_accounting
import numpy as np
from dp_accounting import pld
from scipy import optimize
from scipy.special import log_ndtr

from raudit.events import (ConfidentGNMax, GaussianStep, MechanismKey, PateVote, PrivacyEvent,
                           UnsupportedEvent)
from raudit.accountants.errors import UnsupportedEventError
from raudit.accountants.gaussian import NEIGHBOURS
from raudit.errors import ConfigError

__all__ = ["METHODS", "TrueEps", "eps_true", "gdp_eps", "releases"]

METHODS = ("pld", "pure-dp", "rdp-data-dependent", "none")
INTERVAL = 1e-4
# A Laplace release costing more than this alone (scale < 1/20) overflows the PLD's
# grid; its privacy loss is then +-1/scale with near certainty, so the basic
# composition of such releases is their eps up to a vanishing term.
PURE_CAP = 20.0
# Gaussian releases composing to mu > this (eps of several hundred; a record moving many
# teachers' votes) would need a PLD grid of ~mu^2 / INTERVAL points: where they are all the
# run released, their exact mu-GDP curve gives eps instead (:func:`gdp_eps`).
GDP_CAP = 20.0


@dataclass(frozen=True)
class TrueEps:
    """eps of the implemented mechanism at ``delta`` for one model, and how it was computed."""

    eps: float
    delta: float
    method: str  # one of METHODS
    sensitivity: int  # teachers one record reached (1 outside PATE)
    releases: dict[str, int] = field(default_factory=dict)  # mechanism -> count, what was composed
    note: str = ""


def _on(event: PrivacyEvent, model: int) -> bool:
    return True if event.mask is None else bool(event.mask[model])


def releases(events: Iterable[PrivacyEvent], *, model: int = 0,
             sensitivity: int = 1) -> tuple[Counter[MechanismKey], list[ConfidentGNMax]]:
    """(releases, gnmax) of ``model``: a count per (kind, scale at sensitivity 1,
    sampling rate), and the Confident-GNMax events (composed by RDP)."""
    out: Counter[MechanismKey] = Counter()
    gnmax: list[ConfidentGNMax] = []
    for e in events:
        if not _on(e, model):
            continue
        if isinstance(e, PateVote):
            out[(e.noise_kind, float(e.noise_scale) / sensitivity, 1.0)] += e.releases
        elif isinstance(e, GaussianStep):
            out[("gaussian", float(e.noise_multiplier), float(e.sampling_rate))] += int(e.count)
        elif isinstance(e, ConfidentGNMax):
            gnmax.append(e)
        elif isinstance(e, UnsupportedEvent):
            raise UnsupportedEventError(f"eps_true cannot bound {e.what}")
        else:
            raise ConfigError(f"eps_true does not take {type(e).__name__} events")
    return out, gnmax


def _pld_eps(releases: Counter[MechanismKey], delta: float, neighbours: str) -> float:
    # Full-batch Gaussian releases compose exactly: sum of 1/sigma^2 (mu-GDP).
    inv_var = sum(n / s**2 for (kind, s, q), n in releases.items() if kind == "gaussian" and q == 1.0)
    if math.sqrt(inv_var) > GDP_CAP and all(k == "gaussian" and q == 1.0 for k, _, q in releases):
        return gdp_eps(math.sqrt(inv_var), delta)
    acct = pld.PLDAccountant(NEIGHBOURS[neighbours], INTERVAL)
    if inv_var > 0:
        acct.compose(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(inv_var)))
    for (kind, scale, rate), n in sorted(releases.items()):
        if kind == "gaussian" and rate == 1.0:
            continue
        inner = (dp_accounting.LaplaceDpEvent(scale) if kind == "laplace"
                 else dp_accounting.GaussianDpEvent(scale))
        acct.compose(inner if rate == 1.0 else dp_accounting.PoissonSampledDpEvent(rate, inner),
                     int(n))
    return float(acct.get_epsilon(delta))


def gdp_eps(mu: float, delta: float) -> float:
    """The exact eps at ``delta`` of one Gaussian release of sensitivity 1 and noise 1 / mu:
    the root of delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth and
    Su 2019, Corollary 2.13), in logs so that no term overflows at any mu."""
    target = math.log(delta)

    def log_delta(eps: float) -> float:
        a = float(log_ndtr(-eps / mu + mu / 2))
        b = eps + float(log_ndtr(-eps / mu - mu / 2))
        return a + math.log1p(-math.exp(min(b - a, 0.0))) - target if b < a else -math.inf

    if log_delta(0.0) <= 0.0:
        return 0.0
    hi = mu * mu / 2 + 40.0 * mu  # log Phi(-40) < log(1e-300): past every delta
    return float(optimize.brentq(log_delta, 0.0, hi, xtol=1e-12, rtol=1e-13))


def _gnmax_rdp_eps(steps: Sequence[ConfidentGNMax], model: int, delta: float,
                   sensitivity: int) -> float:
    # A record moving s teachers' votes stays bounded, not infinite: each query is two
    # Gaussians whose curves at sensitivity s are those of sigma / s, and the data-dependent
    # bound is built on those curves (rdp_confident_gnmax). Summed as the accountant does.
    from raudit.accountants.gnmax import DEFAULT_ORDERS, eps_from_rdp, rdp_confident_gnmax

    rdp = np.zeros((1, DEFAULT_ORDERS.size))
    for e in steps:
        rdp += rdp_confident_gnmax(e.counts[model:model + 1], e.answered[model:model + 1],
                                   e.threshold, e.sigma1, e.sigma2, DEFAULT_ORDERS,
                                   sensitivity=sensitivity)
    return float(eps_from_rdp(rdp, DEFAULT_ORDERS, delta)[0])


def eps_true(events: Iterable[PrivacyEvent], *, delta: float, model: int = 0, sensitivity: int = 1,
             neighbours: str = "add-remove") -> TrueEps:
    """eps at ``delta`` of everything ``model`` released, as implemented (module docstring).

    ``sensitivity``: how many teachers' votes one record moves (PATE and Confident-GNMax votes).
    Raises ConfigError when the events hold no privacy mechanism at all.
    """
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie in (0, 1) for eps_true, got {delta!r}")
    if neighbours not in NEIGHBOURS:
        raise ConfigError(f"neighbours must be add-remove or replace, got {neighbours!r}")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) \
            or sensitivity < 1:
        raise ConfigError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    events = list(events)
    if not events:
        raise ConfigError("the run emitted no privacy events (votes, DP-SGD steps or gradient "
                          "votes): there is no mechanism to compute eps_true of")
    rel, gnmax = releases(events, model=model, sensitivity=int(sensitivity))
    shown = {f"{k}(scale={s:.6g}" + (f", q={q:.6g})" if q != 1.0 else ")"): int(n)
             for (k, s, q), n in sorted(rel.items())}
    if not rel and not gnmax:  # e.g. G-PATE stopped before applying its first step
        return TrueEps(0.0, delta, "pld", int(sensitivity), {}, "this model released nothing")
    if gnmax:
        if rel:  # would need RDP for both; no generator emits this mix today
            raise ConfigError("eps_true composes Confident-GNMax votes with no other mechanism")
        shown["confident-gnmax queries"] = int(sum(e.counts.shape[1] for e in gnmax))
        return TrueEps(_gnmax_rdp_eps(gnmax, model, delta, int(sensitivity)), delta,
                       "rdp-data-dependent",
                       int(sensitivity), shown,
                       "Confident GNMax has no privacy-loss distribution: the data-dependent "
                       "RDP bound (an upper bound on the true curve)")
    loud = Counter({k: n for k, n in rel.items() if k[0] == "laplace" and 1.0 / k[1] > PURE_CAP})
    if loud:  # basic composition of the loud releases, plus the PLD of the rest
        rest = rel - loud
        eps = sum(n / scale for (_, scale, _), n in loud.items())
        eps += _pld_eps(rest, delta, neighbours) if rest else 0.0
        return TrueEps(float(eps), delta, "pure-dp", int(sensitivity), shown,
                       f"Laplace releases of eps > {PURE_CAP:g} each: their basic composition "
                       "(exact up to a vanishing term), plus the PLD of the rest")
    return TrueEps(_pld_eps(rel, delta, neighbours), delta, "pld", int(sensitivity), shown)
