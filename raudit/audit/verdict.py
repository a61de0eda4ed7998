"""One sentence a non-specialist can read, from an audit's summary row.

The audit's bound (:func:`audited_eps`: the larger of the CP bound eps_cp and the curve
bound eps_curve, or an anytime or one-run audit's own) is a one-sided lower bound: with
probability at least 1 - alpha (90 % at raudit's alpha = 0.1) the generator's true eps is
at least that. So a claim is *violated* when that bound exceeds it (:func:`violated`, the
one rule the CLI, the report and the API share), and *not contradicted* otherwise: an
audit can never prove a claim, and it cannot show more than its ceiling eps_max (the
bound a perfect attack would reach with this many test models).

The sentence names what ran (shadow models, a data-only audit's synthetic files, or a
transcript or active audit's mechanism-only trials: :func:`raudit.audit.threat_model.trials_of`)
and the setting a user turns as the interface they use names it (``say``: a
:class:`raudit.wording.Wording`, the command's flags by default).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist
from typing import Any

from raudit.audit.threat_model import Trials, trials_of
from raudit.results.convert import number
from raudit.wording import FLAGS, Wording

ALPHA = 0.1  # the audit's alpha (raudit.audit.analyse.analyse's default)
_NO_SIGNAL = 0.01  # TPR and FPR both within this of 0 or 1: the threshold sits in a tail


def _more(trials: Trials, say: Wording) -> str:
    """The advice that lifts the ceiling: more of what the audit's trials are."""
    if trials.kind == "files":
        return f"give more synthetic files per world ({say.files})"
    return f"raise {say.models}" + (" (trials per world)" if trials.kind == "mechanism" else "")


def tail_threshold(row: Mapping[str, Any]) -> bool:
    """True when the chosen threshold calls (almost) every test model the same world.

    Alone this is no evidence of "no signal": a threshold in a tail can be the best one
    (a transcript audit's likelihood-ratio test at 200,000 trials picks TPR 0.26 %, FPR
    0.09 % and gets CP 0.80 of eps_true 1.06; issue 49)."""
    tpr, fpr = number(row.get("tpr")), number(row.get("fpr"))
    if math.isnan(tpr) or math.isnan(fpr):
        return False
    return (tpr >= 1 - _NO_SIGNAL and fpr >= 1 - _NO_SIGNAL) or (
        tpr <= _NO_SIGNAL and fpr <= _NO_SIGNAL)


def auc_is_real(row: Mapping[str, Any], alpha: float = ALPHA) -> bool:
    """Whether the test split shows the attack's AUC differs from 1/2 at level ``alpha``
    (two-sided: a threshold's direction is chosen on validation): the normal approximation
    of the Mann-Whitney statistic under "no signal", Var(AUC) = (n0 + n1 + 1) / (12 n0 n1),
    with n1 = tp + fn and n0 = tn + fp the test models of each world."""
    auc = number(row.get("auc"))
    counts = [number(row.get(k)) for k in ("tp", "fn", "tn", "fp")]
    if math.isnan(auc) or any(math.isnan(c) for c in counts):
        return False
    n1, n0 = counts[0] + counts[1], counts[2] + counts[3]
    if n1 < 1 or n0 < 1:
        return False
    sd = math.sqrt((n0 + n1 + 1) / (12.0 * n0 * n1))
    return abs(auc - 0.5) / sd > NormalDist().inv_cdf(1 - alpha / 2)


def no_signal(row: Mapping[str, Any]) -> bool:
    """True only when no threshold has signal: the chosen one sits in a tail, neither
    bound (CP at that threshold, the curve over every threshold) is above 0, and the
    test split does not show the AUC is real (:func:`auc_is_real`)."""
    if not tail_threshold(row):
        return False
    if any(number(row.get(k)) > 0 for k in ("eps_cp", "eps_curve")):
        return False
    return not auc_is_real(row)


