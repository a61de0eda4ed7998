"""The anytime-valid stopping rule of a black-box sequential audit (``--sequential anytime``).

The black-box game trains shadow models in stages (:mod:`raudit.audit.sequential`:
s_1, 2 s_1, 4 s_1, ... models per world). The e-process of :mod:`raudit.audit.anytime`
needs outcomes whose guess rule is fixed before the trial is seen, so:

* the models of stage 1 only train the first rule (they are never scored);
* the models of stage j >= 2 (shadow indices s_{j-1} .. s_j - 1) are guessed by a rule
  made from the models of the earlier stages alone: the attack fitted on the first
  2/3 of them, its threshold (and direction) the most accurate on the last 1/3;
* model i of world "in" and model i of world "out" form a pair whose outcome is
  X = (right on "in" + right on "out") / 2 in [0, 1]. Under an (eps, delta) claim,
  for any rule fixed in advance, E[X] = (TPR + TNR) / 2 <= q0 = (e^eps + delta) /
  (1 + e^eps) (the kink of the privacy region), so the wealth of
  :func:`raudit.audit.anytime.wealth` is a test supermartingale over the pairs in
  stage order and eps_lo read at every look is valid at every look (Ville), whatever
  stopping rule reads it. A pair with a failed model is dropped (failures do not see
  the guess).

The audit stops at the first look whose eps_lo exceeds the claim (VIOLATED), else at
the last stage. Everything is a pure function of the stored shadow rows and the seed:
a resumed audit reads the same looks.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from raudit import seeds
from raudit.audit import analyse as an
from raudit.audit.anytime import eps_lower_at

__all__ = ["anytime_look", "best_rule", "lower_bound_of_stages", "pair_outcomes"]


def best_rule(scores: np.ndarray, labels: np.ndarray) -> tuple[float, int]:
    """(threshold, direction): guess "in" when direction * (score - threshold) > 0, the
    most accurate balanced rule ((TPR + TNR) / 2) on these scores."""
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels)
    cands = np.unique(scores)
    cands = np.concatenate([[cands[0] - 1.0], (cands[:-1] + cands[1:]) / 2, [cands[-1] + 1.0]])
    pos, neg = scores[labels == 1], scores[labels == 0]
    tpr = (pos[None, :] > cands[:, None]).mean(axis=1)
    fpr = (neg[None, :] > cands[:, None]).mean(axis=1)
    acc = (tpr + 1 - fpr) / 2
    i_up, i_down = int(np.argmax(acc)), int(np.argmin(acc))
    if acc[i_up] >= 1 - acc[i_down]:
        return float(cands[i_up]), 1
    return float(cands[i_down]), -1


def pair_outcomes(score_in: pd.Series, score_out: pd.Series, rule: tuple[float, int]
                  ) -> np.ndarray:
    """X per shadow index present in both worlds (index order): half a point per right guess."""
    t, d = rule
    both = score_in.index.intersection(score_out.index).sort_values()
    right_in = d * (score_in.loc[both].to_numpy() - t) > 0
    right_out = ~(d * (score_out.loc[both].to_numpy() - t) > 0)
    return (right_in.astype(float) + right_out.astype(float)) / 2.0


def _stage_outcomes(df: pd.DataFrame, lo: int, hi: int, seed: int) -> np.ndarray:
    """Outcomes of the pairs with index in [lo, hi), the rule made from indices < lo."""
    past = df[df["shadow_index"] < lo]
    now = df[(df["shadow_index"] >= lo) & (df["shadow_index"] < hi)]
    cut = max(1, (2 * lo) // 3)
    fit, val = past[past["shadow_index"] < cut], past[past["shadow_index"] >= cut]
    if now.empty or not all(0 < int(an.matrix(p)[1].sum()) < len(p) for p in (fit, val)):
        return np.zeros(0)  # too many failures to make a rule: this stage scores nothing
    scored = an.attack_scores(fit, {"val": val, "now": now}, seed)
    rule = best_rule(*scored["val"])
    s, y = scored["now"]
    idx = now["shadow_index"].to_numpy()
    return pair_outcomes(pd.Series(s[y == 1], index=idx[y == 1]),
                         pd.Series(s[y == 0], index=idx[y == 0]), rule)


def lower_bound_of_stages(outcomes: list[np.ndarray], *, alpha: float, delta: float) -> float:
    """eps_lo of the confidence sequence over the stages' pair outcomes (in order), read
    at the end of each stage: the running largest, valid at every look."""
    c = np.concatenate(outcomes) if outcomes else np.zeros(0)
    looks = [int(e) for e in np.cumsum([len(o) for o in outcomes]) if e > 0]
    return float(eps_lower_at(c, looks, alpha=alpha, delta=delta)[-1]) if looks else 0.0


def anytime_look(shadow: pd.DataFrame, stages: list[int], k: int, *, seed: int, delta: float,
                 alpha: float, claimed: float, trial_ids: set[str] | None = None) -> dict:
    """The anytime-valid look k (1-based) of a staged black-box audit: eps_lo after the
    pairs of stages 2..k, and whether it rejects the claim."""
    df = an.ok_rows(shadow, trial_ids)
    outcomes = []
    for j in range(1, k):  # stage j + 1 (0-based j) is scored by a rule of stages <= j
        x = _stage_outcomes(df, stages[j - 1], stages[j],
                            seeds.derive_seed(seed, seeds.ATTACK, j) % 2**32)
        outcomes.append(x)
    lo = lower_bound_of_stages(outcomes, alpha=alpha, delta=delta)
    c = np.concatenate(outcomes) if outcomes else np.zeros(0)
    pairs = int(c.size)
    return {"eps_anytime": lo, "anytime_pairs": pairs,
            "anytime_accuracy": float(c.mean()) if pairs else math.nan,
            "rejects_claim": lo > claimed}
