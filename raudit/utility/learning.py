"""Does a generator learn from its data? Its utility against its own data-free control.

``raudit utility --control coin`` runs every sweep point twice: the real fits, and the
same fits (same seeds: same initialisation, partition and z draws) with every released
label or answer replaced by a fair coin (:mod:`raudit.generators.pategan.core.aggregation`,
:mod:`raudit.generators.gpate.dpgradagg`). Whatever utility the control reaches comes
from the generator's architecture, its public metadata and chance, not from the votes.
``--control shuffle`` (any generator) trains the control fits on the table with its labels
permuted instead (:mod:`raudit.utility.controls`); the tests below are the same.

The test is a **paired one-sided t-test over fits**:

* the unit is the fit: the S samples of one fit share its generator, so treating the
  F x S datasets as independent (as a Welch test over them would) overstates n and
  makes the test anti-conservative;
* real fit f and control fit f share their seed, so the part of the utility that is a
  lottery over initialisations (the dominant variance on these tables: best-of-25 is
  a draw) is common to both and cancels in the difference; a Welch test over fits
  would keep it and lose power for nothing.

With D_f = mean_real(f) - mean_control(f) over the F fits present in both arms,
t = mean(D) / (sd(D) / sqrt F), df = F - 1, p = P(T_df >= t). The *learning threshold*
is the smallest eps of a sweep whose p is below alpha (0.05: one-sided 95 %); None
("> the largest eps swept") if there is none.

A point counts only if its real fits spent no more than its eps: a data-dependent analysis
(``fixed -o analysis=data-dependent``) releases its eps_hat after training, and it can land
far above the nominal eps when the votes were split (cervical, eps 10: eps_hat about 1,800).
Such a point's test is still shown, flagged ``over_eps``, with the largest eps_hat of its
fits, but "learns at eps" would be false there.

A setting run in blocks (one root seed per run, e.g. a campaign's ``seed`` grid) is tested
together by :func:`pooled_controls`: the same paired t over every fit of every run, paired
by the fit's seed (which the real fit and its control share). All functions here are pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from raudit.utility import controls

ALPHA = 0.05
#: relative slack before a point's eps_hat counts as above its eps (float rounding of the
#: calibrations, which land at eps - 1e-9 or so, never counts)
OVER_TOL = 1e-6


@dataclass(frozen=True)
class PairedTest:
    """Real minus control over paired fits: mean difference, its standard error, t, df, p."""

    n: int
    diff: float
    se: float
    t: float
    p: float

    @property
    def df(self) -> int:
        return self.n - 1


def paired_one_sided(real: Mapping[int, float], control: Mapping[int, float]) -> PairedTest:
    """H0: E[real - control] <= 0 against H1: > 0, over the fit indices in both.

    p is exact for normal differences (Student's t, df = n - 1). n < 2 gives p = NaN
    (no test). Differences that are all equal (sd 0) give p = 0 if they are positive
    (every pair improves by the same amount) and 1 otherwise (e.g. both arms stuck at
    0.5 on every fit)."""
    keys = sorted(set(real) & set(control))
    d = np.array([float(real[k]) - float(control[k]) for k in keys], dtype=float)
    d = d[np.isfinite(d)]
    n = int(d.size)
    if n < 2:
        return PairedTest(n, float(d.mean()) if n else math.nan, math.nan, math.nan, math.nan)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    if se == 0.0:  # exact ties: no spread to test against
        return PairedTest(n, mean, 0.0, math.inf if mean > 0 else -math.inf if mean < 0 else 0.0,
                          0.0 if mean > 0 else 1.0)
    t = mean / se
    return PairedTest(n, mean, se, t, float(stats.t.sf(t, n - 1)))


def learning_threshold(curve: Iterable[tuple[float, float]], alpha: float = ALPHA) -> float | None:
    """The smallest eps whose one-sided p-value is below ``alpha``; None if none is.

    ``curve``: (eps, p) pairs in any order; NaN p-values (too few fits) never count."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    hits = [float(e) for e, p in curve if p is not None and np.isfinite(p) and p < alpha]
    return min(hits) if hits else None


def fit_means(rows: pd.DataFrame, setting: str = "B", metric: str = "auroc") -> dict[int, float]:
    """Per fit: the mean of ``metric`` in ``setting`` over its samples and classifiers
    (only ``ok`` rows)."""
    sel = rows[(rows["status"] == "ok") & (rows["setting"] == setting) & (rows["metric"] == metric)]
    return {int(f): float(v) for f, v in sel.groupby("fit_index")["value"].mean().items()
            if np.isfinite(v)}


def single_class_share(rows: pd.DataFrame) -> float | None:
    """Share of synthetic datasets (fit x sample) whose label has one class.

    From ``label_share`` (schema 9); older stores: from Setting B's ``single_class``
    (the classifiers' training labels are the synthetic table's there)."""
    ok = rows[rows["status"] == "ok"]
    if "label_share" in ok and ok["label_share"].notna().any():
        per = ok.dropna(subset=["label_share"]).drop_duplicates(["trial_id", "sample_index"])
        share = per["label_share"].to_numpy(dtype=float)
        return float(np.mean((share <= 0.0) | (share >= 1.0)))
    b = ok[ok["setting"] == "B"]
    if b.empty or b["single_class"].isna().all():
        return None
    return float(b.groupby(["trial_id", "sample_index"])["single_class"].any().mean())


def curve_rows(points: Sequence[Mapping], alpha: float = ALPHA) -> dict:
    """Learning curve and threshold from the analysed sweep points of one generator and
    dataset: pairs each real point with its control (same config but the control) and
    returns {"rows": [{epsilon, eps_hat_max, over_eps, real_mean, real_se, control_mean,
    control_se, diff, se, p, fits}], "threshold": eps or None, "alpha": alpha}; rows
    ``over_eps`` (real fits released an eps_hat above eps) never set the threshold."""
    ctrl = {p["pair_key"]: p for p in points if p.get("control")}
    out = []
    for p in points:
        if p.get("control") or p["pair_key"] not in ctrl or p.get("status") != "ok":
            continue
        c = ctrl[p["pair_key"]]
        test = paired_one_sided(p.get("fit_means") or {}, c.get("fit_means") or {})
        spent = p.get("eps_hat_max")
        over = spent is not None and np.isfinite(spent) and spent > p["epsilon"] * (1 + OVER_TOL)
        out.append({"label": p["label"], "epsilon": p["epsilon"],
                    "eps_hat_max": spent, "over_eps": bool(over),
                    "real_mean": p.get("auroc_B_mean"), "real_se": p.get("auroc_B_se"),
                    "control_mean": c.get("auroc_B_mean"), "control_se": c.get("auroc_B_se"),
                    "real_single_class": p.get("single_class_share"),
                    "control_single_class": c.get("single_class_share"),
                    "diff": test.diff, "se": test.se, "p": test.p, "fits": test.n})
    return {"rows": out, "alpha": alpha, "control": controls.kind_of(points),
            "threshold": learning_threshold(((r["epsilon"], r["p"]) for r in out
                                             if not r["over_eps"]), alpha)}


# -- pooling runs of one setting (blocks at several root seeds) ---------------------------

#: the columns that make two runs' points the same setting (their root seed apart); the
#: control arm differs from its real arm only in ``control``
SETTING = ("impl", "dataset", "epsilon", "delta", "teachers", "preset", "conditional",
           "options_json")


def seed_means(rows: pd.DataFrame, setting: str = "B", metric: str = "auroc") -> dict[int, float]:
    """Per fit seed: the mean of ``metric`` in ``setting`` over samples and classifiers.

    A fit's seed derives from its run's root seed and its fit index only (raudit.seeds), so
    it names the same initialisation, partition and z draws in a real fit, in its coin
    control and in any other configuration run at the same root: the key that pairs fits
    across runs, where ``fit_index`` (0..F-1 in every run) would collide."""
    sel = rows[(rows["status"] == "ok") & (rows["setting"] == setting) & (rows["metric"] == metric)]
    return {int(s): float(v) for s, v in sel.groupby("seed")["value"].mean().items()
            if np.isfinite(v)}


def pooled_controls(rows: pd.DataFrame, alpha: float = ALPHA) -> list[dict]:
    """Real vs its control pooled over every run of a setting (same :data:`SETTING`, any
    root seed): the paired one-sided t over all their fit seeds. One record per setting and
    control kind that has both arms: {impl, dataset, epsilon, options_json, control, runs,
    jobs, fits, real_mean, control_mean, diff, se, p, learns, eps_hat_max, over_eps}. A run
    at one root seed gives the per-run test of :func:`curve_rows`; this is the test of the
    blocks together."""
    syn = rows[rows["impl"] != "real"]
    if syn.empty:
        return []
    syn = syn.assign(_arm=syn["control"].astype(object).where(syn["control"].notna(), ""))
    keys = list(SETTING)
    out = []
    for key, g in syn.groupby(keys, dropna=False, sort=True):
        real = g[g["_arm"] == ""]
        if real.empty:
            continue
        for kind in sorted(k for k in g["_arm"].unique() if k):
            out.append({**dict(zip(keys, key)), "control": kind,
                        **_pooled(real, g[g["_arm"] == kind], float(g["epsilon"].iloc[0]), g, alpha)})
    return out


def _pooled(real: pd.DataFrame, ctrl: pd.DataFrame, eps: float, g: pd.DataFrame,
            alpha: float) -> dict:
    """One setting's pooled test of ``real`` against one control arm ``ctrl``."""
    rm, cm = seed_means(real), seed_means(ctrl)
    test = paired_one_sided(rm, cm)
    both = sorted(set(rm) & set(cm))
    spent = real["eps_hat"].max()
    over = bool(np.isfinite(spent) and spent > eps * (1 + OVER_TOL))
    jobs = sorted({str(j) for j in g["job"].dropna()}) if "job" in g else []
    return {"runs": int(real["run_id"].nunique()), "jobs": jobs,
            "fits": test.n, "real_mean": float(np.mean([rm[s] for s in both])) if both else None,
            "control_mean": float(np.mean([cm[s] for s in both])) if both else None,
            "diff": test.diff, "se": test.se, "p": test.p, "eps_hat_max": float(spent),
            "over_eps": over,
            "learns": bool(not over and np.isfinite(test.p) and test.p < alpha)}
