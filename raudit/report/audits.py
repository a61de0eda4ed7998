"""The audit part of a report: verdicts, the eps_emp figure (the study's figure 5), and
per audit the attack's ROC curve and the two worlds' score distributions.

The attack's scores are not stored: they are rebuilt from the shadow table, which the
audit's analysis is a pure function of (raudit.audit.analyse: canonical row order, the
attack seed derived from the summary's root seed). The rebuilt test AUC is compared with
the stored one, and a figure whose scores do not reproduce it is left out and said so.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from raudit import seeds
from raudit.audit import analyse as an
from raudit.audit.estimators import (ESTIMATORS, bound_names, column_of, estimate_lines,
                                     estimate_names, values_of)
from raudit.audit.game import derive_seed
from raudit.audit.threat_model import read_models, trials_of
from raudit.audit.verdict import ALPHA, caution, in_words, violated
from raudit.wording import current
from raudit.plots import pyplot, save, slug
from raudit.report.load import Results
from raudit.report.model import Figure, Para, Section, Table, Verdict
from raudit.results.convert import number

# models, models_ok and missing all count both worlds (the summary's shadow_models is per
# world: 1000 beside models_ok 2000 read as twice as many models finished as were asked)
HEAD = ["job", "impl", "attack", "features", "dataset", "target", "epsilon", "delta",
        "models", "models_ok", "missing", "auc", "tpr", "fpr"]
MIDDLE = ["eps_max", "saturated", "eps_true", "tightness", "threat_model"]
TAIL = ["mu_gdp", "synthetic_protocol", "seed"]


def columns() -> list[str]:
    """The summary table's columns: the bounds first (eps_cp, the verdict's, leading),
    their ceiling and the mechanism's eps_true, then the estimates (full values; the
    Estimates table shows them capped and flagged)."""
    return (HEAD + [column_of(n) for n in bound_names()] + MIDDLE
            + [column_of(n) for n in estimate_names()] + TAIL)


def summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The audit summaries as shown: :func:`columns`, with ``models`` (both worlds, as
    models_ok and missing count) in place of the per-world shadow_models."""
    models = rows["shadow_models"] * 2 if "shadow_models" in rows else None
    return rows.assign(models=models).reindex(columns=columns())


