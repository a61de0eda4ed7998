"""Where the numbers come from: raudit versions, the spec, seeds, trial counts, wall time
and machines, as far as the store records them (and saying so where it does not)."""

from __future__ import annotations

import json
import platform
import socket
from datetime import datetime, timezone

import pandas as pd

from raudit import __version__
from raudit.audit.threat_model import trials_of
from raudit.report.load import Results
from raudit.report.model import KeyValues, Para, Pre, Section


def _values(df: pd.DataFrame, col: str) -> str:
    if df.empty or col not in df:
        return ""
    vals = sorted({str(v) for v in df[col].dropna()})
    return ", ".join(vals[:8]) + (f" and {len(vals) - 8} more" if len(vals) > 8 else "")


def _hours(seconds: float) -> str:
    return f"{seconds:,.1f} s" if seconds < 3600 else f"{seconds / 3600:,.2f} h"


def _shadow(df: pd.DataFrame) -> list[tuple[str, str]]:
    if df.empty:
        return []
    ok = df[df["status"] == "ok"].drop_duplicates(["job", "trial_id"])
    failed = df[(df["status"] == "failed") & ~df["trial_id"].isin(ok["trial_id"])]
    seeds = df["seed"].dropna()
    return [("shadow models", f"{len(ok):,} ok, {failed['trial_id'].nunique():,} failed"),
            ("shadow model seeds", f"{seeds.nunique():,} distinct, {int(seeds.min())} .. "
             f"{int(seeds.max())} (derived from the root seed)" if len(seeds) else ""),
            ("shadow training time", f"{_hours(float(ok['wall_s'].sum()))} summed over models "
             f"(wall time of the run is lower when models train in parallel)"),
            ("iterations per model", _values(ok, "iterations")),
            ("devices / chunk sizes", f"{_values(ok, 'device')} / {_values(ok, 'chunk_models')}")]


def _utility(df: pd.DataFrame) -> list[tuple[str, str]]:
    if df.empty:
        return []
    fits = df.drop_duplicates(["job", "trial_id"])
    counts = fits["status"].value_counts()
    scored = df.drop_duplicates(["job", "trial_id", "sample_index", "setting", "classifier"])
    return [("utility fits", ", ".join(f"{counts.get(s, 0):,} {s}"
                                       for s in ("ok", "skipped", "failed"))),
            ("utility fit seeds", f"{df['seed'].dropna().nunique():,} distinct"),
            ("utility time", f"training {_hours(float(fits['train_wall_s'].sum()))}, scoring "
             f"{_hours(float(scored['score_wall_s'].sum()))} (summed over fits)"),
            ("devices", _values(fits, "device"))]


def section(res: Results) -> Section:
    m = res.manifest
    writer = m.get("written_by") or {}
    summary = res.table("summary")
    items = [
        ("report written by", f"raudit {__version__} on {socket.gethostname()} "
         f"({platform.platform(terse=True)}), "
         f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"),
        ("results folder", f"{res.root} ({res.kind})"),
        ("created", str(m.get("created_at", ""))),
        ("created by", ", ".join(f"{k} {v}" for k, v in writer.items()) if writer else
         "not recorded (stores created before the manifest recorded raudit's version and host)"),
        ("result schema version", str(m.get("schema_version"))),
        ("spec hash", str(m.get("spec_hash", ""))),
        ("root seed(s)", _values(summary, "seed") or str(res.spec.get("seed", ""))),
    ]
    if not summary.empty:
        rate = summary["models_per_hour"].dropna()
        # a transcript or active audit's rate is of its mechanism-only trials, a one-run's of runs
        kind = trials_of(summary.loc[rate.index[-1]].to_dict()).kind if len(rate) else ""
        unit = {"mechanism": "trials", "canaries": "runs"}.get(kind, "models")
        files = all(trials_of(r).kind == "files" for r in summary.to_dict("records"))
        items.append(("throughput", f"{rate.iloc[-1]:,.0f} {unit}/hour (last run that trained)"
                      if len(rate) else "none: a data-only audit trains nothing" if files
                      else "not recorded (resumed with nothing to train)"))
    items += _shadow(res.table("shadow")) + _utility(res.table("utility"))
    if res.inspects:
        items.append(("inspect runs", str(sum(len(i.runs) for i in res.inspects))))
    sec = Section("Provenance")
    sec.add(KeyValues([(k, v) for k, v in items if v]))
    sec.add(Para("The spec the folder was created with (its hash is checked on every resume):"))
    sec.add(Pre(json.dumps(res.spec, indent=2, sort_keys=True, default=str)))
    return sec
