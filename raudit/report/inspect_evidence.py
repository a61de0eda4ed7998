"""The inspect evidence page: per run, every cell with the measurement that decided it
and its plot. The main page's cells link here (one anchor per run and per cell), so the
main page stays short however many implementations were inspected."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from raudit.inspect.cells import CATEGORIES, TITLES
from raudit.inspect.report import run_notes
from raudit.plots import slug
from raudit.report.load import Results
from raudit.report.model import Figure, Links, Para, Report, Section, Table


def anchor(job: str, impl, category: str | None = None) -> str:
    return "ev-" + slug(job, impl, category)


def _copy_plots(res: Results, out: Path) -> tuple[dict, list[str]]:
    """Copy every named evidence plot beside the page: {(job, plot): page path} and the
    names that were absent (said on the page, not fatal)."""
    copied, missing = {}, []
    for ins in res.inspects:
        for plot in dict.fromkeys(p for p in ins.violations["plot"] if p):
            src = ins.folder / plot
            if not src.is_file() or Path(plot).name != plot:
                missing.append(plot)
                continue
            dest = out / "figures" / (slug("inspect", ins.job, Path(plot).stem) + ".png")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            copied[(ins.job or "", plot)] = dest.relative_to(out).as_posix()
    return copied, missing


def _summary(run: dict | None) -> str:
    if run is None:
        return "No run record in inspect.json for this implementation."
    if run.get("skipped"):
        return f"Not inspected: {run['skipped']}."
    eps_hat = run.get("final_eps_hat")
    text = (f"{run.get('iterations')} iterations on {run.get('dataset')}, final eps_hat "
            f"{'not reported' if eps_hat is None else format(float(eps_hat), '.5g')} "
            f"(eps {(run.get('settings') or {}).get('epsilon', '?')}), "
            f"{run.get('wall_s', '?')} s.")
    notes = run_notes(run)
    return text + (" " + " ".join(n[0].upper() + n[1:] + "." for n in notes) if notes else "")


def evidence_page(res: Results, stat: pd.DataFrame, out: Path, title: str
                  ) -> tuple[Report, list[str]]:
    """The page, and the plots named in violations.csv but absent from their folder."""
    copied, missing = _copy_plots(res, out)
    runs = {(ins.job or "", r.get("impl")): r for ins in res.inspects for r in ins.runs
            if isinstance(r, dict)}
    order = {c: i for i, c in enumerate(CATEGORIES)}
    page = Report(title)
    page.sections.append(Section("How to read this page", [
        Para("One part per inspected run: what the run did, then each check with the "
             "measurement that decided it, then its plots."),
        Links("Back to", [("the summary", "page:index")])]))
    keys = list(dict.fromkeys(list(runs) + list(zip(stat["job"], stat["impl"]))))
    for job, impl in keys:
        sec = Section(f"{impl}" + (f" [{job}]" if job else ""))
        sec.add(Para(_summary(runs.get((job, impl)))))
        mine = stat[(stat["job"] == job) & (stat["impl"] == impl)]
        mine = mine.iloc[mine["category"].map(order).fillna(99).argsort(kind="stable")]
        frame = pd.DataFrame({"check": [TITLES.get(c, c) for c in mine["category"]],
                              "status": list(mine["status"]),
                              "evidence": list(mine["evidence"]),
                              "plot": [p if (job, p) in copied else "" for p in mine["plot"]]})
        links = {(i, "plot"): copied[(job, p)] for i, p in enumerate(mine["plot"])
                 if (job, p) in copied}
        sec.anchor = anchor(job, impl)
        ids = [anchor(job, impl, c) for c in mine["category"]]
        sec.add(Table("Checks", frame, slug("inspect", job, impl, "cells") + ".csv",
                      links=links, row_ids=ids))
        for p in dict.fromkeys(mine["plot"]):
            if (job, p) in copied:
                sec.add(Figure(p, copied[(job, p)], "", wide=False))
        page.sections.append(sec)
    if missing:
        page.sections[0].add(Para("Evidence plot(s) named in violations.csv but absent: "
                                  f"{', '.join(sorted(set(missing)))}."))
    return page, sorted(set(missing))