def estimates_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per audit, one column per estimate, as ``raudit audit`` prints it:
    capped at the ceiling and flagged, or the reason it is left out."""
    out = []
    for _, r in rows.iterrows():
        d = {k: (None if isinstance(v, float) and v != v else v) for k, v in r.to_dict().items()}
        shown = dict(estimate_lines(d, values_of(d)))
        out.append({"audit": label(r), **{ESTIMATORS.get(n).label: shown.get(
            ESTIMATORS.get(n).label, "") for n in estimate_names()}})
    return pd.DataFrame(out)


def summaries(res: Results) -> pd.DataFrame:
    """The latest summary row of each audit (a resumed audit appends a newer one), with a
    column per registered estimator (from the ``estimates`` table where the summary
    table has none)."""
    s = res.table("summary")
    if s.empty:
        return s
    s = s.assign(job=s["job"].astype(object).where(s["job"].notna(), ""))
    s = s.sort_values("created_at", kind="stable")
    s = s.drop_duplicates(["job", "audit_id"], keep="last").reset_index(drop=True)
    est = res.table("estimates")
    missing = [n for n in ESTIMATORS.names() if column_of(n) not in s]
    if missing and not est.empty:
        est = est.assign(job=est["job"].astype(object).where(est["job"].notna(), ""))
        est = est[est["estimator"].isin(missing)].sort_values("created_at", kind="stable")
        wide = est.pivot_table(index=["job", "audit_id"], columns="estimator", values="eps_lo",
                               aggfunc="last")
        wide.columns = [column_of(n) for n in wide.columns]
        s = s.merge(wide.reset_index(), on=["job", "audit_id"], how="left")
    return s


def label(row) -> str:
    job = f"[{row['job']}] " if row.get("job") else ""
    feats = f" ({row['features']})" if row["features"] not in (None, row["attack"]) else ""
    return (f"{job}{row['impl']} vs {row['attack']}{feats} on {row['dataset']}, "
            f"target {row['target']}, eps {row['epsilon']:g}")


def rebuild(shadow: pd.DataFrame, row) -> dict | str:
    """{"val"|"test": (scores oriented as the threshold was, labels)} and the raw test AUC,
    or why not: a split lacks a world (the audit had no bound either), or no root seed."""
    from sklearn.metrics import roc_auc_score

    if pd.isna(row.get("seed")):
        return "the summary has no root seed (written before raudit recorded it)"

    mine = shadow[(shadow["audit_id"] == row["audit_id"])
                  & (shadow["job"].astype(object).fillna("") == row["job"])]
    df = an.ok_rows(mine)
    parts = {s: df[df["split"] == s] for s in ("train", "val", "test")}
    if not all(an._two_classes(an.matrix(p)[1]) for p in parts.values()):
        return "some split has no finished shadow model of one world"
    view = row.get("feature_view")
    if isinstance(view, str) and view:  # the audit analysed the view it chose
        slices = _views(row, df)
        if isinstance(slices, str):
            return slices
        parts = {k: an.restrict(p, slices[view]) for k, p in parts.items()}
    seed = derive_seed(int(row["seed"]), seeds.ATTACK) % 2**32
    scored = an.attack_scores(parts["train"], {"val": parts["val"], "test": parts["test"]}, seed)
    flip = row.get("direction") == "inverted"
    out = {k: ((1.0 - s) if flip else s, y) for k, (s, y) in scored.items()}
    out["auc"] = float(roc_auc_score(scored["test"][1], scored["test"][0]))
    return out


def _views(row, shadow: pd.DataFrame) -> dict[str, slice] | str:
    """The feature views the audit of ``row`` chose among, or why they cannot be had: an
    attack's views (ensemble) need its context, so its dataset must load here."""
    if read_models(row.get("threat_model")):
        from raudit.audit.whitebox import views

        return views(row["impl"])
    from raudit import data
    from raudit.audit.chunk import attack_context
    from raudit.audit.game import default_context, find_target
    from raudit.attacks import get as get_attack

    try:
        ds = data.load(row["dataset"])
        target = find_target(ds.train, shadow["target"].iloc[0], row["dataset"])
        spec = {"target": target, "context": default_context(int(row["seed"]))}
        slices = get_attack(row["attack"]).view_slices(attack_context(ds.train, spec, ds.test))
    except Exception as exc:  # noqa: BLE001 - any failure is a reason shown in the report
        return f"the views of attack {row['attack']!r} need its dataset here ({exc})"
    return slices if slices is not None else f"attack {row['attack']!r} has no views"


def eps_figure(rows: pd.DataFrame, path: Path) -> Path:
    plt = pyplot()
    n = len(rows)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.1 * n + 4), 4.2))
    x = np.arange(n)
    cp = rows["eps_cp"].map(number).to_numpy()
    ax.bar(x, np.nan_to_num(cp), width=0.55, color="#4477aa",
           label=f"eps_cp: true eps >= this at {100 * (1 - ALPHA):.0f}% confidence")
    for i, (_, r) in enumerate(rows.iterrows()):
        ax.hlines(number(r["eps_max"]), i - 0.38, i + 0.38, colors="k", lw=2,
                  label="eps_max: the ceiling of eps_cp at this many test models"
                  if i == 0 else None)
        ax.hlines(number(r["epsilon"]), i - 0.45, i + 0.45, colors="red", linestyles="--",
                  label="claimed eps" if i == 0 else None)
    # Jeffreys and Bayes are estimates, not bounds: beside the bar, capped at eps_max as
    # the tables cap them (a marker above the ceiling line read as a breach; issue 49)
    ceiling = rows["eps_max"].map(number).to_numpy()
    for col, dx, marker, colour, name in (("eps_jeffreys", 0.18, "^", "#ee7733", "Jeffreys"),
                                          ("eps_bayes", 0.3, "s", "#009988", "Bayes")):
        v = rows[col].map(number).to_numpy() if col in rows else np.full(n, np.nan)
        ax.scatter(x + dx, np.where(np.isnan(ceiling), v, np.minimum(v, ceiling)), marker=marker,
                   color=colour, zorder=3, label=f"{name} estimate (an assumption, not a "
                   "bound; capped at eps_max)")
    names = [f"{r['impl']}\n{r['attack']}" + (f"\n{r['job']}" if r["job"] else "")
             for _, r in rows.iterrows()]
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel("empirical epsilon")
    ax.set_ylim(bottom=0)
    # The one-sided interval [eps_cp, inf): an arrow up, its length in the plot's scale, and
    # a y range that holds its head: matplotlib draws no annotation whose head lies outside
    # the axes, so the tallest bar (a saturated audit's, at its ceiling) lost its arrow
    top = ax.get_ylim()[1]
    for i in np.flatnonzero(~np.isnan(cp)):
        ax.annotate("", xy=(i, cp[i] + 0.12 * top), xytext=(i, cp[i]),
                    arrowprops={"arrowstyle": "->", "color": "#223355"})
    ax.set_ylim(0, max(top, 1.05 * (np.nanmax(cp) + 0.12 * top)) if (~np.isnan(cp)).any()
                else top)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path)


