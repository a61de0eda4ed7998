"""The inspect part of a report: the runs inspected, the violations table and the evidence
plots (copied beside the page, so the report folder stands alone)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from raudit.plots import slug
from raudit.report.load import Results
from raudit.report.model import Figure, Para, Section, Table

ORDER = {"violated": 0, "ok": 1, "not_checked": 2, "not_applicable": 3}


def _runs_table(res: Results) -> pd.DataFrame:
    recs = []
    for ins in res.inspects:
        for r in ins.runs:
            if not isinstance(r, dict):
                continue
            seen = r.get("teachers_seen")
            recs.append({"job": ins.job or "", "impl": r.get("impl"), "dataset": r.get("dataset"),
                         "iterations": r.get("iterations"), "eps_hat": r.get("eps_hat"),
                         "teachers_seen": json.dumps(seen) if isinstance(seen, (list, dict))
                         else seen, "settings": json.dumps(r.get("settings"), sort_keys=True)})
    return pd.DataFrame(recs)


def section(res: Results, out: Path) -> Section | None:
    if not res.inspects:
        return None
    sec = Section("Inspect: violations found in training")
    sec.add(Para("raudit inspect watches one training run of each implementation and checks "
                 "it against the PATE-GAN algorithm: 'violated' is a deviation that breaks the "
                 "privacy guarantee, with the evidence and, where there is one, a plot."))
    runs = _runs_table(res)
    if not runs.empty:
        sec.add(Table("Runs inspected", runs, "inspect_runs.csv"))
    frames, figures, missing = [], [], []
    for ins in res.inspects:
        v = ins.violations.copy()
        v.insert(0, "job", ins.job or "")
        for plot in v["plot"]:
            if not plot:
                continue
            src = ins.folder / plot
            if not src.is_file() or Path(plot).name != plot:
                missing.append(plot)
                continue
            dest = out / "figures" / (slug("inspect", ins.job, Path(plot).stem) + ".png")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            rows = v[v["plot"] == plot]
            figures.append(Figure(f"Evidence: {plot}", dest.relative_to(out).as_posix(),
                                  "; ".join(f"{a} {c}: {s}" for a, c, s in zip(
                                      rows["impl"], rows["category"], rows["status"]))))
        frames.append(v)
    viol = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if not viol.empty:
        viol = viol.sort_values(["job", "impl"], kind="stable")
        viol = viol.iloc[viol["status"].map(ORDER).fillna(9).argsort(kind="stable")]
        counts = viol["status"].value_counts()
        sec.add(Para(", ".join(f"{counts.get(s, 0)} {s.replace('_', ' ')}" for s in ORDER)
                     + f" over {viol['impl'].nunique()} implementation(s)."))
        sec.add(Table("Violations per implementation and category", viol.reset_index(drop=True),
                      "violations.csv"))
    seen = set()
    for f in figures:
        if f.png not in seen:
            seen.add(f.png)
            sec.add(f)
    if missing:
        sec.add(Para(f"Evidence plot(s) named in violations.csv but absent: "
                     f"{', '.join(sorted(set(missing)))}."))
    return sec
