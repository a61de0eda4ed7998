"""The game's first in-world chunks trained while the target is chosen (raudit.runs.early):
whatever order the pool finishes them in (before the choice, after it, interleaved with the
game's own chunks), every trial is stored exactly once, with the numbers of the plain order
(features, iterations, eps_hat, the kept model's eps_true), and the audit's result is the
same. A failed early chunk is recorded like any failed chunk."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.generators.kwargs import generator_kwargs
from raudit.results import ResultStore
from raudit.runs import dispatch
from raudit.runs.audit import run_audit
from raudit.runs.jobs import AuditJob

RAY = EngineConfig(backend="ray", workers=2)  # never started here: the specs are run by hand
TIMINGS = ("wall_s", "train_cpu_s")


def _request(**kw) -> AuditRequest:
    options = generator_kwargs("smartnoise", preset=None, teachers=None, lam=None, max_iter=3,
                               device=None, options=None)
    return AuditRequest(impl="smartnoise", attack="groundhog", dataset="breast-cancer",
                        target="auto", shadow_models=10, chunk_size=3, selection_models=8,
                        target_candidates=4, options=options, **kw)


def _drive(job, out, order, fail=()):
    """The scheduler's protocol by hand: ``order(queue) -> index`` picks the next chunk;
    early chunks whose index is in ``fail`` report an error instead of a result."""
    queue = list(job.open(out, lambda m: None, RAY, probe_first=True))
    kinds = []
    while queue:
        spec = queue.pop(order(queue))
        kinds.append(spec["kind"])
        if spec["kind"] == "audit-early" and spec["chunk"]["early_index"] in fail:
            queue += job.done(spec, None, "RuntimeError: an actor's chunk failed")
            continue
        queue += job.done(spec, dispatch.run_spec({**spec, "device": "cpu"}), None)
    return job.finish(), kinds


def _rows(out) -> pd.DataFrame:
    shadow = ResultStore(out).read("shadow")
    return shadow.sort_values("trial_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The audit in the plain order (the local backend queues no early chunk)."""
    out = tmp_path_factory.mktemp("plain")
    result = run_audit(_request(), out, EngineConfig(backend="local"))
    return result, _rows(out)


def _same(rows: pd.DataFrame, plain_rows: pd.DataFrame) -> None:
    assert list(rows["trial_id"]) == list(plain_rows["trial_id"])  # each trial once
    assert rows["trial_id"].is_unique and (rows["status"] == "ok").all()
    for col in plain_rows.columns:
        if col in TIMINGS:
            continue
        a, b = rows[col], plain_rows[col]
        if col in ("features_vec",):
            assert all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b)), col
        else:
            assert a.astype(object).where(a.notna(), None).tolist() == \
                b.astype(object).where(b.notna(), None).tolist(), col


FIRST = lambda queue: 0  # noqa: E731 - the queue's order: early chunks after the selection's


def EARLY_FIRST(queue):  # every early chunk done before any selection chunk
    kinds = [s["kind"] for s in queue]
    return kinds.index("audit-early") if "audit-early" in kinds else 0


def EARLY_LAST(queue):  # the early chunks come back after the whole game's other chunks
    kinds = [s["kind"] for s in queue]
    rest = [i for i, k in enumerate(kinds) if k != "audit-early"]
    return rest[0] if rest else 0


@pytest.mark.parametrize("order", [FIRST, EARLY_FIRST, EARLY_LAST], ids=["queue", "early-first",
                                                                         "early-last"])
def test_early_chunks_store_every_trial_once_with_the_plain_numbers(order, plain, tmp_path):
    plain_result, plain_rows = plain
    job = AuditJob("audit", _request(), partition=None)
    result, kinds = _drive(job, tmp_path, order)
    assert kinds.count("audit-early") == 4  # depth 2 x 2 workers, of the 4 in-world chunks
    assert kinds.count("audit") == 4  # the rest: every out-world chunk (10 models in 3s)
    rows = _rows(tmp_path)
    _same(rows, plain_rows)
    assert rows["eps_true"].notna().sum() == 1  # the first in-world model's events, kept once
    for key in ("auc", "eps_cp", "eps_bayes", "eps_true", "target", "threshold"):
        assert result[key] == plain_result[key] or \
            (result[key] != result[key] and plain_result[key] != plain_result[key]), key
    assert result["models_run"] == 20 and result["failed_chunks"] == 0
    assert job.selection["selection_models"] == 8  # early chunks are not the selection's


def test_a_failed_early_chunk_is_recorded_as_failed(plain, tmp_path):
    _, plain_rows = plain
    job = AuditJob("audit", _request(), partition=None)
    result, _ = _drive(job, tmp_path, FIRST, fail={1})
    rows = _rows(tmp_path)
    bad = rows[rows["status"] == "failed"]
    assert sorted(bad["shadow_index"]) == [3, 4, 5] and set(bad["world"]) == {"in"}
    assert "an actor's chunk failed" in bad["error"].iloc[0]
    assert rows["trial_id"].is_unique and set(rows["trial_id"]) == set(plain_rows["trial_id"])
    assert result["failed_chunks"] == 1 and result["models_run"] == 17


def test_no_early_chunk_where_nothing_would_overlap(tmp_path):
    local = AuditJob("a", _request(), partition=None)
    specs = local.open(tmp_path / "a", lambda m: None, EngineConfig(backend="local"), False)
    assert not [s for s in specs if s["kind"] == "audit-early"]
    seq = AuditJob("b", _request(until_ceiling=True, first_stage=5), partition=None)
    specs = seq.open(tmp_path / "b", lambda m: None, RAY, False)
    assert not [s for s in specs if s["kind"] == "audit-early"]