def roc_figure(row, sc: dict, path: Path) -> Path:
    from sklearn.metrics import roc_curve

    plt = pyplot()
    s, y = sc["test"]
    fpr, tpr, _ = roc_curve(y, s)
    eps, delta = number(row["epsilon"]), number(row["delta"])
    delta = 0.0 if math.isnan(delta) else delta
    f = np.linspace(0, 1, 401)
    bound = np.minimum(np.minimum(np.exp(eps) * f + delta, 1 - np.exp(-eps) * (1 - delta - f)), 1)
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    # drawn over the frame, unclipped and thick: a perfect attack's curve runs along the
    # left and top edges and would otherwise hide under them
    ax.plot(fpr, tpr, color="#4477aa", lw=2.5, zorder=4, clip_on=False,
            label="attack on the test models")
    ax.plot([0, 1], [0, 1], color="grey", ls=":", lw=1, label="random guess")
    ax.plot(f, bound, color="red", ls="--", lw=1, label=f"the most eps = {eps:g} allows")
    ax.scatter([number(row["fpr"])], [number(row["tpr"])], color="k", zorder=3,
               label="threshold chosen on validation")
    ax.set_xlabel("false positive rate (out models called in)")
    ax.set_ylabel("true positive rate (in models called in)")
    ax.set_xlim(-0.02, 1.0)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, loc="lower right")
    return save(fig, path)


def scores_figure(row, sc: dict, path: Path) -> Path:
    plt = pyplot()
    s, y = sc["test"]
    bins = np.linspace(0, 1, 21)
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    # side by side in each bin, not see-through on top of each other: where the worlds
    # overlap a blended third colour would appear that no legend entry names
    ax.hist([s[y == 0], s[y == 1]], bins=bins, color=["#4477aa", "#cc3311"],
            label=[f"target out ({int((y == 0).sum())} models)",
                   f"target in ({int((y == 1).sum())} models)"])
    t = number(row["threshold"])
    if not math.isnan(t):
        ax.axvline(t, color="k", ls="--", lw=1, label="threshold: 'in' at or right of it")
    flip = " (1 - P(in): the direction chosen on validation)" if row.get(
        "direction") == "inverted" else ""
    ax.set_xlabel("attack score P(in)" + flip, fontsize=8)
    ax.set_ylabel("test shadow models")
    ax.legend(fontsize=7)
    return save(fig, path)


#: the audit kinds (raudit.audit.threat_model.trials_of) whose trials are rows of the shadow
#: table, so that their attack's scores, its ROC curve among them, can be rebuilt
STORED = frozenset({"models", "files"})

_HOW = {
    "models": "A shadow-model audit trains shadow models with the target record in (D_in) and "
              "out (D_out) of the training data, lets an attack guess which from each model's "
              "synthetic data (white-box: also from the trained model), and turns its errors "
              "on the test models into a lower bound on the generator's real epsilon.",
    "files": "A data-only audit reads synthetic datasets made elsewhere from D_in and D_out "
             "(one file per model, nothing trained here), lets an attack guess which world "
             "each came from, and turns its errors on the test files into a lower bound on "
             "the generator's real epsilon.",
    "mechanism": "A transcript or active audit trains no shadow model: each trial draws what "
                 "the mechanism releases (its noisy votes, or DP-SGD's noisy gradient sums) "
                 "for worst-case neighbours from its exact distribution (active: on the "
                 "auditor's canary queries), a likelihood-ratio test guesses the world, and its "
                 "errors on the test trials give the lower bound on the mechanism's epsilon. "
                 "Its trials are not stored, so it has no ROC curve or score histogram.",
    "canaries": "A one-run audit (Steinke et al. 2023) makes one run with canary records, each "
               "in with probability 1/2, guesses which were in, and turns the number of right "
               "guesses into a lower bound on epsilon that assumes pure DP. It has no test "
               "models, so no ROC curve or score histogram.",
}


