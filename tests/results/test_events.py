"""The event sink: a run's events to Parquet and back (issue 9)."""

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from raudit import generators
from raudit.cli.app import app
from raudit.errors import ConfigError
from raudit.events import AccountantStep, EventLog, TeacherBatch, TeacherLoss, Votes
from raudit.results.events import EVENT_SCHEMA, EVENT_SCHEMA_VERSION, EventSink, read_events


def table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["label"] = (rng.random(n) < 0.4).astype(int)
    return df


def test_round_trip_of_a_batched_paper_run(tmp_path):
    log, sink = EventLog(), EventSink(seeds=[11, 12])
    generators.get("paper")(teachers=2, batch=8, max_iter=3).fit_many(
        [table()] * 2, epsilon=1e6, seeds=[11, 12], observer=lambda e: (log(e), sink(e)))
    ev = read_events(sink.write(tmp_path / "events.parquet"))
    assert len(ev) == 2 * len(log.events) == len(sink)
    assert (ev.schema_version == EVENT_SCHEMA_VERSION).all()
    assert ev.groupby("kind").size().to_dict() == {
        "teacher_batch": 2 * len(log.of(TeacherBatch)), "votes": 2 * len(log.of(Votes)),
        "accountant_step": 2 * len(log.of(AccountantStep)),
        "teacher_loss": 2 * len(log.of(TeacherLoss))}
    votes = ev[ev.kind == "votes"]
    assert set(votes.aggregation) == {"argmax"} and set(votes.noise_kind) == {"laplace"}
    for m, seed in enumerate([11, 12]):
        mine = votes[votes.model == m]
        assert (mine.model_seed == seed).all()
        np.testing.assert_array_equal(np.stack(mine.n1.to_numpy()), np.stack([v.n1[m] for v in log.of(Votes)]))
        np.testing.assert_array_equal(np.stack(mine.noise.to_numpy()),
                                      np.stack([v.drawn[m].ravel() for v in log.of(Votes)]))
    last = ev[ev.kind == "accountant_step"].groupby("model").tail(1)
    np.testing.assert_array_equal(last.eps_hat.to_numpy(), log.of(AccountantStep)[-1].eps_hat)
    tb = ev[(ev.kind == "teacher_batch") & (ev.model == 1)].iloc[0]
    first = log.of(TeacherBatch)[0]
    assert tb.teacher == first.teacher and list(tb.rows) == first.rows[1].tolist()
    assert pd.isna(tb.eps_hat) and tb.n1 is None


def test_train_events_flag_writes_the_run_events(tmp_path):
    out = tmp_path / "t"
    res = CliRunner().invoke(app, ["train", "--impl", "original", "--max-iter", "2", "--teachers", "2",
                                   "--events", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads((out / "summary.json").read_text())
    ev = read_events(out / s["events"])
    assert set(ev.kind) == {"teacher_batch", "label_noise"}
    assert (ev.model_seed == s["fit_seed"]).all() and sorted(set(ev.iteration)) == [0, 1]
    assert ev[ev.kind == "label_noise"].sigma.iloc[0] == s["details"]["label_noise_sigma"]
    res = CliRunner().invoke(app, ["train", "--impl", "original", "--max-iter", "1", "--teachers", "2",
                                   "--out", str(tmp_path / "u"), "--json"])
    assert not (tmp_path / "u" / "events.parquet").exists()  # off by default


def test_newer_schema_and_missing_file_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="--events"):
        read_events(tmp_path / "none.parquet")
    rows = {f.name: [None] for f in EVENT_SCHEMA}
    rows["schema_version"] = [EVENT_SCHEMA_VERSION + 1]
    pq.write_table(pa.table(rows, schema=EVENT_SCHEMA), tmp_path / "new.parquet")
    with pytest.raises(ConfigError, match="newer raudit"):
        read_events(tmp_path / "new.parquet")


def test_seed_count_must_match_the_models():
    sink = EventSink(seeds=[1])
    with pytest.raises(ConfigError, match="1 seeds for events of 2 models"):
        sink(AccountantStep(0, np.zeros(2), np.zeros((2, 3)), np.ones(2, dtype=bool)))


def test_teacher_batches_keep_which_teachers_their_rows_move(tmp_path):
    """G-PATE's shared_teacher_state steps a slot's teachers through one Adam state: a row
    moves every teacher of its slot, and the stored events say so (eps_true reads it)."""
    from tests.generators.test_gpate_upstream import SMALL, mnist10_shaped
    runs = {}
    for shared in (False, True):
        sink = EventSink(seeds=[0])
        generators.get("gpate")(**SMALL, shared_teacher_state=shared, slot_teachers=4).fit(
            mnist10_shaped(), epsilon=1e6, seed=0, observer=sink)
        ev = read_events(sink.write(tmp_path / f"{shared}.parquet"))
        runs[shared] = ev[ev.kind == "teacher_batch"]
    alone, shared = runs[False], runs[True]
    assert all(list(r) == [t] for r, t in zip(alone.reach, alone.teacher))
    slots = {tuple(r) for r in shared.reach}
    assert slots == {(0, 2, 4, 6), (1, 3, 5, 7)}  # 8 teachers, 2 slots of 4, dealt round-robin
    assert all(t in r for r, t in zip(shared.reach, shared.teacher))


def test_event_files_of_version_1_read_reach_as_the_teacher_alone(tmp_path):
    sink = EventSink(seeds=[3])
    sink(TeacherBatch(0, 2, np.array([[5, 6]]), np.array([True])))
    table = sink.table()
    old = table.drop_columns(["reach"]).set_column(
        0, "schema_version", pa.array([1] * table.num_rows, pa.int64()))
    pq.write_table(old, tmp_path / "v1.parquet")
    ev = read_events(tmp_path / "v1.parquet")
    assert list(ev.reach.iloc[0]) == [2] and list(ev.rows.iloc[0]) == [5, 6]
