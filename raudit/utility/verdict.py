"""One sentence a non-specialist can read, per sweep point of a utility run.

AUROC B (classifiers trained on synthetic data, tested on real data; best of fits x
samples, averaged over classifiers) against AUROC A (trained on real data) and 0.5 (a
random guess): ``drop = (A - B) / (A - 0.5)`` is the share of the real data's margin
over a random guess that the synthetic data loses.
"""

from __future__ import annotations

import math

from raudit.results.convert import number
from raudit.utility import controls

NEAR_RANDOM = 0.55  # AUROC B at or below this: barely better than a coin


def sentence(impl: str, dataset: str, point: dict, real: dict | None, *,
             subject: bool = True) -> str:
    """The sentence for one point (``point``: a utility result point; ``real``: Setting A);
    ``subject=False`` leaves out the leading "IMPL POINT on DATASET: " (a report's verdict
    box names it already)."""
    who = f"{impl} {point.get('label') or ''} on {dataset}: " if subject else ""
    if point.get("status") != "ok":
        return f"{who}no result ({point.get('reason') or point.get('status')})"
    b, a = number(point.get("auroc_B")), number((real or {}).get("auroc"))
    if math.isnan(b):
        return f"{who}Setting B was not run, so no utility to report"
    head = f"{who}classifiers trained on its synthetic data reach AUROC {b:.3f} on real test data"
    if b <= NEAR_RANDOM:
        head += ", close to a random guess (0.5): of little use for this task"
    if math.isnan(a):
        return head + " (Setting A, training on the real data, was not run: no comparison)"
    drop = number(point.get("drop_vs_real"))
    if math.isnan(drop) and a != 0.5:
        drop = (a - b) / (a - 0.5)
    if math.isnan(drop):
        return head + f", against {a:.3f} trained on the real data"
    if drop <= 0:
        return head + f", as good as training on the real data ({a:.3f})"
    return (head + f", against {a:.3f} trained on the real data: it loses {100 * drop:.0f}% "
            "of the real data's margin over a random guess")


#: a classifier whose Setting A AUROC is below this cannot show learning on the dataset
BLIND_AUROC = 0.6


def blind_classifiers(real: dict | None) -> dict[str, float]:
    """Classifiers that do not learn from the real table itself (Setting A AUROC below
    :data:`BLIND_AUROC`): a learning curve they score measures nothing (LR on epileptic,
    whose classes differ in spread, not mean: 0.46)."""
    per = (real or {}).get("per_classifier") or {}
    return {n: v["auroc"] for n, v in sorted(per.items())
            if v.get("auroc") is not None and v["auroc"] < BLIND_AUROC}


def _blind_note(real: dict | None) -> str:
    blind = blind_classifiers(real)
    if not blind:
        return ""
    each = ", ".join(f"{n} {a:.2f}" for n, a in blind.items())
    if len(blind) == len((real or {}).get("per_classifier") or {}):
        return (f"; but this curve measures nothing: on the real table itself (Setting A) the "
                f"classifiers score AUROC {each}, no better than chance, so no generator could "
                "show learning with them here (use -c rf or the study's 12)")
    return (f"; caution: {each} (AUROC on the real table itself, Setting A) cannot see this "
            "dataset and only dilute the mean")


def learning_sentence(impl: str, dataset: str, curve: dict, real: dict | None = None) -> str | None:
    """The data-free control's answer in words (``curve``: utility.learning.curve_rows):
    whether the released votes teach the generator anything at the swept eps. The per-point
    sentences report best-of utility, which a generator can reach with coins alone.
    ``real``: the run's Setting A, when it ran; classifiers at chance there are named."""
    line = _learning_words(impl, dataset, curve)
    return None if line is None else line + _blind_note(real)


def _source(kind: str) -> str:
    return "the data's votes" if kind == "coin" else "the link between features and label"


def _learning_words(impl: str, dataset: str, curve: dict) -> str | None:
    rows = sorted((r for r in curve.get("rows") or [] if r.get("p") is not None),
                  key=lambda r: r["epsilon"])
    if not rows:
        return None
    thr, alpha = curve.get("threshold"), curve.get("alpha", 0.05)
    group = f" ({curve['group']})" if curve.get("group") else ""
    kind = curve.get("control") or "coin"
    who = f"{impl}{group} on {dataset} against its {controls.title(kind)} ({controls.words(kind)})"
    over = [r for r in rows if r.get("over_eps") and number(r["p"]) < alpha
            and (thr is None or r["epsilon"] < thr)]
    if over:  # a pass whose fits spent more than the eps it is filed under
        r = over[0]
        return (f"{who}: at eps = {r['epsilon']:g} the real fits beat the control (mean AUROC B "
                f"{number(r['real_mean']):.3f} vs {number(r['control_mean']):.3f}, p = "
                f"{number(r['p']):.3f}) but released eps_hat up to {number(r['eps_hat_max']):.4g}: "
                "that is learning at the released eps, not at eps = "
                f"{r['epsilon']:g}; " + ("no point within its eps passes" if thr is None
                                         else f"within its eps it learns from eps = {thr:g}"))
    if thr is None:
        top = rows[-1]
        return (f"{who}: no learning shown up to eps = {top['epsilon']:g} (at eps = "
                f"{top['epsilon']:g}: mean AUROC B {number(top['real_mean']):.3f} vs "
                f"{number(top['control_mean']):.3f}, p = {number(top['p']):.2f} over {top['fits']} "
                f"fits): its utility comes from what it does without {_source(kind)}")
    at = next(r for r in rows if r["epsilon"] == thr)
    return (f"{who}: learns from eps = {thr:g} (mean AUROC B {number(at['real_mean']):.3f} vs "
            f"{number(at['control_mean']):.3f}, one-sided p = {number(at['p']):.3f} < {alpha:g} "
            f"over {at['fits']} fits)")
