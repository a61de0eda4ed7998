"""One chunk of shadow models: ``run_chunk(spec) -> rows``, a plain function of a plain dict.

This is the unit of work the engine schedules (on a Ray actor or in-process).
A chunk holds M trials of ONE world, so that all M training tables have the same
size and a batched generator trains them in one ``fit_many`` call. The spec::

    {
      "audit_id": "3f2a...",           # the audit's spec hash (rows carry it)
      "game": Game.spec(),             # impl, options, dataset, target, eps, attack, ...
      "world": "in" | "out",
      "trials": [{"trial_id", "shadow_index", "seed", "sample_seed", "split"}, ...],
      "device": "cpu" | "cuda",        # set by the engine for the slot it runs on
      "events_of": "9c1e...",          # optional: keep this trial's privacy events
    }

With ``events_of`` the chunk keeps that one model's privacy events while it trains
(:class:`raudit.generators.transcript.ModelEvents`, an observer: the models are the
same with or without it) and writes the eps_true of that model's mechanism as
implemented on its row (``eps_true``, ``eps_true_method``, ``eps_true_source``):
the black-box summary's eps_true for generators whose votes depend on training.

It returns one ``shadow`` row per trial (see :mod:`raudit.results.schema`), every
row with status "ok"; an exception means the whole chunk failed (the engine
retries it and then records its trials as failed, see :func:`failed_rows`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from raudit import data, generators, seeds
from raudit.attacks import AttackContext, extract
from raudit.audit import game as g
from raudit.errors import DataError, clip_error
from raudit.generators.plugin_process import cpu_seconds
from raudit.results.ids import canonical_json


def load_train(game_spec: Mapping[str, Any]):
    """The dataset of a game spec (parsing is cached per process), checked against its digest."""
    ds = data.load(game_spec["dataset"], label=game_spec.get("label"),
                   bounds=game_spec.get("bounds"))
    digest = g.data_digest(ds.train)
    if digest != game_spec["data_digest"]:
        raise DataError(f"dataset {game_spec['dataset']!r} here differs from the audit's "
                        f"(digest {digest} != {game_spec['data_digest']}); every worker must "
                        "read the same data")
    return ds


def attack_context(train, game_spec: Mapping[str, Any], holdout=None) -> AttackContext:
    """The attacker's knowledge: D_out as the reference, the target record, the settings,
    and ``holdout`` (the dataset's test split: real rows no shadow model trains on) as the
    density-ratio attack's population sample."""
    target = game_spec["target"]
    return AttackContext.build(g.reference(train, target), train.loc[target],
                               holdout=holdout, training=train,
                               **dict(game_spec.get("context") or {}))


_CONTEXTS: dict[tuple, AttackContext] = {}
_CONTEXTS_KEPT = 256  # a selection's candidates (64 by default) with room to spare


def verified_context(train, game_spec: Mapping[str, Any], holdout=None) -> AttackContext:
    """:func:`attack_context` for a ``train`` that :func:`load_train` checked against the
    spec's data digest, kept per process: an actor runs many chunks of one audit, and a
    pool chunk needs one context per candidate (64 builds a chunk otherwise)."""
    key = (game_spec["data_digest"], repr(game_spec["target"]),
           canonical_json(dict(game_spec.get("context") or {})))
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        ctx = attack_context(train, game_spec, holdout)
        if len(_CONTEXTS) >= _CONTEXTS_KEPT:
            _CONTEXTS.pop(next(iter(_CONTEXTS)))  # the oldest
        _CONTEXTS[key] = ctx
    return ctx


def build_generator(game_spec: Mapping[str, Any], device: str | None):
    cls = generators.get(game_spec["impl"])
    kwargs = dict(game_spec.get("options") or {})
    # The slot decides the device, not the audit spec (trial ids stay device-free).
    if device and cls.describe().device:
        kwargs["device"] = device
    return cls(**kwargs)


def sample_models(models: Sequence[Any], n: int, seeds: Sequence[int]):
    sample_many = getattr(type(models[0]), "sample_many", None)
    if sample_many is not None and all(type(m) is type(models[0]) for m in models):
        return sample_many(models, n, seeds)  # one forward pass per training batch
    return [m.sample(n, seed=s) for m, s in zip(models, seeds)]


def synthesize(spec: Mapping[str, Any]):
    """Train the chunk's models and sample their synthetic tables: (dataset, models, tables).

    The synthetic tables are exactly what the attack sees; a data-only audit of them
    (:mod:`raudit.audit.external`) reproduces this chunk's features.
    """
    return _synthesize(spec)[:3]


def _synthesize(spec: Mapping[str, Any], observer=None):
    """:func:`synthesize` plus the CPU seconds of the chunk's training (this process's)."""
    gs, world, trials = spec["game"], spec["world"], list(spec["trials"])
    ds = load_train(gs)
    # D_in is the data itself, whatever the target: an early chunk (no target yet) trains it
    table = (g.in_world(ds.train) if world == "in" else
             g.worlds(ds.train, gs["target"], gs.get("neighbours", "add-remove"))[world])
    gen = build_generator(gs, spec.get("device"))
    c0 = cpu_seconds()  # an exec: plugin's program trains in a child process
    models = gen.fit_many([table] * len(trials), epsilon=gs["epsilon"], delta=gs["delta"],
                          seeds=[t["seed"] for t in trials], columns=ds.columns,
                          **({} if observer is None else {"observer": observer}))
    train_cpu = cpu_seconds() - c0
    n_rows = g.sample_size(gs, table)
    return ds, models, sample_models(models, n_rows, [t["sample_seed"] for t in trials]), train_cpu


def run_chunk(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Train, sample and featurise the chunk's shadow models (see the module docstring)."""
    t0 = time.perf_counter()
    if not spec["trials"]:
        return []
    return featurised_rows(spec, _trained(spec), t0)


def run_early_chunk(spec: Mapping[str, Any]) -> dict[str, Any]:
    """An in-world chunk trained before its audit's target is chosen: D_in is the data
    itself and a model's seeds do not depend on the target, so the models are the game's
    own; only the attack's features need the target. Returns what :func:`featurised_rows`
    needs to finish the chunk's rows in the driver once the target is known (the synthetic
    tables, the models' summaries, the kept model's eps_true), not the models. The spec is
    an in-world chunk's whose trials carry no id, ``events_index`` in place of
    ``events_of``; black-box, one sample per model (what :func:`raudit.runs.jobs` sends)."""
    t0 = time.perf_counter()
    trained = _trained(spec)
    trained.pop("models")
    return {**trained, "seconds": time.perf_counter() - t0, "device": spec.get("device") or "cpu"}


def _trained(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The chunk's trained models, their synthetic tables and summaries, the training CPU
    seconds and the kept model's eps_true columns (``{}`` if none is kept)."""
    kept = _event_log(spec)
    ds, models, synths, train_cpu = _synthesize(spec, None if kept is None else kept[1])
    summaries = [m.summary() for m in models]
    eps_true: dict[str, Any] = {}
    if kept is not None:
        j, log = kept
        t = spec["trials"][j]
        row = {"world": spec["world"], "shadow_index": int(t["shadow_index"]),
               "seed": int(t["seed"]),
               "delta": as_float(summaries[j].get("delta", spec["game"].get("delta")))}
        eps_true = {"index": j, **_eps_true_columns(log, row, spec["game"])}
    return {"models": models, "synths": synths, "summaries": summaries,
            "train_cpu": train_cpu, "eps_true": eps_true}


def featurised_rows(spec: Mapping[str, Any], trained: Mapping[str, Any],
                    t0: float) -> list[dict[str, Any]]:
    """The chunk's ``shadow`` rows from :func:`_trained`'s result (``models`` may be absent:
    an early chunk's, which is black-box with one sample per model). ``t0``: when the
    chunk's work began (the rows' ``wall_s``)."""
    gs, trials = spec["game"], list(spec["trials"])
    synths, summaries, models = trained["synths"], trained["summaries"], trained.get("models")
    ds = load_train(gs)
    n_rows = len(synths[0])
    ctx = verified_context(ds.train, gs, ds.test)
    X = extract(gs["features"], synths, ctx)
    if gs.get("white_box"):  # the attacker also reads the trained models, here in the chunk
        from raudit.audit.whitebox import features as white_box_features

        X = [np.concatenate([np.asarray(x, dtype=float), w])
             for x, w in zip(X, white_box_features(models, ctx, spec))]
    extra = _extra_features(spec, models, n_rows, ctx) if models is not None else None
    wall = (time.perf_counter() - t0) / len(trials)
    base = {**row_base(spec), "synthetic_rows": n_rows}
    train_cpu = trained["train_cpu"]
    rows = []
    for t, s, x in zip(trials, summaries, X):
        rows.append({**base, "trial_id": t["trial_id"], "shadow_index": int(t["shadow_index"]),
                     "seed": int(t["seed"]), "sample_seed": int(t["sample_seed"]),
                     "split": t["split"], "iterations": int(s.get("iterations", 0) or 0),
                     "eps_hat": as_float(s.get("eps_hat")), "wall_s": wall, "status": "ok",
                     "error": None, "features_vec": np.asarray(x, dtype=float),
                     "delta": as_float(s.get("delta", gs.get("delta"))),
                     "train_cpu_s": train_cpu / len(trials),
                     **({"features_extra": next(extra)} if extra is not None else {})})
    if trained["eps_true"]:
        cols = dict(trained["eps_true"])
        rows[cols.pop("index")].update(cols)
    return rows


def _event_log(spec: Mapping[str, Any]):
    """(position, observer) of the trial whose events the chunk keeps, or None."""
    if spec.get("events_index") is not None:  # an early chunk: its trials have no ids yet
        j = int(spec["events_index"])
    else:
        wanted = spec.get("events_of")
        if wanted is None:
            return None
        ids = [t["trial_id"] for t in spec["trials"]]
        if wanted not in ids:
            return None
        j = ids.index(wanted)
    from raudit.generators.transcript import ModelEvents

    return j, ModelEvents(j)


def _eps_true_columns(log, row: Mapping[str, Any], gs: Mapping[str, Any]) -> dict[str, Any]:
    """The kept model's eps_true (at the delta it trained with) and where it came from."""
    from raudit.errors import RauditError

    source = (f"events of shadow model {row['world']}/{row['shadow_index']} (fit seed "
              f"{row['seed']}), kept by the chunk that trained it")
    try:
        true = log.eps_true(delta=float(row["delta"]), neighbours=gs.get("neighbours", "add-remove"))
    except RauditError as exc:  # e.g. the model released nothing the accountants model
        return {"eps_true": None, "eps_true_method": None,
                "eps_true_source": f"not computed: {exc}"}
    note = f"; {true.sensitivity} teacher(s) per row" + (f"; {true.note}" if true.note else "")
    return {"eps_true": float(true.eps), "eps_true_method": true.method,
            "eps_true_source": source + note}


def _extra_features(spec: Mapping[str, Any], models, n_rows: int, ctx):
    """The features of each model's extra synthetic datasets (samples_per_model - 1 of
    them, each with its own seed), as an iterator of one list of vectors per model."""
    gs = spec["game"]
    k_extra = int(gs.get("samples_per_model", 1)) - 1
    if k_extra < 1:
        return None
    per_model: list[list[list[float]]] = [[] for _ in models]
    for k in range(1, k_extra + 1):
        sample_seeds = [seeds.extra_sample_seed(gs["seed"], spec["world"], int(t["shadow_index"]), k)
                        for t in spec["trials"]]
        Xk = extract(gs["features"], sample_models(models, n_rows, sample_seeds), ctx)
        for lst, x in zip(per_model, Xk):
            lst.append([float(v) for v in x])
    return iter(per_model)


def failed_rows(spec: Mapping[str, Any], error: str) -> list[dict[str, Any]]:
    """Rows recording every trial of a chunk that failed for good, with its error."""
    base = row_base(spec)
    return [{**base, "trial_id": t["trial_id"], "shadow_index": int(t["shadow_index"]),
             "seed": int(t["seed"]), "sample_seed": int(t["sample_seed"]), "split": t["split"],
             "status": "failed", "error": clip_error(error)} for t in spec["trials"]]


def row_base(spec: Mapping[str, Any]) -> dict[str, Any]:
    gs = spec["game"]
    return {"audit_id": spec["audit_id"], "impl": gs["impl"], "dataset": gs["dataset"],
            "attack": gs["attack"], "features": gs["features"], "world": spec["world"],
            "target": str(gs["target"]), "synthetic_rows": int(gs["synthetic_rows"]),
            "chunk_models": len(spec["trials"]), "device": spec.get("device") or "cpu",
            "delta": None if gs.get("delta") is None else float(gs["delta"]),
            "options_json": canonical_json(gs.get("options") or {})}


def as_float(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")
