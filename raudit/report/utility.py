"""The utility part of a report: the study's tables 4, 5 and 8-12 and utility-vs-eps curves,
from the ``utility`` rows of one run or many (a campaign's jobs).

Each run (one ``run_id``, per campaign job) goes through raudit.utility.analyse, the
same analysis ``raudit utility`` prints, so the report and the command agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from raudit.plots import eps_axis, pyplot, save, slug
from raudit.report.load import Results
from raudit.report.model import Figure, Para, Section, Table, Verdict
from raudit.utility import analyse as an
from raudit.utility.learning import pooled_controls
from raudit.utility.plot import learning_vs_eps, utility_vs_eps
from raudit.utility.verdict import learning_sentence, sentence


def runs(res: Results) -> list[dict[str, Any]]:
    """One analysed result per (job, run_id), with impl, dataset and job set."""
    rows = res.table("utility")
    if rows.empty:
        return []
    rows = rows.assign(job=rows["job"].astype(object).where(rows["job"].notna(), ""))
    out = []
    for (job, run_id), g in rows.groupby(["job", "run_id"], sort=True, dropna=False):
        syn = g[g["impl"] != "real"]
        r = an.analyse(g)
        r.update(job=job, run_id=run_id, dataset=str(g["dataset"].iloc[0]),
                 impl=str(syn["impl"].iloc[0]) if len(syn) else "real")
        out.append(r)
    return out


def learning_table(results: list[dict]) -> pd.DataFrame:
    """Per run (generator x dataset) and learning curve: the learning threshold (smallest
    eps whose real mean beats its data-free control, paired one-sided t over fits at 5 %,
    or "> largest eps"), with the real and control means at eps = 1 and at the threshold."""
    recs = []
    for r in results:
        for c in r.get("learning") or []:
            rows = {row["epsilon"]: row for row in c["rows"]}
            if not rows:
                continue
            thr = c.get("threshold")
            at1, at_t = rows.get(1.0) or {}, rows.get(thr) or {}
            recs.append({
                "job": r["job"], "impl": r["impl"], "dataset": r["dataset"],
                "curve": c.get("group") or "", "control": c.get("control") or "coin",
                "eps swept": ", ".join(f"{e:g}" for e in sorted(rows)),
                "learning threshold": f"{thr:g}" if thr is not None else f"> {max(rows):g}",
                "B mean at eps 1": at1.get("real_mean"), "control at eps 1": at1.get("control_mean"),
                "p at eps 1": at1.get("p"), "B mean at threshold": at_t.get("real_mean"),
                "control at threshold": at_t.get("control_mean"),
                "fits": min(row["fits"] for row in rows.values()),
                "single-class share (real)": max((row.get("real_single_class") or 0.0)
                                                 for row in rows.values())})
    return pd.DataFrame(recs)


def pooled_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Real vs control per setting run at two or more root seeds, the runs pooled
    (:func:`raudit.utility.learning.pooled_controls`)."""
    recs = [{"impl": r["impl"], "dataset": r["dataset"], "epsilon": r["epsilon"],
             "control": r["control"], "options": r["options_json"], "jobs": ", ".join(r["jobs"]), "runs": r["runs"],
             "fits": r["fits"], "real B mean": r["real_mean"], "control B mean": r["control_mean"],
             "diff": r["diff"], "se": r["se"], "p": r["p"], "learns": r["learns"],
             "eps_hat above eps": r["over_eps"]}
            for r in (pooled_controls(rows) if not rows.empty else []) if r["runs"] >= 2]
    return pd.DataFrame(recs)


def _name(r: dict, point: dict | None = None) -> str:
    base = r["impl"] + (f" [{r['job']}]" if r["job"] else "")
    return base if point is None else f"{base} {point['label']}"


def summary_table(results: list[dict]) -> pd.DataFrame:
    recs = []
    for r in results:
        real = r.get("real") or {}
        for p in r["points"]:
            recs.append({"job": r["job"], "impl": r["impl"], "dataset": r["dataset"],
                         "point": p["label"], "status": p.get("status"),
                         "fits_ok": p.get("fits_ok"), "AUROC B": p.get("auroc_B"),
                         "AUPRC B": p.get("auprc_B"), "AUROC B mean": p.get("auroc_B_mean"),
                         "AUROC B se": p.get("auroc_B_se"), "AUROC C": p.get("auroc_C"),
                         "AUPRC C": p.get("auprc_C"), "SRA A~C": p.get("sra"),
                         "feature agreement": p.get("feature_agreement"),
                         "drop vs A": p.get("drop_vs_real"), "A AUROC": real.get("auroc"),
                         "iterations": p.get("iterations"), "eps_hat": p.get("eps_hat"),
                         "reason": p.get("reason")})
        if not r["points"] and real:
            recs.append({"job": r["job"], "impl": "real", "dataset": r["dataset"],
                         "point": "Setting A", "status": "ok", "A AUROC": real.get("auroc")})
    return pd.DataFrame(recs)


