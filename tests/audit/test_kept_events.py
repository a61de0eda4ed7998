"""eps_true on black-box summaries of the ports: one shadow model's chunk keeps its privacy
events while it trains (no retraining), and the summary reads eps_true off its row."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from raudit.audit import chunk
from raudit.audit.game import trials
from raudit.audit.runner import AuditRequest, chunk_specs, prepare
from raudit.audit.mechanisms import event_trial, mechanism_columns
from raudit.data.dataset import infer_columns
from raudit.events import EventLog
from raudit.generators.transcript import ModelEvents, run_eps_true

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))
from test_generator_contract import FAST_FOR, make, small_table  # noqa: E402

PORTS = ["smartnoise", "borealis", "synthcity", "updated", "dpgan", "gpate"]


@pytest.mark.parametrize("name", PORTS + ["paper", "fixed"])
def test_one_model_log_gives_the_full_logs_eps_true(name):
    df = small_table()
    log, one = EventLog(), ModelEvents(1)

    def both(e):
        log(e)
        one(e)
    make(name).fit_many([df] * 2, epsilon=5.0, seeds=[1, 2], columns=infer_columns(df),
                        observer=both)
    full, kept = run_eps_true(log.events, delta=1e-5, model=1), one.eps_true(delta=1e-5)
    assert (kept.eps, kept.method, kept.sensitivity, kept.note) == \
        (full.eps, full.method, full.sensitivity, full.note)
    assert kept.releases == full.releases


def _game_chunk(impl: str, options: dict):
    req = AuditRequest(impl=impl, attack="querybased", shadow_models=5, epsilon=5.0,
                       options={**options, **FAST_FOR.get(impl, {})})
    game, _, _ = prepare(req)
    ts = trials(game, world="in", count=2)
    return game, {"audit_id": "x", "game": game.spec(), "world": "in", "trials": ts}


@pytest.mark.parametrize("impl", PORTS)
def test_keeping_the_events_changes_no_model(impl):
    game, spec = _game_chunk(impl, {"max_iter": 2})
    plain = chunk.run_chunk(spec)
    kept = chunk.run_chunk({**spec, "events_of": spec["trials"][1]["trial_id"]})
    for a, b in zip(plain, kept):
        np.testing.assert_array_equal(a["features_vec"], b["features_vec"])
        assert (a["iterations"], a["eps_hat"]) == (b["iterations"], b["eps_hat"])
    assert "eps_true" not in plain[1] and "eps_true" not in kept[0]
    row = kept[1]
    assert row["eps_true_source"].startswith("events of shadow model in/1 (fit seed ")
    # the same model trained alone, with a full event log
    log = EventLog()
    ds_table = chunk.load_train(spec["game"])
    from raudit.audit.game import worlds
    table = worlds(ds_table.train, game.target)["in"]
    chunk.build_generator(spec["game"], None).fit_many(
        [table] * 2, epsilon=game.epsilon, delta=game.delta, seeds=[t["seed"] for t in spec["trials"]],
        columns=ds_table.columns, observer=log)
    want = run_eps_true(log.events, delta=float(row["delta"]), model=1)
    assert row["eps_true"] == want.eps and row["eps_true_method"] == want.method


def test_which_trial_keeps_its_events():
    game, spec = _game_chunk("smartnoise", {"max_iter": 2})
    per_world = {w: trials(game, world=w) for w in ("out", "in")}
    first_in = per_world["in"][0]["trial_id"]
    assert event_trial(game, per_world) == first_in
    specs = chunk_specs(game, "x", per_world, set(), 2, event_trial(game, per_world))
    marked = [s for s in specs if "events_of" in s]
    assert len(marked) == 1 and marked[0]["world"] == "in" and marked[0]["trials"][0]["trial_id"] == first_in
    # resumed past it: no chunk keeps events
    assert not any("events_of" in s for s in chunk_specs(game, "x", per_world, {first_in}, 2,
                                                        first_in))
    # a dry run gives paper's (capped or not) and fixed's eps_true; gan and identity emit
    # no privacy events; fixed's data-dependent analysis has no dry run
    for impl, options, keeps in [("paper", {}, False), ("fixed", {}, False),
                                 ("paper", {"max_iter": 3}, False),
                                 ("fixed", {"analysis": "data-dependent", "max_iter": 2}, True),
                                 ("gan", {"max_iter": 2}, False),
                                 ("identity", {}, False)]:
        g, _ = _game_chunk(impl, options)
        assert (event_trial(g, per_world) is not None) == keeps, impl


def test_summary_reads_eps_true_off_the_kept_row():
    game = types.SimpleNamespace(impl="smartnoise", options={}, epsilon=1.0, delta=0.089,
                                 white_box=None)
    kept = pd.DataFrame({"world": ["out", "in", "in"], "shadow_index": [0, 1, 0],
                         "eps_true": [None, None, 0.25], "eps_true_method": [None, None, "pld"],
                         "eps_true_source": [None, None, "events of shadow model in/0 (...)"]})
    cols = mechanism_columns(game, kept)
    assert cols["eps_true"] == 0.25 and cols["eps_true_method"] == "pld"
    assert cols["eps_true_source"].startswith("events of shadow model in/0")
    old = kept.drop(columns=["eps_true", "eps_true_method", "eps_true_source"])
    none = mechanism_columns(game, old)  # a store written before schema 12
    assert none["eps_true"] is None and "no shadow model's events were kept" in none["eps_true_source"]
