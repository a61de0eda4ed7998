"""`raudit campaign --dry-run`: the plan, with estimates from a quick calibration.

One calibration per distinct generator set-up (impl, options, dataset, eps, delta):
``calibrate.fit_rate`` at M = min(8, the job's chunk size), in this process, so the
estimate is for this machine's cores; on a cluster, scale by the slots it has.
"""

from __future__ import annotations

from raudit.engine.driver import EngineConfig
from raudit.runs import calibrate as cb

CAL_M = 8


def plan_table(jobs, engine: EngineConfig) -> list[dict]:
    """One row per job: kind, impl, dataset, models (fits), iterations, estimated time."""
    workers = engine.planned_workers()
    cache: dict[str, cb.Calibration] = {}
    rows = []
    for job in jobs:
        if job.kind == "inspect":
            rows.append({"job": job.name, "kind": "inspect", "models": 1})
            continue
        impl, opts, dataset, eps, delta, label, bounds = cb.job_fit(job)
        m = CAL_M if job.kind == "utility" else min(CAL_M, job.req.chunk_size)
        key = repr((impl, sorted(opts.items()), dataset, eps, delta, label, bounds, m))
        if key not in cache:
            cache[key] = cb.fit_rate(impl, opts, dataset, eps, delta, m, label, bounds)
        est = cb.estimate(job, cache[key], workers)
        rows.append({"job": job.name, "kind": job.kind, "impl": impl, "dataset": dataset,
                     "epsilon": eps, **est})
    return rows


def _dur(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def show_plan(header: dict, rows: list[dict], engine: EngineConfig) -> None:
    from rich.console import Console
    from rich.table import Table

    workers = engine.planned_workers()
    t = Table(title=f"campaign {header['name']}: {len(rows)} job(s), estimated on {workers} "
                    "worker(s) of this machine", title_justify="left")
    for col in ("job", "kind", "impl", "dataset", "eps", "models/fits", "iters/model",
                "model-iterations", "est. time"):
        t.add_column(col, justify="right" if col not in ("job", "kind", "impl", "dataset") else "left")
    tot_mi, tot_s, lower = 0, 0.0, False
    for r in rows:
        if r["kind"] == "inspect":
            t.add_row(r["job"], "inspect", "", "", "", "1", "", "", "")
            continue
        ge = ">=" if r["lower_bound"] else ""
        tot_mi += r["model_iterations"]
        tot_s += r["wall_s"]
        lower |= r["lower_bound"]
        t.add_row(r["job"], r["kind"], r["impl"], str(r["dataset"]), f"{r['epsilon']:g}",
                  f"{r['models']:,}", f"{ge}{r['iterations_per_model']:,}",
                  f"{ge}{r['model_iterations']:,}", f"{ge}{_dur(r['wall_s'])}")
    ge = ">=" if lower else ""
    t.add_row("total", "", "", "", "", f"{sum(r['models'] for r in rows):,}", "",
              f"{ge}{tot_mi:,}", f"{ge}{_dur(tot_s)}")
    Console().print(t)
    Console().print(">= : the generator stops by its own eps rule and did not within the "
                    f"{cb.CAL_ITERS}-iteration calibration: give max_iter for a bound. A job's "
                    "max_iter counts in full unless the calibration models stopped before it, "
                    "so it is an upper bound for generators that stop by eps. Utility "
                    "estimates count the iteration cap (10,000 by default) and training only "
                    "(not the classifiers).")