def per_classifier(results: list[dict], dataset: str, metric: str) -> pd.DataFrame:
    """Classifier rows, one column per run and sweep point (best of fits x samples, Setting
    B), Setting A first; the last row averages each column (the study's tables 5, 8-10)."""
    cols: dict[str, dict[str, float]] = {}
    for r in (r for r in results if r["dataset"] == dataset):
        real = (r.get("real") or {}).get("per_classifier", {})
        if real and "A (real)" not in cols:
            cols["A (real)"] = {n: v.get(metric) for n, v in real.items()}
        for p in r["per_classifier"]:
            if p["setting"] == "B" and p["metric"] == metric:
                key = _name(r) + ("" if len(r["points"]) == 1 else f" {p['label']}")
                cols.setdefault(key, {})[p["classifier"]] = p["best"]
    if not cols:
        return pd.DataFrame()
    from raudit import classifiers

    order = {n: i for i, n in enumerate(classifiers.STUDY_12)}
    frame = pd.DataFrame(cols)
    frame = frame.loc[sorted(frame.index, key=lambda n: (order.get(n, 99), n))]
    frame.index = [_label(n) for n in frame.index]
    frame.loc["Average"] = frame.mean(numeric_only=True)
    return frame.rename_axis("classifier").reset_index()


def _label(name: str) -> str:
    from raudit import classifiers

    try:
        return classifiers.get(name).label
    except Exception:  # noqa: BLE001 - a classifier of a plugin no longer installed
        return name


def _points(results: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{**p, "job": r["job"], "run": _name(r), "dataset": r["dataset"]}
                         for r in results for p in r["points"] if p.get("status") == "ok"])


def teacher_table(results: list[dict]) -> pd.DataFrame:
    """AUROC B per number of teachers (rows) and run (columns): the study's table 11."""
    pts = _points(results)
    if pts.empty or pts["teachers"].dropna().nunique() < 2:
        return pd.DataFrame()
    pts = pts[pts["teachers"].notna()]
    frame = pts.pivot_table(index="teachers", columns=["run", "dataset"], values="auroc_B",
                            aggfunc="mean")
    frame.columns = [f"{a} ({b})" for a, b in frame.columns]
    frame.index = frame.index.astype(int)
    return frame.reset_index()


def preset_table(results: list[dict]) -> pd.DataFrame:
    """AUROC B with the default (D) and the paper's (P) hyperparameters and the reduction
    from D to P: the study's table 12."""
    pts = _points(results)
    if pts.empty or set(pts["preset"].dropna()) < {"default", "paper"}:
        return pd.DataFrame()
    keys = ["run", "dataset", "epsilon"]
    recs = []
    for k, g in pts.groupby(keys, dropna=False):
        d = g.loc[g["preset"] == "default", "auroc_B"].mean()
        p = g.loc[g["preset"] == "paper", "auroc_B"].mean()
        recs.append({**dict(zip(keys, k)), "D (default)": d, "P (paper)": p,
                     "reduction D->P %": 100 * (d - p) / d if d else None})
    return pd.DataFrame(recs)


def eps_curves(results: list[dict], dataset: str, path: Path) -> Path | None:
    """AUROC B (best of fits x samples, mean over classifiers) vs eps, one line per run and
    other sweep axes, on one dataset: the study's figure 1. None unless two runs sweep eps."""
    lines: dict[str, list[tuple[float, float]]] = {}
    real = None
    for r in (r for r in results if r["dataset"] == dataset):
        real = real if real is not None else (r.get("real") or {}).get("auroc")
        for p in r["points"]:
            if p.get("status") == "ok" and p.get("auroc_B") is not None:
                rest = " ".join(p["label"].split(" ")[1:])
                lines.setdefault(f"{_name(r)} {rest}".strip(), []).append(
                    (p["epsilon"], p["auroc_B"]))
    lines = {k: sorted(v) for k, v in lines.items() if len({e for e, _ in v}) > 1}
    if len(lines) < 2:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    for name, pts in sorted(lines.items()):
        ax.plot(*zip(*pts), marker="o", label=name)
    if real is not None:
        ax.axhline(real, color="k", ls=":", lw=1, label="A (real)")
    ax.axhline(0.5, color="grey", lw=0.8, label="random")
    eps_axis(ax)
    ax.set_ylabel("AUROC, Setting B (best of fits x samples)")
    ax.set_title(dataset)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path)


