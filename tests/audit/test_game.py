"""The game: splits, seeds (deterministic, independent of chunking), worlds, chunks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit import data
from raudit.audit import game as g
from raudit.audit.chunk import failed_rows, run_chunk
from raudit.audit.runner import AuditRequest, chunk_specs, prepare
from raudit.errors import ConfigError
from raudit.generators.base import SINGLE_CLASS_OK


def _game(**kw):
    base = dict(impl="identity", attack="querybased", shadow_models=20)
    return prepare(AuditRequest(**{**base, **kw}))[0]


def test_split_sizes_follow_the_study():
    assert g.split_sizes(1000) == {"train": 400, "val": 200, "test": 400}
    assert g.split_sizes(5) == {"train": 2, "val": 1, "test": 2}
    assert g.split_sizes(101) == {"train": 40, "val": 20, "test": 41}
    splits = [g.split_of(i, 1000) for i in range(1000)]
    assert splits[:400] == ["train"] * 400 and splits[400:600] == ["val"] * 200
    assert splits[600:] == ["test"] * 400
    for bad in (4, 0, -3, 2.5, True):
        with pytest.raises(ConfigError):
            g.split_sizes(bad)


def test_seeds_are_deterministic_distinct_and_derived_from_the_root():
    game = _game()
    a, b = g.trials(game, world="in"), g.trials(game, world="in")
    assert a == b
    out = g.trials(game, world="out")
    seeds = [t["seed"] for t in a + out] + [t["sample_seed"] for t in a + out]
    assert len(set(seeds)) == len(seeds)  # no two models (or streams) share a seed
    assert len({t["trial_id"] for t in a + out}) == 2 * game.shadow_models
    other = _game(seed=1)
    assert {t["seed"] for t in g.trials(other, world="in")}.isdisjoint({t["seed"] for t in a})
    assert g.model_seeds(0, "in", 3) == (a[3]["seed"], a[3]["sample_seed"])
    # the selection stream never reuses the game's seeds
    assert g.model_seeds(0, "in", 3, stream=1)[0] != a[3]["seed"]


def test_chunking_does_not_change_trials():
    game = _game()
    per_world = {w: g.trials(game, world=w) for w in ("out", "in")}
    key = lambda specs: sorted((s["world"], t["trial_id"], t["seed"], t["split"])  # noqa: E731
                               for s in specs for t in s["trials"])
    small, big = (chunk_specs(game, "x", per_world, set(), m) for m in (3, 100))
    assert key(small) == key(big) and len(key(big)) == 40
    assert len(small) == 14 and all(len({s["world"]}) == 1 for s in small)
    assert [s["world"] for s in small[:4]] == ["out", "in", "out", "in"]  # worlds alternate
    done = {per_world["in"][0]["trial_id"], per_world["out"][5]["trial_id"]}
    assert len(key(chunk_specs(game, "x", per_world, done, 7))) == 38
    # each world's remainder is queued last (out 20 = 6 x 3 + 2, in 16 pending = 5 x 3 + 1),
    # so the pool's last chunks are the short ones; a world's chunks keep their order
    done = {t["trial_id"] for t in per_world["in"][:4]}
    resumed = chunk_specs(game, "x", per_world, done, 3)
    assert [len(s["trials"]) for s in resumed] == [3] * 11 + [2, 1]
    for w in ("out", "in"):
        idx = [t["shadow_index"] for s in resumed if s["world"] == w for t in s["trials"]]
        assert idx == sorted(idx)


def test_worlds_differ_by_the_target_only():
    train = data.load("worst-case").train
    w = g.worlds(train, 4)
    assert len(w["in"]) == 5 and len(w["out"]) == 4 and 4 not in w["out"].index
    assert w["out"].attrs[SINGLE_CLASS_OK] and w["in"].attrs[SINGLE_CLASS_OK]
    pd.testing.assert_frame_equal(w["in"], train)
    r = g.worlds(train, 4, "replace")
    assert len(r["out"]) == 5 and (r["out"].to_numpy() == 0).all()  # (1,1,1) -> a copy of (0,0,0)
    with pytest.raises(ConfigError):
        g.Game(**{**_game().__dict__, "neighbours": "swap"})


def test_find_target_accepts_row_ids_and_refuses_others():
    train = data.load("worst-case").train
    assert g.find_target(train, "4") == 4 and g.find_target(train, "row:2") == 2
    assert g.find_target(train, 0) == 0
    with pytest.raises(ConfigError, match="not in the training data"):
        g.find_target(train, "99")
    with pytest.raises(ConfigError, match="not in the training data"):
        g.find_target(train, "row:abc")


def _features(game, world, trials, chunk):
    specs = [{"audit_id": "x", "game": game.spec(), "world": world, "trials": trials[i:i + chunk],
              "device": "cpu"} for i in range(0, len(trials), chunk)]
    rows = [r for s in specs for r in run_chunk(s)]
    return {r["trial_id"]: r["features_vec"] for r in rows}, rows


@pytest.mark.parametrize("impl,options", [("independent", {}), ("paper", {"max_iter": 3})])
def test_run_chunk_results_do_not_depend_on_chunk_size(impl, options):
    game = _game(impl=impl, options=options)
    ts = g.trials(game, world="out")[:6]
    one, rows = _features(game, "out", ts, 1)
    six, _ = _features(game, "out", ts, 6)
    assert one.keys() == six.keys()
    for k in one:
        np.testing.assert_allclose(one[k], six[k])
    assert {r["status"] for r in rows} == {"ok"} and all(r["chunk_models"] == 1 for r in rows)
    if impl == "paper":
        assert all(r["iterations"] == 3 for r in rows)


def test_both_worlds_sample_the_same_number_of_rows():
    # querybased counts sum to the row count: with |D_in| rows in BOTH worlds the sum
    # tells the attacker nothing.
    game = _game()
    sums = {w: {float(v.sum()) for v in _features(game, w, g.trials(game, world=w)[:5], 5)[0].values()}
            for w in ("out", "in")}
    assert sums == {"out": {5.0}, "in": {5.0}}
    game3 = _game(synthetic_rows=3)
    assert {float(v.sum()) for v in _features(game3, "out", g.trials(game3, world="out")[:2], 2)[0]
            .values()} == {3.0}


def test_failed_rows_record_every_trial_of_the_chunk():
    game = _game()
    spec = {"audit_id": "x", "game": game.spec(), "world": "in", "trials": g.trials(game, world="in")[:3]}
    rows = failed_rows(spec, "boom")
    assert [r["status"] for r in rows] == ["failed"] * 3 and rows[0]["error"] == "boom"
    assert rows[0]["world"] == "in" and rows[0]["target"] == "4"
