"""Guards around an audit run: reject what cannot work before any work, explain what failed.

* :func:`validate_generator`: the options and table-dependent settings, on both worlds;
* :func:`probe`: the whole pipeline once, on one model capped at one iteration;
* :class:`AuditFailed`: every model failed (exit code 1, the first error and its count);
* :class:`Estimator`: the run's total time, from the first finished chunk.
"""

from __future__ import annotations

import time

import pandas as pd

from raudit import generators
from raudit.audit import chunk
from raudit.audit.game import Game, trials, worlds
from raudit.engine.driver import EngineConfig
from raudit.errors import RauditError, headline
from raudit.privacy import ResolvedPrivacy
from raudit.results import ResultStore


def validate_generator(gen, train, target, neighbours: str, privacy: ResolvedPrivacy,
                       columns) -> None:
    """Reject generator settings that `raudit train` would reject, on the audit's own worlds,
    before Ray starts or anything is written. ``gen`` is the constructed generator (its
    constructor checked the options); its ``check`` covers the table-dependent settings
    (e.g. more teachers than rows) under the privacy the audit resolved once."""
    tables = [train] if target == "auto" else list(worlds(train, target, neighbours).values())
    for table in tables:
        generators.base.check_table(table, allow_nan=gen.allow_nan)
        gen.check(table, epsilon=privacy.epsilon, delta=privacy.delta, columns=columns)


def probe(game: Game, audit_id: str) -> None:
    """Run the whole pipeline once, on one model capped at one iteration, in this process.

    ``check`` covers what can be foreseen from the options and the table; this covers
    the rest (an eps below an implementation's floor, a failure in sampling or feature
    extraction) in about a second, before Ray starts or the output folder is written.
    A generator without a ``max_iter`` option is probed with its full training.
    """
    cls = generators.get(game.impl)
    options = dict(game.options)
    caps = cls.describe()
    if caps.options is not None and "max_iter" in caps.option_names():
        options["max_iter"] = 1
    spec = {"audit_id": audit_id, "game": {**game.spec(), "options": options}, "world": "in",
            "trials": trials(game, world="in", count=1), "device": "cpu"}
    try:
        chunk.run_chunk(spec)  # itself: a test's substitute (runs.dispatch) is for the pool
    except RauditError:
        raise
    except Exception as exc:  # noqa: BLE001 - a bug or a numerical failure: say what and where
        raise AuditFailed(f"{game.impl} failed on the audit's data before any work started: "
                          f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from exc


class AuditFailed(RauditError):
    """The audit could not produce a result (every model failed, or the probe did)."""

    exit_code = 1


def check_models(store: ResultStore, ids: set[str], total: int) -> None:
    """Raise AuditFailed when no model of the audit trained, with the first error and count."""
    shadow = store.read("shadow")
    mine = shadow[shadow["trial_id"].isin(ids)]
    if (mine["status"] == "ok").any():
        return
    errors = mine.loc[mine["status"] == "failed", "error"].dropna()
    if errors.empty:
        raise AuditFailed(f"no shadow model of the {total} finished; nothing to analyse")
    heads = errors.map(headline)
    count = int((heads == heads.iloc[0]).sum())
    raise AuditFailed(f"all {total} shadow models failed ({count} with: {heads.iloc[0]}); "
                      "nothing to analyse")


class Estimator:
    """Prints, once the first chunk has finished, the run's estimated total time."""

    def __init__(self, total_models: int, engine: EngineConfig, notice, on_start=None,
                 unit: str = "models", work_of=None):
        self.total, self.notice, self.t0, self.done = total_models, notice, time.perf_counter(), False
        self.workers = engine.planned_workers()
        # on_start(seconds): the time before the first chunk's own work (starting Ray and
        # its actors), measured as the wait for the first chunk less the chunk's work
        self.on_start = on_start
        # work_of(rows) -> (units in the chunk, seconds of work per unit)
        self.unit, self.work_of = unit, work_of or shadow_work

    def __call__(self, rows: list[dict]) -> None:
        if self.done or not rows:
            return
        self.done = True
        models, per_model = self.work_of(rows)
        if self.on_start is not None:
            self.on_start(max(0.0, time.perf_counter() - self.t0 - per_model * models))
        if self.total <= models:
            return
        secs = per_model * self.total / self.workers
        if secs < 30:  # a short run: the bar says enough
            return
        self.notice(f"refreshed estimate: the first chunk trained {models} {self.unit} at "
                    f"{per_model:.2f} s each: the {self.total:,} {self.unit} should take about "
                    f"{duration(secs)} on {self.workers} worker(s)")


def shadow_work(rows: list[dict]) -> tuple[int, float]:
    """(models, seconds per model) of a chunk's shadow rows (a pool chunk has a row per
    model and candidate)."""
    models = len({r["shadow_index"] for r in rows})
    return models, sum(r.get("wall_s") or 0.0 for r in rows) / len(rows)


def duration(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def first_error(shadow: pd.DataFrame, ids: set[str]) -> str | None:
    bad = shadow[shadow["trial_id"].isin(ids) & (shadow["status"] == "failed")]["error"].dropna()
    if bad.empty:
        return None
    return headline(bad.iloc[0])