def section(res: Results, out: Path) -> Section | None:
    results = runs(res)
    if not results:
        return None
    sec = Section("Utility")
    sec.add(Para("Settings: A trains and tests classifiers on real data, B trains on synthetic "
                 "and tests on real, C trains and tests on synthetic. AUROC and AUPRC are the "
                 "best of fits x samples per classifier, averaged over classifiers; 0.5 AUROC "
                 "is a random guess."))
    # with coin-flip controls the learning threshold is the answer the run was for: it goes
    # first, before one verdict box per sweep point pushes it thousands of pixels down
    t = learning_table(results)
    if not t.empty:
        for r in results:
            for c in r.get("learning") or []:
                if line := learning_sentence(r["impl"], r["dataset"], c, r.get("real")):
                    sec.add(Verdict("Learning", line, False))  # the line names who
        sec.add(Table("Learning threshold: utility against its data-free control", t,
                      "utility_learning.csv",
                      "Same fits, same seeds; control coin: every released vote a fair coin; "
                      "shuffle: the training labels permuted before each fit. Threshold: the "
                      "smallest eps whose Setting B AUROC mean beats the control's, paired "
                      "one-sided t over fits, p < 0.05."))
        _run_figures(sec, results, out, learning_vs_eps, "Real vs data-free control",
                     "Setting B AUROC mean ± se over fits x samples; dotted: the learning "
                     "threshold.")
        pooled = pooled_table(res.table("utility"))
        if not pooled.empty:
            sec.add(Table("Pooled over runs: one setting at several root seeds", pooled,
                          "utility_pooled.csv",
                          "The jobs' fits together (a campaign runs a setting in blocks, one "
                          "root seed per job): paired one-sided t over every fit seed. Each "
                          "block's own test is in the table above; this is one more test, "
                          "not a choice among them."))
    for r in results:
        for p in r["points"]:
            # a point with no result (its fits failed or were refused) is never a green box
            sec.add(Verdict(f"{_name(r, p)} on {r['dataset']}", sentence(
                r["impl"], r["dataset"], p, r.get("real"), subject=False),
                p.get("status") != "ok"))
    sec.add(Table("Utility per sweep point (the study's table 4)", summary_table(results),
                  "utility_summary.csv", "drop vs A: (A - B) / (A - 0.5)."))
    for ds in sorted({r["dataset"] for r in results}):
        for metric, nums in (("auroc", "5, 8"), ("auprc", "9, 10")):
            t = per_classifier(results, ds, metric)
            if not t.empty:
                sec.add(Table(f"{metric.upper()} per classifier on {ds}, Setting B, best of "
                              f"fits x samples (the study's tables {nums})", t,
                              slug("utility", ds, metric, "per_classifier") + ".csv"))
    t = teacher_table(results)
    if not t.empty:
        sec.add(Table("AUROC B per number of teachers (the study's table 11)", t,
                      "utility_teachers.csv"))
    t = preset_table(results)
    if not t.empty:
        sec.add(Table("Default vs paper hyperparameters, AUROC B (the study's table 12)", t,
                      "utility_presets.csv"))
    for ds in sorted({r["dataset"] for r in results}):
        png = eps_curves(results, ds, out / "figures" / (slug("utility_vs_eps", ds) + ".png"))
        if png is not None:
            sec.add(Figure(f"Utility vs eps on {ds}, every run", png.relative_to(out).as_posix(),
                           "Setting B, one line per run (the study's figure 1).", wide=True))
    _run_figures(sec, results, out, utility_vs_eps, "Utility vs eps",
                 "Setting B solid, C dashed, Setting A dotted (the study's figures 1, 6-9).")
    return sec


def _run_figures(sec: Section, results: list[dict], out: Path, plot, title: str,
                 caption: str) -> None:
    """One wide figure per run made by ``plot(run, path)`` (None: nothing to draw)."""
    for r in results:
        name = slug(plot.__name__, r["job"], r["impl"], r["dataset"], r["run_id"][:8])
        png = plot(r, out / "figures" / (name + ".png"))
        if png is not None:
            sec.add(Figure(f"{title}: {_name(r)} on {r['dataset']}",
                           png.relative_to(out).as_posix(), caption, wide=True))
