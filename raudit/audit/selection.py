"""Target selection whose cost does not grow with the number of candidates: one shared pool.

The study's average case scores each of C outlying candidates with its own
mini-MIA of P in/out pairs: 2*C*P models (12,800 at the defaults), more than the
audit itself. Here one pool of P models scores every candidate at once:

* the models come in pairs; model 2i is trained on D without a random half S_i
  of the candidates, model 2i+1 on D without the other half. So every model drops
  exactly C/2 candidates (all tables have |D| - C/2 rows, one batched call), and
  every candidate is *in* exactly once per pair: P/2 in and P/2 out models each;
* for candidate c, the pool's models are its shadow models, labelled by whether c
  was in their training data; the attack's features are computed with c as the
  target (D without c as the reference), pairs 0..P/4-1 train the attack
  classifier and the rest score it, exactly as in the per-candidate mini-MIA;
* the candidate with the highest AUC becomes the target.

The other candidates being in or out is noise common to both labels, the price
of sharing (the "online" shadow models of LiRA work the same way). The
per-candidate protocol stays available (``--target-selection per-candidate``).
Rows (one per model x candidate) go to ``OUT/target-selection``, so an interrupted
selection resumes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from raudit import seeds
from raudit.attacks import extract_many
from raudit.audit import game as g
from raudit.audit.chunk import (as_float, build_generator, load_train, row_base,
                               sample_models, verified_context)
from raudit.errors import ConfigError, clip_error
from raudit.results.ids import trial_id

SELECTION_STREAM = seeds.SELECTION  # shared with the per-candidate mode
PROTOCOLS = ("pool", "per-candidate")


def check_pool(models: int, candidates: int) -> None:
    if models < 8 or models % 2:
        raise ConfigError(f"--selection-models must be an even number >= 8 (pairs, half train, "
                          f"half test), got {models}")
    if candidates < 2:
        raise ConfigError(f"--target-candidates must be at least 2 for the pooled selection "
                          f"(got {candidates}); use --target-selection per-candidate or give "
                          "--target ROWID")


def design(root: int, n_models: int, n_candidates: int) -> np.ndarray:
    """Boolean (n_models, n_candidates): True where the model trains WITH the candidate."""
    rng = np.random.default_rng(np.random.SeedSequence(int(root), spawn_key=(seeds.SELECTION,
                                                                              seeds.POOL_DESIGN)))
    inside = np.zeros((n_models, n_candidates), dtype=bool)
    for pair in range(n_models // 2):
        half = rng.permutation(n_candidates)[: n_candidates // 2]
        inside[2 * pair, half] = True
        inside[2 * pair + 1] = ~inside[2 * pair]
    return inside


def pool_trials(game: g.Game, candidates: Sequence[Any], n_models: int) -> list[dict[str, Any]]:
    """The pool's models: seeds, the split of their pair, and the candidates they drop."""
    inside = design(game.seed, n_models, len(candidates))
    base = {**game.spec(), "target": "auto", "candidates": [str(c) for c in candidates],
            "stream": SELECTION_STREAM, "pool": n_models}
    out = []
    for i in range(n_models):
        fit_seed, sample_seed = g.model_seeds(game.seed, "in", i, stream=SELECTION_STREAM)
        out.append({"trial_id": trial_id({**base, "index": i}), "shadow_index": i,
                    "seed": fit_seed, "sample_seed": sample_seed,
                    "split": "train" if i < n_models // 2 else "test",
                    "inside": inside[i].tolist()})
    return out


def candidate_trial_id(model_trial: str, candidate: Any) -> str:
    """The id of one (pool model, candidate) row."""
    return trial_id({"model": model_trial, "candidate": str(candidate)})


def run_pool_chunk(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Train a chunk of pool models; one row per (model, candidate) with c's features.

    spec: {"audit_id", "game" (target: the first candidate, used for row metadata),
    "candidates": [row ids], "trials": pool_trials(...) subset, "device"}.
    """
    t0 = time.perf_counter()
    gs, trials = spec["game"], list(spec["trials"])
    if not trials:
        return []
    ds = load_train(gs)
    cands = list(spec["candidates"])
    tables = []
    for t in trials:
        dropped = [c for c, keep in zip(cands, t["inside"]) if not keep]
        table = ds.train.drop(index=dropped)
        table.attrs[g.SINGLE_CLASS_OK] = True
        tables.append(table)
    gen = build_generator(gs, spec.get("device"))
    models = gen.fit_many(tables, epsilon=gs["epsilon"], delta=gs["delta"],
                          seeds=[t["seed"] for t in trials], columns=ds.columns)
    synths = sample_models(models, int(gs["synthetic_rows"]), [t["sample_seed"] for t in trials])
    wall = (time.perf_counter() - t0) / len(trials)
    # One context per candidate, but each synthetic table's features computed once per
    # distinct thing they read (naive: only the columns), not once per candidate.
    per_cand = extract_many(gs["features"], synths,
                            [verified_context(ds.train, {**gs, "target": c}, ds.test)
                             for c in cands])
    summaries = [m.summary() for m in models]
    rows = []
    for j, (c, X) in enumerate(zip(cands, per_cand)):
        for t, s, x in zip(trials, summaries, X):
            rows.append({**_row(spec, j, c, t), "iterations": int(s.get("iterations", 0) or 0),
                         "eps_hat": as_float(s.get("eps_hat")), "wall_s": wall, "status": "ok",
                         "error": None, "features_vec": np.asarray(x, dtype=float)})
    return rows


def failed_pool_rows(spec: Mapping[str, Any], error: str) -> list[dict[str, Any]]:
    """Failed rows for every (model, candidate) of a chunk that failed for good."""
    return [{**_row(spec, j, c, t), "status": "failed", "error": clip_error(error)}
            for j, c in enumerate(spec["candidates"]) for t in spec["trials"]]


def _row(spec: Mapping[str, Any], j: int, candidate: Any, t: Mapping[str, Any]) -> dict:
    """What every row of (pool model ``t``, candidate number ``j``) carries."""
    world = "in" if t["inside"][j] else "out"
    return {**row_base({**spec, "game": {**spec["game"], "target": candidate}, "world": world}),
            "trial_id": candidate_trial_id(t["trial_id"], candidate),
            "shadow_index": int(t["shadow_index"]), "seed": int(t["seed"]),
            "sample_seed": int(t["sample_seed"]), "split": t["split"]}


def pool_chunks(game: g.Game, audit_id: str, candidates: Sequence[Any], trials: list[dict],
                done: set[str], chunk_size: int) -> list[dict[str, Any]]:
    """Pending pool models as chunk specs (a model is done when all its rows are)."""
    pending = [t for t in trials
               if not all(candidate_trial_id(t["trial_id"], c) in done for c in candidates)]
    spec = {**game.spec(), "target": candidates[0]}
    return [{"audit_id": audit_id, "game": spec, "world": "in",
             "candidates": [c.item() if hasattr(c, "item") else c for c in candidates],
             "trials": pending[i:i + chunk_size]}
            for i in range(0, len(pending), chunk_size)]
