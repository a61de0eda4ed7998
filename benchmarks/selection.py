"""Target selection against a game of the same number of models, by CPU time, in-process.

    RAUDIT_DATA_DIR=... python benchmarks/selection.py [--impl smartnoise] [--dataset cervical]
        [--pool 200] [--candidates 64] [--chunk 32] [--repeats 1]

Times (this process's CPU seconds, one torch thread, no Ray, no result store) the
pooled target selection of ``--pool`` models and ``--candidates`` candidates (the pool's
chunks: training, sampling, features; then the candidates' attack fits and AUCs), and
then a game of the same number of models (``--pool / 2`` per world) with the chosen
target (its chunks, then the analysis). Prints both, the parts, and their ratio
(the issue's target: selection <= 1.1x the game). Store writes and reads are left out
of both (0.1-0.3 s at these sizes).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
import torch

from raudit.audit import selection as sel
from raudit.audit import targets as tg
from raudit.audit.analyse import analyse
from raudit.audit.chunk import run_chunk
from raudit.audit.game import trials
from raudit.audit.runner import AuditRequest, chunk_specs, prepare


def cpu(fn):
    c0 = time.process_time()
    out = fn()
    return out, time.process_time() - c0


def selection(game, ds, pool: int, n_cands: int, chunk: int):
    cands = tg.candidates_of(ds.train, n_cands)
    trials_ = sel.pool_trials(game, cands, pool)
    specs = sel.pool_chunks(game, "target-selection", cands, trials_, set(), chunk)
    rows, t_pool = cpu(lambda: [r for s in specs for r in sel.run_pool_chunk(s)])
    shadow = pd.DataFrame(rows)
    ids = {c: {sel.candidate_trial_id(t["trial_id"], c) for t in trials_} for c in cands}

    def score():
        return tg.choose([(c, tg.candidate_auc(shadow, ids[c], game.seed)) for c in cands])

    (row, _), t_score = cpu(score)
    return row, t_pool, t_score


def game_of(game, pool: int, chunk: int):
    per_world = {w: trials(game, world=w, count=pool // 2) for w in ("out", "in")}
    specs = chunk_specs(game, "bench", per_world, set(), chunk)
    rows, t_train = cpu(lambda: [r for s in specs for r in run_chunk(s)])
    shadow = pd.DataFrame(rows)
    ids = {t["trial_id"] for ts in per_world.values() for t in ts}
    _, t_analyse = cpu(lambda: analyse(shadow, trial_ids=ids, seed=game.seed, delta=game.delta))
    return t_train, t_analyse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", default="smartnoise")
    ap.add_argument("--dataset", default="cervical")
    ap.add_argument("--attack", default="groundhog")
    ap.add_argument("--pool", type=int, default=200)
    ap.add_argument("--candidates", type=int, default=64)
    ap.add_argument("--chunk", type=int, default=32)
    a = ap.parse_args()
    torch.set_num_threads(1)
    req = AuditRequest(impl=a.impl, attack=a.attack, dataset=a.dataset, target="auto",
                       shadow_models=a.pool // 2, selection_models=a.pool,
                       target_candidates=a.candidates, chunk_size=a.chunk)
    game, _, ds = prepare(req)
    row, t_pool, t_score = selection(game, ds, a.pool, a.candidates, a.chunk)
    t_train, t_analyse = game_of(tg.candidate_game(game, row), a.pool, a.chunk)
    s, g = t_pool + t_score, t_train + t_analyse
    print(f"{a.impl} on {a.dataset}, {a.attack}, M={a.chunk}, 1 thread, CPU seconds:")
    print(f"  selection: {s:.1f} (pool of {a.pool}: {t_pool:.1f}; {a.candidates} candidates' "
          f"attack fits and AUCs: {t_score:.1f}); target row {row}")
    print(f"  game of {a.pool} models: {g:.1f} (chunks {t_train:.1f}, analysis {t_analyse:.1f})")
    print(f"  selection / game = {s / g:.2f}")


if __name__ == "__main__":
    main()
