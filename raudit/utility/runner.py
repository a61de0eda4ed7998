"""A utility run's manifest, chunks and stored rows: plan the fits and skip finished ones.
:func:`raudit.runs.run_utility` runs them (table ``utility`` of the output folder;
fits whose trial id the store holds as ok or skipped are not run again, failed ones are).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from raudit.results import ResultStore
from raudit.results.ids import trial_id
from raudit.utility import plan
from raudit.utility.chunk import _base

TABLE = "utility"


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


def real_trial_id(req: plan.UtilityRequest, ds) -> str:
    """The trial id of the request's Setting A pass."""
    return plan.real_trial(req, ds, plan.classifier_names(req, ds.name))["trial_id"]


def planned_ids(req: plan.UtilityRequest, ds) -> set[str]:
    """Every trial id of the request (done or not)."""
    names = plan.classifier_names(req, ds.name)
    ids = {real_trial_id(req, ds)}
    if not req.real_only:
        ids |= {t["trial_id"] for cfg, _ in plan.configs(req, ds)
                for t in plan.fit_trials(req, cfg, names)}
    return ids


def frame(out: Path | str) -> pd.DataFrame:
    """The utility rows stored under ``out``."""
    return ResultStore(out).read(TABLE)
