"""Sequential audits: train in stages, stop as soon as the answer is clear, stay honest.

An audit that looks at its bound after 50, 100, 200, ... models per world and stops
when it likes what it sees has K chances to be fooled by chance. The correction
here is alpha spending: look k (k = 1, 2, ...) is analysed at level
``alpha_k = alpha * 6 / (pi^2 k^2)``, and sum_k alpha_k = alpha, so with probability
>= 1 - alpha (the fixed-size audit's guarantee) EVERY look's bound holds at once,
whichever look the stopping rule picks, and however many looks there are. The
price is a slightly smaller bound per look (alpha_1 = 0.61 alpha, alpha_4 = 0.038 alpha).

Models are shared between looks: model i of a world has the same seeds whatever
the stage (:func:`raudit.seeds.model_seeds`), so look k re-splits the first s_k
models of each world 40/20/40 (:func:`prefix_bounds`) and only the new models are
trained.

Stopping rules (:func:`should_stop`): the anytime-valid bound of
:mod:`raudit.audit.anytime_game` exceeds the claim (``--sequential anytime``); the
interval [eps_lo, eps_hi] is narrower than ``width``; or (``until_ceiling``) the bound
fell below its ceiling, so more models would not raise it much; or the last stage was
reached.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from raudit import seeds
from raudit.audit import analyse as an
from raudit.audit.epsilon import _eps_from_upper, eps_clopper_pearson
from raudit.audit.game import split_of
from raudit.errors import ConfigError

__all__ = ["check_anytime_stages", "look_alpha", "eps_interval", "prefix_bounds", "should_stop",
           "stages"]


def stages(first: int, last: int) -> list[int]:
    """Models per world at each look: first, 2 first, 4 first, ..., capped by last."""
    if first < 5 or last < first:
        raise ConfigError(f"a sequential audit needs 5 <= first stage <= last stage; got "
                          f"{first} and {last}")
    out, s = [], first
    while s < last:
        out.append(s)
        s *= 2
    return out + [last]


def check_anytime_stages(first: int, last: int) -> None:
    """The anytime shadow-model game's stages (:mod:`raudit.audit.anytime_game`): valid
    ones, and at least two, since the first stage only trains the attack."""
    stages(first, last)  # first stage in [5, shadow models]
    if first == last:
        raise ConfigError("--sequential anytime needs at least two stages (the first "
                          "one only trains the attack): -S must exceed --first-stage")


def look_alpha(alpha: float, k: int) -> float:
    """The level of look k (1-based): alpha 6 / (pi^2 k^2), summing to alpha over k >= 1."""
    if k < 1:
        raise ConfigError(f"looks are numbered from 1, got {k}")
    return alpha * 6.0 / (math.pi ** 2 * k * k)


def eps_interval(tp: int, fn: int, tn: int, fp: int, *, delta: float, alpha: float
                 ) -> tuple[float, float]:
    """(eps_lo, eps_hi): the CP lower bound, and the same formula on the LOWER CP limits
    of the two rates (the most eps the counts are consistent with at this level)."""
    from scipy import stats

    lo = eps_clopper_pearson(tp, fn, tn, fp, delta=delta, alpha=alpha)
    tail = alpha / 4.0

    def lower(x, n):
        return float(stats.beta.ppf(tail, x, n - x + 1)) if x > 0 else 0.0

    a, b = lower(fp, fp + tn), lower(fn, fn + tp)
    hi = float(_eps_from_upper(np.float64(a), np.float64(b), delta)) if min(a, b) > 0 else math.inf
    return float(lo), hi


def prefix_bounds(shadow: pd.DataFrame, s: int, *, seed: int, delta: float, alpha: float,
                  trial_ids: set[str] | None = None) -> dict[str, Any]:
    """The audit of the first ``s`` models per world: re-split 40/20/40, refit, bound."""
    df = an.ok_rows(shadow, trial_ids)
    df = df[df["shadow_index"] < s].copy()
    df["split"] = [split_of(int(i), s) for i in df["shadow_index"]]
    parts = {k: df[df["split"] == k] for k in ("train", "val", "test")}
    counts = {"models_per_world": s, "models_ok": int(len(df)), "missing": int(2 * s - len(df))}
    if not all(0 < int(an.matrix(p)[1].sum()) < len(p) for p in parts.values()):
        return {**counts, **{k: math.nan for k in an._NAN_KEYS}, "eps_hi": math.nan,
                "saturated": False, "direction": None}
    scored = an.attack_scores(parts["train"], {"val": parts["val"], "test": parts["test"]},
                              seeds.derive_seed(seed, seeds.ATTACK) % 2**32)
    out = an.bounds(scored["val"], scored["test"], delta=delta, alpha=alpha)
    out["eps_hi"] = eps_interval(out["tp"], out["fn"], out["tn"], out["fp"], delta=delta,
                                 alpha=alpha)[1]
    return {**counts, **out}


#: ``until_ceiling``: a bound that grew less than this since the previous look has stopped growing
PLATEAU = 0.05


def should_stop(look: dict[str, Any], *, width: float | None = None,
                until_ceiling: bool = False, last: bool = False,
                previous: dict[str, Any] | None = None,
                claimed: float | None = None) -> str | None:
    """Why to stop after this look (a sentence), or None to train the next stage.

    ``width``: stop once eps_hi - eps_lo <= width. ``until_ceiling``: go on while the
    bound is at its ceiling (the number of models limits it: a perfect attack keeps
    going to the last stage); stop at the first look after the first whose bound is
    below its ceiling and grew less than PLATEAU since ``previous`` (the attack's
    errors limit it now, and more models would not raise it much).
    ``claimed`` (``--sequential anytime``): stop once the look's anytime-valid
    ``eps_anytime`` (:mod:`raudit.audit.anytime_game`) exceeds the claim.
    """
    if claimed is not None and look.get("eps_anytime", 0.0) > claimed:
        return (f"the anytime-valid eps_lo {look['eps_anytime']:.2f} exceeds the claimed "
                f"{claimed:g} (valid at every look)")
    if last:
        return "reached the last stage"
    lo, hi = look.get("eps_cp", math.nan), look.get("eps_hi", math.nan)
    if math.isnan(lo):
        return None
    if width is not None and hi - lo <= width:
        return f"the interval [{lo:.2f}, {hi:.2f}] is narrower than {width:g}"
    if until_ceiling and previous is not None and not look.get("saturated"):
        before = previous.get("eps_cp", math.nan)
        if not math.isnan(before) and lo <= before + PLATEAU:
            return (f"the bound {lo:.2f} is below its ceiling {look.get('eps_max', math.nan):.2f} "
                    f"and grew less than {PLATEAU} since the last look ({before:.2f})")
    return None
