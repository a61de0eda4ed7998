"""`raudit campaign --dry-run`: the plan, with estimates in seconds, not minutes.

The rates and iterations of each job come from :mod:`raudit.runs.job_estimate` (cached
rates, the PATE family's closed form, a short calibration only for what is missing),
the same machinery that says the total before `raudit campaign` and `raudit utility`
train. This module lays the plan out as a table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from raudit.campaign.plan import Built, PluginPlan
from raudit.engine.driver import EngineConfig
from raudit.runs import calibrate as cb
from raudit.runs.costs import startup_guess
from raudit.runs.job_estimate import counted, plan_table

#: one job's row of the plan (raudit.runs.job_estimate.plan_table's, or a plugin's)
Row = dict[str, Any]

def dry_plan(jobs: Sequence[Built], engine: EngineConfig,
              notice: Callable[[str], None] = lambda m: None) -> list[Row]:
    """:func:`plan_table`'s rows in job order; a plugin's job (:class:`PluginPlan`) is not
    calibrated, which would run its code: its row says so and counts no time. ``notice``:
    a line before each measurement."""
    planned = iter(plan_table([j for j in jobs if not isinstance(j, PluginPlan)], engine,
                              notice))
    return [_plugin_row(j) if isinstance(j, PluginPlan) else next(planned) for j in jobs]


PLUGIN_RATE = "plugin: not run in a dry run"


def _plugin_row(job: PluginPlan) -> Row:
    return {"job": job.name, "kind": job.kind, "impl": job.impl, "dataset": job.dataset,
            "epsilon": job.epsilon, "models": job.models, "iterations_per_model": None,
            "model_iterations": None, "wall_s": None, "lower_bound": False,
            "rate": PLUGIN_RATE, "at_most": False}


def _dur(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def _iters(row: Row) -> str:
    """Iterations per model: one count, or a sweep's range over its points."""
    lo, hi = row.get("iterations_range") or (row["iterations_per_model"],) * 2
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


PLAN_COLUMNS = ("job", "kind", "impl", "dataset", "eps", "models/fits", "iters/model",
                "model-iterations", "est. time", "rate")


def plan_view(header: Mapping[str, object], rows: list[Row], engine: EngineConfig
              ) -> tuple[str, list[list[str]], list[str]]:
    """The plan as text cells: (title, one row per job and a total row, notes). The CLI
    prints them as a table on a terminal and as full-width plain columns when piped."""
    workers = engine.planned_workers()
    title = (f"campaign {header['name']}: {len(rows)} job(s), estimated on {workers} "
             "worker(s) of this machine")
    out, tot_mi, tot_s, lower = [], 0, 0.0, False
    for r in rows:
        if r["kind"] == "inspect":
            out.append([r["job"], "inspect", "", "", "", "1", "", "", "", ""])
            continue
        if r["rate"] == PLUGIN_RATE:  # its time is unknown: the total leaves it out
            out.append([r["job"], r["kind"], r["impl"], str(r["dataset"]), f"{r['epsilon']:g}",
                        f"{r['models']:,}", "?", "?", "?", r["rate"]])
            continue
        ge = ">=" if r["lower_bound"] else ("<=" if r.get("at_most") else "")
        tot_mi += r["model_iterations"]
        tot_s += r["wall_s"]
        lower |= r["lower_bound"]
        # a max_iter cap bounds the iterations, not the time: that leaves fixed costs out
        out.append([r["job"], r["kind"], r["impl"], str(r["dataset"]), f"{r['epsilon']:g}",
                    f"{r['models']:,}", f"{ge}{_iters(r)}", f"{ge}{r['model_iterations']:,}",
                    f"{'>=' if r['lower_bound'] else ''}{_dur(r['wall_s'])}", r["rate"]])
    startup_s, how = startup_guess(engine)  # once for the campaign, as its first line counts it
    if startup_s >= 1:
        out.append(["start-up", "", "", "", "", "", "", "",
                    _dur(startup_s) + (" (typical)" if how == "typical" else ""), how])
        tot_s += startup_s
    ge = ">=" if lower else ("<=" if any(r.get("at_most") for r in rows) else "")
    out.append(["total", "", "", "", "", f"{sum(r['models'] for r in rows):,}", "",
                f"{ge}{tot_mi:,}", f"{'>=' if lower else ''}{_dur(tot_s)}", ""])
    plugins = sum(r.get("rate") == PLUGIN_RATE for r in rows)
    measured = sum(r.get("rate") == "measured now" for r in rows)
    reference = sum(r.get("rate") == "reference" for r in rows)
    runs = {r["kind"] for r in rows if r["kind"] != "inspect"}
    notes = [f"est. time {counted(runs, startup_s >= 1)}." if runs else "",
             f"rate: 'cached' from the chunk-rate cache of this machine; 'reference' "
             f"({reference} job(s)) nothing trained here: a reference machine's calibration "
             "(raudit/runs/reference-rates.json) at the job's chunk size, scaled by this machine's speed on another kind of machine; 'measured "
             f"now' ({measured} job(s)) by a short calibration in this process. Iterations per "
             "model: the PATE family's closed form where it applies, else where the "
             "calibration's models stopped by eps; a sweep's points each at their own "
             "(a range: the mean times the points' fits is its model-iterations). <= : counted at the job's max_iter, a "
             "cap its models may stop before (at most). "
             ">= : the generator stops by its own eps rule and did not within the "
             f"{cb.CAL_ITERS}-iteration calibration: give max_iter for a bound. Utility "
             "estimates count the iteration cap (10,000 by default), and the classifiers "
             "by a cost per classifier measured at two row counts."]
    if plugins:
        notes.append(f"{plugins} job(s) of plugin generators (exec:, module:Class) are not in "
                     "the total: a dry run neither imports nor runs a plugin's code, so their "
                     "speed is unknown until the campaign runs them.")
    return title, out, [n for n in notes if n]