def how_they_ran(kinds: set[str]) -> list[str]:
    """What the report's audits did, one paragraph per kind present (in a fixed order),
    then what a bound above the claim means."""
    return [_HOW[k] for k in _HOW if k in kinds] + [
        "A bound above the claimed epsilon means the generator leaks more than it promises."]


def section(res: Results, out: Path) -> Section | None:
    rows = summaries(res)
    if rows.empty:
        return None
    sec = Section("Audits")
    kinds = {trials_of(r.to_dict()).kind for _, r in rows.iterrows()}
    for text in how_they_ran(kinds):
        sec.add(Para(text))
    for _, r in rows.iterrows():
        line = r.get("verdict_line")  # claimed / mechanism / audited (schema 11 on)
        row = r.to_dict()
        sec.add(Verdict(label(r), in_words(row, current()) + (
            f" [{line}]" if isinstance(line, str) and line else ""), violated(row),
            caution(row)))
    table = summary_table(rows)
    sec.add(Table("Audit summaries", table, "audits.csv", "models, models_ok and missing "
        "count both worlds" + (" (a transcript or active audit's: its mechanism-only trials; a "
                               "one-run audit's: its one run)" if kinds & {"mechanism", "canaries"}
                               else "") + ". " + " ".join(
        f"{column_of(n)}: {ESTIMATORS.get(n).guarantee}." for n in ESTIMATORS.names())
        + f" alpha = {ALPHA:g}. mu_gdp bounds mu-Gaussian DP; eps_max is the bound a perfect "
        "attack would reach with these test models. Only the bounds (eps_cp, eps_curve) "
        "decide the verdict; the estimates after eps_max hold under their assumptions."))
    sec.add(Table("Estimates (not bounds)", estimates_table(rows), "estimates.csv",
                  "Each estimate holds only under its assumption: capped at eps_max and "
                  "flagged where it passes the ceiling or the attack made no error, left out "
                  "where the mechanism's declared noise contradicts its assumption."))
    png = eps_figure(rows, out / "figures" / "eps_emp.png")
    sec.add(Figure("Empirical epsilon per implementation and attack", png.relative_to(
        out).as_posix(), "Bars: eps_cp, with the arrow for its one-sided 90% confidence "
        "interval [eps_cp, infinity). Black bars: eps_max, the Clopper-Pearson ceiling (the "
        "most eps_cp can show with this many test models). Markers beside each bar: the "
        "Jeffreys and Bayes estimates (assumptions, not bounds), capped at eps_max as the "
        "tables cap them. Red dashes: the claimed eps (the study's figure 5).", wide=True))
    shadow = res.table("shadow")
    if not shadow.empty:
        shadow = shadow.assign(job=shadow["job"].astype(object).where(shadow["job"].notna(), ""))
    for _, r in rows.iterrows():
        if trials_of(r.to_dict()).kind not in STORED:
            continue  # no per-trial scores by design: how_they_ran says so once
        sc = rebuild(shadow, r) if not shadow.empty else "the folder has no shadow table"
        name = slug(r["job"], r["impl"], r["attack"], r["dataset"], r["audit_id"][:8])
        if isinstance(sc, str):
            sec.add(Para(f"{label(r)}: no ROC curve ({sc})."))
            continue
        if not math.isclose(sc["auc"], number(r["auc"]), abs_tol=1e-9):
            sec.add(Para(f"{label(r)}: the attack's scores rebuilt from the shadow table give "
                         f"AUC {sc['auc']:.4f}, not the stored {number(r['auc']):.4f} (rows were "
                         "added after the summary, or another raudit wrote it); figures left "
                         "out."))
            continue
        roc = roc_figure(r, sc, out / "figures" / f"roc-{name}.png")
        hist = scores_figure(r, sc, out / "figures" / f"scores-{name}.png")
        sec.add(Figure(f"ROC curve: {label(r)}", roc.relative_to(out).as_posix(),
                       "A point above the red dashed curve is more than the claimed eps can "
                       "produce (before sampling error). Test AUC of the raw scores "
                       f"{sc['auc']:.3f}."))
        sec.add(Figure(f"Attack scores of the two worlds: {label(r)}",
                       hist.relative_to(out).as_posix(),
                       "Well separated histograms mean the attack tells the worlds apart."))
    return sec
