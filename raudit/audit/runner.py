"""An audit from request to summary: plan the trials, skip finished ones, run, analyse.

::

    result = run_audit(AuditRequest(impl="paper", attack="querybased", dataset="worst-case",
                                    shadow_models=200), out="runs/a", engine=EngineConfig())

The output folder is a :class:`raudit.results.ResultStore` whose manifest is the
request's spec, so rerunning the same request resumes (trials whose id the store
holds with status ok are skipped) and a different request is refused. Every
finished chunk is appended as soon as the engine reports it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ContextManager

import pandas as pd

from raudit import data, generators
from raudit.attacks import resolve as resolve_attack
from raudit.audit import analyse as an
from raudit.audit import targets as tg
from raudit.audit.chunk import failed_rows, run_chunk
from raudit.audit.game import Game, data_digest, derive_seed, split_sizes, trials
from raudit.engine.driver import EngineConfig, RunStats, run_chunks, session
from raudit.errors import ConfigError
from raudit.privacy import resolve_delta
from raudit.results import ResultStore, spec_hash

Progress = Callable[[str, int], ContextManager[Callable[[int], None]]]
DEFAULT_CHUNK = 100
STUDY_DELTA = 1e-5


@dataclass(frozen=True)
class AuditRequest:
    """What the user asked for; ``None`` fields take the documented defaults."""

    impl: str = "paper"
    attack: str = "groundhog"
    features: str | None = None  # default: the attack's
    dataset: str | None = None  # default: worst-case for querybased, breast-cancer otherwise
    label: str | None = None
    bounds: str | None = None
    target: str | None = None  # auto | worst-case | ROWID; default: planted target or auto
    options: dict = field(default_factory=dict)
    epsilon: float = 1.0
    delta: float | None = None  # default: the generator's, else 1e-5
    shadow_models: int = 1000  # per world
    seed: int = 0
    synthetic_rows: int | None = None  # default |D_in|
    neighbours: str = "add-remove"
    chunk_size: int = DEFAULT_CHUNK
    target_candidates: int = 64
    target_pairs: int = 100


@contextlib.contextmanager
def _quiet(description: str, total: int) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


def prepare(req: AuditRequest) -> tuple[Game, dict, Any]:
    """Validate the request; return the game (target unresolved if auto), the store's
    manifest spec, and the loaded dataset."""
    attack, features = resolve_attack(req.attack, req.features)
    cls = generators.get(req.impl)
    if req.chunk_size < 1:
        raise ConfigError(f"--chunk-size must be at least 1, got {req.chunk_size}")
    split_sizes(req.shadow_models)
    dataset = req.dataset or ("worst-case" if attack.name == "querybased" else "breast-cancer")
    ds = data.load(dataset, label=req.label, bounds=req.bounds)
    target = tg.resolve(req.target, ds.train, ds.notes, dataset)
    if target == "auto":
        tg.check_settings(req.target_candidates, req.target_pairs)
    # One delta for training and for the bounds, resolved as `raudit train` resolves it.
    delta = resolve_delta(req.impl, req.options, req.epsilon, req.delta, len(ds.train)).delta
    game = Game(impl=req.impl, options=dict(req.options), dataset=dataset, target=target,
                epsilon=float(req.epsilon), delta=delta, attack=attack.name, features=features,
                shadow_models=int(req.shadow_models), seed=int(req.seed),
                synthetic_rows=int(req.synthetic_rows or len(ds.train)),
                data_digest=data_digest(ds.train), label=req.label,
                bounds=None if req.bounds is None else str(req.bounds), neighbours=req.neighbours,
                context={"bins": 5, "n_queries": 256, "max_points": 1024,
                         "seed": derive_seed(req.seed, 4) % 2**32})
    manifest = {**game.spec(), "target": "auto" if target == "auto" else target,
                "target_request": req.target or "default"}
    if target == "auto":
        manifest.update(target_candidates=req.target_candidates, target_pairs=req.target_pairs)
    return game, manifest, ds


def chunk_specs(game: Game, audit_id: str, per_world: dict[str, list[dict]], done: set[str],
                chunk_size: int) -> list[dict]:
    """Pending trials as chunks of at most ``chunk_size``, one world each, worlds alternating."""
    chunks: dict[str, list[dict]] = {}
    for world, ts in per_world.items():
        pending = [t for t in ts if t["trial_id"] not in done]
        chunks[world] = [{"audit_id": audit_id, "game": game.spec(), "world": world,
                          "trials": pending[i:i + chunk_size]}
                         for i in range(0, len(pending), chunk_size)]
    out, worlds = [], list(chunks)
    for i in range(max((len(c) for c in chunks.values()), default=0)):
        out += [chunks[w][i] for w in worlds if i < len(chunks[w])]
    return out


def execute(specs: list[dict], store: ResultStore, engine: EngineConfig, progress: Progress,
            description: str) -> RunStats:
    """Run the chunks; append each one's rows (or its failed rows) the moment it finishes."""
    def on_done(spec, rows, error):
        store.append("shadow", rows if error is None else failed_rows(spec, error))

    total = sum(len(s["trials"]) for s in specs)
    with progress(description, total) as tick:
        return run_chunks(run_chunk, specs, on_done=on_done, config=engine,
                          weight=lambda s: len(s["trials"]), progress=tick)


