"""Inspections out: the violations table as text, the long CSV, and the `--out` folder.

Folder layout (the contract with `raudit campaign` / `raudit report`)::

    DIR/raudit.json        manifest, spec {"kind": "inspect", ...}
    DIR/inspect.json       what --json prints: a list of runs (impl, dataset, settings,
                           iterations, eps_hat, teachers_seen, violations, ...)
    DIR/violations.csv     impl, category, status, evidence, plot
    DIR/<impl>-<figure>.png
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from raudit.inspect.cells import EXTRA, OTHER_BUGS, STUDY, SYMBOL
from raudit.inspect.plots import plot_all
from raudit.privacy import fmt_eps, training_notes
from raudit.results.files import write_atomic
from raudit.results.store import ResultStore

__all__ = ["CSV_COLUMNS", "finish_runs", "run_notes", "table_text", "violations_csv",
           "write_folder"]

CSV_COLUMNS = ("impl", "category", "status", "evidence", "plot")


def finish_runs(runs: list[dict], folder: Path | None) -> list[dict]:
    """Draw the plots into ``folder`` (if any), point each cell at its PNG, and drop the
    in-memory context: what is left is plain JSON."""
    out = []
    for run in runs:
        ctx = run.pop("_context", None)
        drawn = plot_all(ctx, folder) if (folder is not None and ctx is not None) else {}
        for v in run["violations"]:
            v["plot"] = drawn.get(v.get("plot", ""), "")
        out.append(run)
    return out


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def runs_json(runs: list[dict]) -> str:
    return json.dumps(_clean(runs), indent=2, default=str)


def violations_csv(runs: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for run in runs:
        for v in run["violations"]:
            w.writerow([run["impl"], v["category"], v["status"], v["evidence"], v["plot"]])
    return buf.getvalue()


def run_notes(run: dict) -> list[str]:
    """What a reader must not miss about one run, in words (raudit.privacy.training_notes):
    a run that took no training step, a final eps_hat above the eps it was trained for."""
    if run.get("skipped"):
        return [f"not inspected: {run['skipped']}"]
    notes = training_notes(run.get("iterations"), run.get("final_eps_hat"),
                           (run.get("settings") or {}).get("epsilon"),
                           steps_expected=bool(run.get("events")))
    return [n + " (the Overshoot cell)" if "past eps" in n else n for n in notes]


def table_text(runs: list[dict], *, evidence: bool = True) -> str:
    """The study's table 2 layout (the study marks a violation with a check mark; here ✗, so no
    reader takes it for a pass: ✗ violated, blank ok, ? not checked, - not applicable),
    the extra measured columns after a bar, then the evidence of every violated cell."""
    cols = [k for k, _ in STUDY] + [k for k, _ in EXTRA]
    titles = dict(STUDY + EXTRA)
    width = max([len(r["impl"]) for r in runs] + [4])
    head = " | ".join(titles[c] for c in cols)
    lines = [f"{'impl':<{width}} | {head}"]
    for r in runs:
        status = {v["category"]: v["status"] for v in r["violations"]}
        cells = [SYMBOL[status.get(c, "not_checked")].center(len(titles[c])) for c in cols]
        lines.append(f"{r['impl']:<{width}} | " + " | ".join(cells))
    n_priv = sum(v["status"] == "violated" and v["category"] in dict(STUDY) and
                 v["category"] not in OTHER_BUGS for r in runs for v in r["violations"])
    n_bugs = sum(v["status"] == "violated" and v["category"] in OTHER_BUGS
                 for r in runs for v in r["violations"])
    lines.append(f"study columns: {n_priv} privacy violations and {n_bugs} other bugs measured "
                 f"(✗ violated, blank ok, ? not checked, - not applicable); the last "
                 f"{len(EXTRA)} columns are measured but not in the study's table 2")
    if evidence:
        for r in runs:
            if r.get("skipped"):
                lines.append(f"\n{r['impl']}: not inspected ({r['skipped']})")
                continue
            final = fmt_eps(r["final_eps_hat"])
            lines.append(f"\n{r['impl']} on {r['dataset']}: {r['iterations']} iterations, final "
                         f"eps_hat {final}, {r['wall_s']} s")
            lines.extend(f"  note: {n}" for n in run_notes(r))
            for v in r["violations"]:
                if v["status"] in ("violated", "not_checked"):
                    lines.append(f"  {v['status']:<11} {titles[v['category']]}: {v['evidence']}")
    return "\n".join(lines)


def write_folder(folder: Path, runs: list[dict], spec: dict) -> None:
    """inspect.json, violations.csv and the manifest (the PNGs are already there)."""
    store = ResultStore(folder)
    store.ensure_manifest(spec)  # spec holds "kind": "inspect"
    text = runs_json(runs).encode()
    write_atomic(folder / "inspect.json", lambda fh: fh.write(text))
    table = violations_csv(runs).encode()
    write_atomic(folder / "violations.csv", lambda fh: fh.write(table))
