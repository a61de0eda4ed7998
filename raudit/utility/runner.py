"""A utility run from request to tables: plan the fits, skip finished ones, run, analyse.

::

    result = run_utility(UtilityRequest(impl="paper", dataset="cervical"), out="runs/u",
                         engine=EngineConfig())

The output folder is a :class:`raudit.results.ResultStore` (table ``utility``) whose
manifest is the request (without the chunking, which does not change any number),
so rerunning the same request resumes: fits whose trial id the store holds as ok
or skipped are not run again, failed ones are. Every finished chunk is appended as
soon as the engine reports it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ContextManager

import pandas as pd

from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.results import ResultStore
from raudit.results.store import check_writable
from raudit.results.ids import trial_id
from raudit.utility import plan
from raudit.utility.chunk import _base

Progress = Callable[[str, int], ContextManager[Callable[[int], None]]]
TABLE = "utility"


@contextlib.contextmanager
def _quiet(description: str, total: int) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


def manifest_of(req: plan.UtilityRequest, ds, names) -> dict[str, Any]:
    spec = {k: v for k, v in dataclasses.asdict(req).items() if k != "chunk_size"}
    return {"command": "utility", **spec, "classifiers": list(names),
            "data_digest": plan.base_config(req, ds)["data_digest"]}


def finished(store: ResultStore) -> set[str]:
    """Trial ids with an ok or skipped row (a resume does not rerun them)."""
    df = store.read(TABLE)
    return set(df.loc[df["status"].isin(["ok", "skipped"]), "trial_id"].dropna())


def plan_chunks(req: plan.UtilityRequest, ds, run_id: str, done: set[str]
                ) -> tuple[list[dict], list[dict]]:
    """(chunk specs to run, skipped rows to write now) for the pending trials."""
    names = plan.classifier_names(req, ds.name)
    specs: list[dict] = []
    skipped: list[dict] = []
    if req.real_only or "A" in req.settings:
        real = plan.real_trial(req, ds, names)
        if real["trial_id"] not in done:
            specs.append({"run_id": run_id, "real": True, "trial_id": real["trial_id"],
                          "config": real["config"], "config_id": trial_id(real["config"]),
                          "root": int(req.seed), "classifiers": list(names), "trials": []})
    if req.real_only:
        return specs, skipped
    size = req.chunk_size or req.fits
    for cfg, reason in plan.configs(req, ds):
        trials = [t for t in plan.fit_trials(req, cfg, names) if t["trial_id"] not in done]
        base = {"run_id": run_id, "config": cfg, "config_id": trial_id(cfg), "root": int(req.seed),
                "samples": req.samples, "classifiers": list(names),
                "settings": [s for s in req.settings if s in ("B", "C")]}
        if reason is not None:
            skipped += [{**_base({**base, "trials": trials}), "trial_id": t["trial_id"],
                         "fit_index": t["fit_index"], "seed": t["seed"], "status": "skipped",
                         "error": reason} for t in trials]
            continue
        specs += [{**base, "trials": trials[i:i + size]} for i in range(0, len(trials), size)]
    return specs, skipped


def planned_ids(req: plan.UtilityRequest, ds) -> set[str]:
    """Every trial id of the request (done or not)."""
    names = plan.classifier_names(req, ds.name)
    ids = {plan.real_trial(req, ds, names)["trial_id"]}
    if not req.real_only:
        ids |= {t["trial_id"] for cfg, _ in plan.configs(req, ds)
                for t in plan.fit_trials(req, cfg, names)}
    return ids


def _weight(spec: dict) -> int:
    return 1 if spec.get("real") else len(spec["trials"])


def run_utility(req: plan.UtilityRequest, out: Path | str, engine: EngineConfig = EngineConfig(),
                progress: Progress | None = None, reference: float | None = None) -> dict[str, Any]:
    """Run (or resume) the benchmark; returns the analysis (see :mod:`raudit.utility.analyse`)
    plus run details."""
    progress = progress or _quiet
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder")
    ds = plan.check(req)
    names = plan.classifier_names(req, ds.name)
    manifest = manifest_of(req, ds, names)
    check_writable(out)
    store = ResultStore(out)
    with store.lock():  # one run per folder, as for audits
        return _run_locked(req, ds, names, manifest, store, out, engine, progress, reference)


def _run_locked(req, ds, names, manifest, store, out, engine, progress, reference):
    # The campaign's scheduler with one job (see raudit.campaign.schedule).
    from raudit.campaign.jobs import UtilityJob
    from raudit.campaign.schedule import schedule

    what = "Setting A" if req.real_only else f"{req.impl} on {ds.name}"
    job = UtilityJob("utility", req, ds=ds, partition=None, what=f"{what} (fits)",
                     reference=reference)
    done = schedule([job], out, engine, progress)
    if job.name in done.errors:
        raise done.errors[job.name]
    stats = done.stats
    return {**job.analysis, "impl": "real" if req.real_only else req.impl, "dataset": ds.name,
            "out": str(out), "run_id": job.run_id, "fits_run": stats.units - len(job.real_ok),
            "real_run": bool(job.real_ok),
            "failed_chunks": stats.failed_chunks, "wall_s": stats.wall_s,
            "placement": stats.placement, "notes": stats.notes,
            "fits": req.fits, "samples": req.samples}


def frame(out: Path | str) -> pd.DataFrame:
    """The utility rows stored under ``out``."""
    return ResultStore(out).read(TABLE)
