"""One sentence a non-specialist can read, from an audit's summary row.

The bound eps_cp is a one-sided lower bound: with probability at least 1 - alpha
(90 % at raudit's alpha = 0.1) the generator's true eps is at least eps_cp. So a
claim is *violated* when eps_cp exceeds it, and *not contradicted* otherwise: an
audit can never prove a claim, and it cannot show more than its ceiling eps_max
(the bound a perfect attack would reach with this many test models).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from raudit.results.convert import number

ALPHA = 0.1  # the audit's alpha (raudit.audit.analyse.analyse's default)
_NO_SIGNAL = 0.01  # TPR and FPR both within this of 0 or 1: the threshold separates nothing


def no_signal(row: Mapping[str, Any]) -> bool:
    """True when the chosen threshold calls (almost) every model the same world."""
    tpr, fpr = number(row.get("tpr")), number(row.get("fpr"))
    if math.isnan(tpr) or math.isnan(fpr):
        return False
    return (tpr >= 1 - _NO_SIGNAL and fpr >= 1 - _NO_SIGNAL) or (
        tpr <= _NO_SIGNAL and fpr <= _NO_SIGNAL)


def verdict(row: Mapping[str, Any], alpha: float = ALPHA) -> str:
    """The audit's conclusion in one sentence (see the module docstring)."""
    anytime = number(row.get("eps_anytime"))
    if not math.isnan(anytime):  # a black-box audit stopped by the test martingale
        eps = number(row.get("epsilon"))
        state = "the claim is VIOLATED" if anytime > eps else "within the claim"
        return (f"anytime-valid audit: eps >= {anytime:.2f} at {100 * (1 - alpha):.0f}% "
                f"confidence (valid at every look), {state}; {row.get('looks')} look(s), "
                f"stopped: {row.get('stop_reason')}; the CP bound at the last look, at its own "
                f"level: {number(row.get('eps_cp')):.2f}")
    eps = number(row.get("epsilon"))
    lo, ceiling, auc = number(row.get("eps_cp")), number(row.get("eps_max")), number(row.get("auc"))
    conf = f"{100 * (1 - alpha):.0f}% confidence"
    if math.isnan(lo) or math.isnan(auc):
        return ("no result: too few shadow models finished in some split to run the attack "
                f"({row.get('missing')} missing); rerun the same command to retry them")
    if lo > eps:
        text = (f"claimed eps = {eps:g}; this audit shows eps >= {lo:.2f} at {conf}: "
                "the claim is VIOLATED")
        if not math.isnan(ceiling) and math.isclose(lo, ceiling, rel_tol=1e-6):
            # a perfect attack on the test models: the model count, not the leak, set the bound
            text += (f"; the bound sits at this audit's ceiling eps_max = {ceiling:.2f} (the "
                     "attack was right on every test model): more shadow models could show "
                     "a larger eps")
        return text
    if not math.isnan(ceiling) and ceiling <= eps:
        limit = (f"this audit cannot detect a violation: with this many shadow models it could "
                 f"not have shown more than eps_max = {ceiling:.2f}, at most the claimed "
                 f"{eps:g}; raise --shadow-models")
        return ("no violation detected, but " + limit) if lo <= 0 else (
            f"eps >= {lo:.2f} at {conf}, within the claimed {eps:g}; but " + limit)
    ceiling_txt = (f"with this many shadow models the audit could not have shown more than "
                   f"eps_max = {ceiling:.2f}")
    if lo <= 0:
        signal = ("the attack found no signal (AUC {:.2f})".format(auc) if no_signal(row)
                  or abs(auc - 0.5) < 0.05 else f"the attack's AUC is {auc:.2f}")
        return f"no violation detected of claimed eps = {eps:g}: {signal}; {ceiling_txt}"
    return (f"claimed eps = {eps:g}; this audit shows eps >= {lo:.2f} at {conf}, within the "
            f"claim: no violation detected; {ceiling_txt}")


def audited_eps(row: Mapping[str, Any]) -> float:
    """The audit's eps lower bound: an anytime-valid audit's eps_anytime (its stopping
    rule; the CP bound beside it holds at its own level), else the larger of the
    distribution-free CP and curve bounds, or a one-run audit's eps_one_run."""
    anytime = number(row.get("eps_anytime"))
    if not math.isnan(anytime):
        return anytime
    vals = [v for v in (number(row.get("eps_cp")), number(row.get("eps_curve"))) if not math.isnan(v)]
    if not vals:  # a one-run or anytime audit has its own bound
        one = number(row.get("eps_one_run"))
        return one if not math.isnan(one) else number(row.get("eps_anytime"))
    return max(vals)


def tightness(row: Mapping[str, Any]) -> float | None:
    """audited / eps_true, or None where either is missing (or eps_true is 0 or infinite)."""
    lo, true = audited_eps(row), number(row.get("eps_true"))
    if math.isnan(lo) or math.isnan(true) or not 0 < true < math.inf:
        return None
    return lo / true


def verdict_line(row: Mapping[str, Any]) -> str:
    """Claimed, mechanism (eps_true) and audited eps side by side, with the audit's power:
    "claimed 1.00, mechanism 0.97, audited >= 0.90 (93 % of what it spends; could show
    at most 1.20)"; an accountant below eps_true "under-counts"."""
    eps, true, lo = number(row.get("epsilon")), number(row.get("eps_true")), audited_eps(row)
    ceiling = number(row.get("eps_max"))
    if math.isnan(lo):
        return f"claimed {eps:.2f}: no audited bound (too few models finished)"
    power = "" if math.isnan(ceiling) or not math.isnan(number(row.get("eps_anytime"))) \
        else f"; the audit could show at most {ceiling:.2f}"  # (the CP ceiling: not anytime's)
    if math.isnan(true):
        mech = f"mechanism n/a ({row.get('eps_true_source') or 'no privacy events'})"
    elif math.isinf(true):
        mech = "mechanism unbounded (no DP mechanism bounds a record's influence)"
    else:
        shown = f"{true:.2f}" if true < 1e4 else f"{true:.3g}"  # updated's 4.04e+07, not 8 digits
        mech = f"mechanism {shown}" + (": the accountant under-counts" if true > eps else "")
    # an audit above eps_true measures a leak the mechanism's events do not carry (e.g.
    # smartnoise's bounds="data" pre-pass): say so, or "mechanism 0.00" reads as a contradiction
    outside = ("; the audit exceeds the mechanism: the leak is outside the privacy events "
               "(non-private preprocessing or a released value the accountant never saw)"
               if 0 <= true < lo else "")
    if lo > eps:
        return f"claimed {eps:.2f}, {mech}; audited >= {lo:.2f}: VIOLATED{outside}{power}"
    ratio = None if outside else tightness(row)
    share = "" if ratio is None else f" ({100 * ratio:.0f} % of what it spends)"
    return f"claimed {eps:.2f}, {mech}; audited >= {lo:.2f}{share}{outside}{power}"
