"""The head start (raudit.engine.head): while Ray starts in the background, the driver
trains the queue's first chunks; each chunk is taken by exactly one of the driver and the
pool, a chunk that fails in the driver goes back to the queue untried, and an audit whose
first chunks ran in the driver stores the same rows as the local backend."""

from __future__ import annotations

import os
import threading
import time
from collections import deque

import pandas as pd
import pytest

from raudit.engine.head import Head


def _entries(n):
    return deque(({"i": i}, 0, 0) for i in range(n))


def test_the_driver_takes_chunks_from_the_front_until_stopped():
    queue, gate = _entries(6), threading.Event()

    def fn(spec):
        if spec["i"] == 1:
            gate.wait(5)  # the second chunk holds the driver until the pool is "up"
        return spec["i"] * 10

    head = Head(fn, queue)
    while len(queue) > 4:  # it has taken chunks 0 and 1
        time.sleep(0.01)
    head.stop()
    gate.set()
    assert head.idle.wait(5)
    done = head.collect()
    assert [(e[0]["i"], r, err) for e, r, err in done] == [(0, 0, None), (1, 10, None)]
    assert [e[0]["i"] for e in queue] == [2, 3, 4, 5]  # the rest, untouched, for the pool
    assert head.ran == 2 and not head.busy()


def test_a_chunk_that_fails_in_the_driver_is_handed_back_untried():
    queue = _entries(1)

    def fn(spec):
        raise ValueError("broken here")

    head = Head(fn, queue)
    assert head.idle.wait(5)
    ((entry, result, error),) = head.collect()
    assert entry == ({"i": 0}, 0, 0) and result is None and "broken here" in error
    assert head.ran == 0


def test_a_head_stopped_at_once_loses_or_doubles_nothing():
    queue = _entries(3)
    head = Head(lambda spec: spec["i"], queue)
    head.stop()
    assert head.idle.wait(5)
    taken = [e[0]["i"] for e, _, _ in head.collect()]
    assert taken + [e[0]["i"] for e in queue] == [0, 1, 2]  # whatever the thread managed


@pytest.mark.ray
@pytest.mark.slow
def test_an_audit_whose_first_chunks_ran_in_the_driver_equals_the_local_one(
        monkeypatch, tmp_path):
    ray = pytest.importorskip("ray")
    if ray.is_initialized() or os.environ.get("RAY_ADDRESS"):
        pytest.skip("needs a local instance started by the audit")
    from raudit.audit.runner import AuditRequest
    from raudit.engine import actors, ray_run
    from raudit.engine.driver import EngineConfig
    from raudit.generators.kwargs import generator_kwargs
    from raudit.runs.audit import run_audit

    real_init = actors._init

    def slow_init(workers):  # Ray's start takes long enough for the driver to train
        time.sleep(4)
        real_init(workers)

    heads = []

    class Seen(Head):
        def __init__(self, *args):
            super().__init__(*args)
            heads.append(self)

    monkeypatch.setattr(actors, "_init", slow_init)
    monkeypatch.setattr(ray_run, "Head", Seen)
    options = generator_kwargs("smartnoise", preset=None, teachers=None, lam=None, max_iter=3,
                               device=None, options=None)
    req = AuditRequest(impl="smartnoise", attack="groundhog", dataset="breast-cancer",
                       target="auto", shadow_models=10, chunk_size=3, selection_models=8,
                       target_candidates=4, options=options)
    a = run_audit(req, tmp_path / "ray", EngineConfig(backend="ray", workers=1))
    assert heads and heads[0].ran >= 1  # the driver trained the first chunk(s)
    assert not ray.is_initialized()
    b = run_audit(req, tmp_path / "local", EngineConfig(backend="local"))
    cols = ["trial_id", "world", "split", "seed", "sample_seed", "iterations", "eps_hat",
            "eps_true", "chunk_models", "target"]
    for part in ("target-selection/shadow", "shadow"):
        ra = pd.read_parquet(tmp_path / "ray" / part).sort_values("trial_id").reset_index(drop=True)
        lo = pd.read_parquet(tmp_path / "local" / part).sort_values("trial_id").reset_index(drop=True)
        assert ra["trial_id"].is_unique and (ra["status"] == "ok").all()
        common = [c for c in cols if c in ra and c in lo]
        pd.testing.assert_frame_equal(ra[common], lo[common])
    for key in ("target", "auc", "eps_cp", "eps_bayes", "eps_true", "selection_models"):
        assert a[key] == b[key], key