def verdict(row: Mapping[str, Any], alpha: float = ALPHA, say: Wording = FLAGS) -> str:
    """The audit's conclusion in one sentence (see the module docstring); ``say``: the
    interface's names for the settings it advises (the command's flags by default)."""
    anytime = number(row.get("eps_anytime"))
    if not math.isnan(anytime) and trials_of(row).kind == "mechanism":  # a transcript's stop
        return (f"anytime-valid audit: eps >= {anytime:.2f} at {100 * (1 - alpha):.0f}% "
                f"confidence after {int(number(row.get('models_ok')))} trials "
                f"({row.get('stop_reason')})")
    if not math.isnan(anytime):  # a black-box audit stopped by the test martingale
        state = "the claim is VIOLATED" if violated(row) else "within the claim"
        return (f"anytime-valid audit: eps >= {anytime:.2f} at {100 * (1 - alpha):.0f}% "
                f"confidence (valid at every look), {state}; {row.get('looks')} look(s), "
                f"stopped: {row.get('stop_reason')}; the CP bound at the last look, at its own "
                f"level: {number(row.get('eps_cp')):.2f}")
    eps = number(row.get("epsilon"))
    lo, ceiling, auc = number(row.get("eps_cp")), number(row.get("eps_max")), number(row.get("auc"))
    conf = f"{100 * (1 - alpha):.0f}% confidence"
    trials = trials_of(row)
    if math.isnan(lo) or math.isnan(auc):
        return (f"no result: too few {trials.plural} finished in some split to run the attack "
                f"({row.get('missing')} missing); {say.rerun} to retry them")
    if violated(row):
        top = audited_eps(row)
        text = (f"claimed eps = {eps:g}; this audit shows eps >= {top:.2f} at {conf}"
                f"{'' if top == lo else ' (the curve bound, over every threshold)'}: "
                "the claim is VIOLATED")
        if not math.isnan(ceiling) and math.isclose(top, ceiling, rel_tol=1e-6):
            # a perfect attack on the test models: the model count, not the leak, set the bound
            text += (f"; the bound sits at this audit's ceiling eps_max = {ceiling:.2f} (the "
                     f"attack was right on every test {trials.one}): more {trials.plural} could "
                     "show a larger eps")
        return text
    beyond = _beyond_mechanism(row)
    if beyond is not None:  # within the claim, but more than the mechanism spends
        top = audited_eps(row)
        return (f"claimed eps = {eps:g}; this audit shows eps >= {top:.2f} at {conf}: within "
                f"the claim, but above the mechanism's eps_true = {beyond:.2f}, so the leak is "
                "outside the privacy events (non-private preprocessing or a released value "
                "the accountant never saw)")
    if not math.isnan(ceiling) and ceiling <= eps:
        limit = (f"this audit cannot detect a violation: with this many {trials.plural} it could "
                 f"not have shown more than eps_max = {ceiling:.2f}, at most the claimed "
                 f"{eps:g}; {_more(trials, say)}")
        return ("no violation detected, but " + limit) if lo <= 0 else (
            f"eps >= {lo:.2f} at {conf}, within the claimed {eps:g}; but " + limit)
    ceiling_txt = (f"with this many {trials.plural} the audit could not have shown more than "
                   f"eps_max = {ceiling:.2f}")
    if lo <= 0:
        if auc_is_real(row, alpha):  # never "no signal" beside an AUC the test shows is real
            signal = (f"the attack's test AUC {auc:.2f} is real (it differs from 0.5 at "
                      f"{conf}) but the threshold chosen on the validation split did not carry "
                      f"over to a bound on the test split; more {trials.plural} (a larger "
                      "validation split) may turn it into one")
        elif no_signal(row) or abs(auc - 0.5) < 0.05:
            signal = f"the attack found no signal (AUC {auc:.2f})"
        else:
            signal = f"the attack's AUC is {auc:.2f}"
        return f"no violation detected of claimed eps = {eps:g}: {signal}; {ceiling_txt}"
    return (f"claimed eps = {eps:g}; this audit shows eps >= {lo:.2f} at {conf}, within the "
            f"claim: no violation detected; {ceiling_txt}")


def renders(row: Mapping[str, Any]) -> bool:
    """Whether :func:`verdict` writes the sentence of the audit ``row`` describes: every
    kind but a one-run audit, whose sentence names what its row does not keep (the guesses'
    confidence level, the queries per canary) and is written by its run."""
    return trials_of(row).kind != "canaries"


def in_words(row: Mapping[str, Any], say: Wording = FLAGS) -> str:
    """The verdict of a stored summary ``row``, with the settings it advises named in
    ``say``'s words: :func:`verdict` where it :func:`renders` the row, else the sentence
    its run stored (a one-run audit's, which advises no setting)."""
    return verdict(row, say=say) if renders(row) else str(row.get("verdict") or "")


def _beyond_mechanism(row: Mapping[str, Any]) -> float | None:
    """eps_true when the audit's bound is above it (:func:`verdict_line`'s "the audit
    exceeds the mechanism"), else None."""
    true, top = number(row.get("eps_true")), audited_eps(row)
    return true if 0 <= true < top else None


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


def violated(row: Mapping[str, Any]) -> bool:
    """Whether the audit's bound (:func:`audited_eps`) exceeds the claimed eps: the one
    rule for "VIOLATED" (a CP bound within the claim beside a curve bound above it is a
    violation at the same confidence)."""
    return audited_eps(row) > number(row.get("epsilon"))


def caution(row: Mapping[str, Any]) -> bool:
    """Whether the verdict, though not VIOLATED, is no clean "no violation detected": no
    result, a bound above the mechanism's eps_true (a leak outside the privacy events), or
    a ceiling eps_max at or below the claim (the audit could not have shown a violation).
    The report and the notebook box show these amber: green read as a pass."""
    if violated(row) or not math.isnan(number(row.get("eps_anytime"))):
        return False
    if trials_of(row).kind == "canaries":  # its bound is eps_one_run: it has no eps_cp or AUC
        return _beyond_mechanism(row) is not None
    eps, ceiling = number(row.get("epsilon")), number(row.get("eps_max"))
    if math.isnan(number(row.get("eps_cp"))) or math.isnan(number(row.get("auc"))):
        return True
    return _beyond_mechanism(row) is not None or (not math.isnan(ceiling) and ceiling <= eps)


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
        shown = f"{true:.2f}" if true < 1e4 else f"{true:.3g}"  # updated's 2.02e+07, not 8 digits
        mech = f"mechanism {shown}" + (": the accountant under-counts" if true > eps else "")
    # an audit above eps_true measures a leak the mechanism's events do not carry (e.g.
    # smartnoise's bounds="data" pre-pass): say so, or "mechanism 0.00" reads as a contradiction
    outside = ("; the audit exceeds the mechanism: the leak is outside the privacy events "
               "(non-private preprocessing or a released value the accountant never saw)"
               if _beyond_mechanism(row) is not None else "")
    if lo > eps:
        return f"claimed {eps:.2f}, {mech}; audited >= {lo:.2f}: VIOLATED{outside}{power}"
    ratio = None if outside else tightness(row)
    share = "" if ratio is None else f" ({100 * ratio:.0f} % of what it spends)"
    return f"claimed {eps:.2f}, {mech}; audited >= {lo:.2f}{share}{outside}{power}"