def select_target(game: Game, req: AuditRequest, ds, out: Path, engine: EngineConfig,
                  progress: Progress) -> tuple[Any, list[tuple[Any, float]], RunStats]:
    """Run the mini-MIAs (resuming) and return the chosen row, every (row, AUC), the stats."""
    store = ResultStore(out / "target-selection")
    cands = tg.candidates_of(ds.train, req.target_candidates)
    games = [tg.candidate_game(game, c) for c in cands]
    store.ensure_manifest({**game.spec(), "target": "auto", "candidates": [str(c) for c in cands],
                           "pairs": req.target_pairs})
    done = store.done_ids()
    per_game = [tg.selection_trials(g, req.target_pairs) for g in games]
    specs = [s for g, pw in zip(games, per_game)
             for s in chunk_specs(g, "target-selection", pw, done, req.chunk_size)]
    stats = execute(specs, store, engine, progress, f"target selection ({len(cands)} candidates)")
    shadow = store.read("shadow")
    aucs = [(g.target, tg.candidate_auc(shadow, {t["trial_id"] for ts in pw.values() for t in ts},
                                        game.seed)) for g, pw in zip(games, per_game)]
    row, _ = tg.choose(aucs)
    return row, aucs, stats


def run_audit(req: AuditRequest, out: Path | str, engine: EngineConfig = EngineConfig(),
              progress: Progress | None = None) -> dict[str, Any]:
    """Run (or resume) the audit; returns the summary row plus run details."""
    progress = progress or _quiet
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder")
    game, manifest, ds = prepare(req)
    store = ResultStore(out)
    store.ensure_manifest(manifest)
    audit_id = spec_hash(manifest)[:16]
    selection: dict[str, Any] = {}
    with session(engine):
        if game.target == "auto":
            row, aucs, sstats = select_target(game, req, ds, out, engine, progress)
            game = tg.candidate_game(game, row)
            selection = {"target_aucs": {str(r): a for r, a in aucs}, "selection_models": sstats.units,
                         "selection_failed_chunks": sstats.failed_chunks}
        per_world = {w: trials(game, world=w) for w in ("out", "in")}
        specs = chunk_specs(game, audit_id, per_world, store.done_ids(), req.chunk_size)
        stats = execute(specs, store, engine, progress,
                        f"{game.impl} vs {game.attack} on {game.dataset}")
    ids = {t["trial_id"] for ts in per_world.values() for t in ts}
    result = an.analyse(store.read("shadow"), trial_ids=ids, seed=game.seed, delta=game.delta)
    rate = stats.units / stats.wall_s * 3600 if stats.units and stats.wall_s > 0 else None
    label = "worst-case" if req.target == "worst-case" or (
        req.target is None and "target_row" in ds.notes) else f"row:{game.target}"
    row = an.summary_row(game.spec(), result, audit_id=audit_id, target_label=label,
                         models_per_hour=rate)
    _append_summary(store, row)
    return {**row, **selection, "out": str(out), "models_run": stats.units,
            "failed_chunks": stats.failed_chunks, "wall_s": stats.wall_s,
            "placement": stats.placement, "notes": stats.notes, "target_row": game.target}


def _append_summary(store: ResultStore, row: dict) -> None:
    """One summary row per audit: a rerun that changed nothing adds none."""
    prev = store.read("summary")
    prev = prev[prev["audit_id"] == row["audit_id"]]
    if len(prev):
        last = prev.iloc[-1]
        same = all(_same(last[k], row[k]) for k in ("models_ok", "missing", "eps_cp"))
        if same:
            return
    store.append("summary", [row])


def _same(a, b) -> bool:
    """Equal numbers, or both missing (None, NaN, pd.NA)."""
    a, b = (None if x is None or pd.isna(x) else float(x) for x in (a, b))
    return a == b
