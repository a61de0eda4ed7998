"""The result store: atomic parts, concurrent appends, schema evolution, manifest, ids."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from raudit.errors import ConfigError
from raudit.results import SCHEMA_VERSION, ResultStore, SchemaError, trial_id
from raudit.results import schema as schema_mod


def shadow_row(i: int, *, status: str = "ok", world: str = "in") -> dict:
    return {"trial_id": trial_id({"i": i}), "audit_id": "a1", "impl": "identity",
            "dataset": "toy", "attack": "groundhog", "features": "naive", "world": world,
            "shadow_index": i, "seed": 2**62 + i, "split": "train", "iterations": 0,
            "eps_hat": float("nan"), "wall_s": 0.1, "status": status, "error": "",
            "features_vec": np.arange(3, dtype=float) + i, "options_json": "{}"}


def test_append_then_read_round_trips(tmp_path):
    store = ResultStore(tmp_path)
    path = store.append("shadow", [shadow_row(0), shadow_row(1, world="out")])
    assert path.parent == tmp_path / "shadow"
    assert path.name.startswith("part-") and path.suffix == ".parquet"
    df = store.read("shadow")
    assert list(df["shadow_index"]) == [0, 1]
    assert list(df["world"]) == ["in", "out"]
    assert df["seed"].tolist() == [2**62, 2**62 + 1]  # no float rounding of large seeds
    assert list(df["features_vec"].iloc[1]) == [1.0, 2.0, 3.0]
    assert (df["schema_version"] == SCHEMA_VERSION).all()
    assert np.isnan(df["eps_hat"].iloc[0])


def test_read_empty_store_has_the_schema_columns(tmp_path):
    df = ResultStore(tmp_path).read("summary")
    assert len(df) == 0
    assert list(df.columns) == list(schema_mod.SUMMARY)
    assert ResultStore(tmp_path).done_ids("shadow") == set()


def test_leftover_temp_file_is_ignored(tmp_path):
    store = ResultStore(tmp_path)
    store.append("shadow", [shadow_row(0)])
    # A writer that crashed mid-write leaves a hidden temp file (here: garbage bytes).
    (tmp_path / "shadow" / ".part-x.parquet.tmp").write_bytes(b"not parquet")
    assert len(store.read("shadow")) == 1
    assert len(pd.read_parquet(tmp_path / "shadow")) == 1
    assert len(store.parts("shadow")) == 1


def test_each_append_writes_one_new_part_and_no_temp_remains(tmp_path):
    store = ResultStore(tmp_path)
    paths = [store.append("shadow", [shadow_row(i)]) for i in range(3)]
    assert len(set(paths)) == 3
    assert sorted((tmp_path / "shadow").iterdir()) == sorted(paths)
    assert store.parts("shadow") == paths  # write order


def test_appends_from_two_threads(tmp_path):
    store = ResultStore(tmp_path)
    errors = []

    def work(offset: int) -> None:
        try:
            for i in range(20):
                store.append("shadow", [shadow_row(offset + i)])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k * 100,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    df = store.read("shadow")
    assert sorted(df["shadow_index"]) == list(range(20)) + list(range(100, 120))
    assert len(store.parts("shadow")) == 40


def test_old_part_without_a_new_column_reads_with_nulls(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.append("shadow", [shadow_row(0)])
    # A newer raudit adds a column; the old part must still read, with nulls there.
    monkeypatch.setitem(schema_mod.TABLES, "shadow", dict(schema_mod.SHADOW))
    schema_mod.add_column("shadow", "gpu", pa.string())
    store.append("shadow", [{**shadow_row(1), "gpu": "h100"}])
    df = store.read("shadow")
    assert df["gpu"].isna().tolist() == [True, False]
    assert df["gpu"].iloc[1] == "h100"
    assert len(pd.read_parquet(tmp_path / "shadow")) == 2


def test_a_column_is_never_repurposed(monkeypatch):
    monkeypatch.setitem(schema_mod.TABLES, "shadow", dict(schema_mod.SHADOW))
    schema_mod.add_column("shadow", "seed", pa.int64())  # same type: fine
    with pytest.raises(SchemaError, match="never repurpose"):
        schema_mod.add_column("shadow", "seed", pa.string())


def test_part_written_by_hand_without_columns_reads(tmp_path):
    # An "old" part holding only a few columns, as an earlier version might have written.
    (tmp_path / "shadow").mkdir()
    pq.write_table(pa.table({"trial_id": ["t0"], "status": ["ok"]}),
                   tmp_path / "shadow" / "part-0-old.parquet")
    store = ResultStore(tmp_path)
    df = store.read("shadow")
    assert list(df.columns) == list(schema_mod.SHADOW)
    assert df["trial_id"].tolist() == ["t0"] and df["seed"].isna().all()
    assert store.done_ids("shadow") == {"t0"}


def test_unknown_columns_are_named(tmp_path):
    with pytest.raises(SchemaError, match=r"\['bogus', 'zz'\]"):
        ResultStore(tmp_path).append("shadow", [{**shadow_row(0), "bogus": 1, "zz": 2}])
    assert not (tmp_path / "shadow").exists() or not any((tmp_path / "shadow").iterdir())


def test_bad_values_are_refused(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(SchemaError, match="seed"):
        store.append("shadow", [{**shadow_row(0), "seed": "abc"}])
    with pytest.raises(SchemaError, match="world"):
        store.append("shadow", [shadow_row(0, world="maybe")])


def test_missing_columns_are_null_and_dataframes_are_accepted(tmp_path):
    store = ResultStore(tmp_path)
    store.append("summary", pd.DataFrame({"audit_id": ["a"], "auc": [0.9], "tp": [400],
                                          "created_at": ["2024-01-01T00:00:00Z"]}))
    df = store.read("summary")
    assert df["auc"].iloc[0] == 0.9 and df["tp"].iloc[0] == 400
    assert pd.isna(df["eps_cp"].iloc[0]) and pd.isna(df["saturated"].iloc[0])
    assert df["created_at"].iloc[0] == pd.Timestamp("2024-01-01", tz="UTC")


def test_done_ids_only_counts_ok_rows(tmp_path):
    store = ResultStore(tmp_path)
    store.append("shadow", [shadow_row(0), shadow_row(1, status="failed")])
    store.append("shadow", [shadow_row(2)])
    assert store.done_ids("shadow") == {trial_id({"i": 0}), trial_id({"i": 2})}


def test_done_models_counts_a_model_of_several_rows_once(tmp_path):
    # a selection pool stores one row per candidate of each model, in either world
    store = ResultStore(tmp_path)
    rows = [{**shadow_row(10 * m + c, world="in" if c % 2 else "out"), "seed": 2**62 + m}
            for m in range(3) for c in range(4)]
    store.append("shadow", rows + [{**shadow_row(99, status="failed"), "seed": 7}])
    assert len(store.done_ids("shadow")) == 12 and store.done_models("shadow") == 3
    assert ResultStore(tmp_path / "none").done_models("shadow") == 0


def test_pandas_reads_the_folder(tmp_path):
    store = ResultStore(tmp_path)
    for i in range(3):
        store.append("shadow", [shadow_row(i)])
    df = pd.read_parquet(tmp_path / "shadow")
    assert sorted(df["shadow_index"]) == [0, 1, 2]


def test_manifest_accepts_the_same_spec_and_refuses_another(tmp_path):
    store = ResultStore(tmp_path / "out")
    spec = {"impl": "paper", "epsilon": 1.0, "shadow_models": 2000}
    first = store.ensure_manifest(spec)
    assert first["schema_version"] == SCHEMA_VERSION
    assert (tmp_path / "out" / "raudit.json").is_file()
    again = ResultStore(tmp_path / "out").ensure_manifest(dict(reversed(list(spec.items()))))
    assert again["spec_hash"] == first["spec_hash"]
    with pytest.raises(ConfigError, match=r"holds a different audit \(epsilon: 1\.0 there, "
                                          r"2\.0 now\); choose another --out or delete it"):
        store.ensure_manifest({**spec, "epsilon": 2.0})


def test_manifest_from_a_newer_schema_is_refused(tmp_path):
    store = ResultStore(tmp_path)
    store.ensure_manifest({"a": 1})
    text = store.manifest_path.read_text().replace(f'"schema_version": {SCHEMA_VERSION}',
                                                   f'"schema_version": {SCHEMA_VERSION + 1}')
    store.manifest_path.write_text(text)
    with pytest.raises(ConfigError, match="newer"):
        store.ensure_manifest({"a": 1})


def test_trial_id_is_stable_and_order_independent():
    a = {"impl": "paper", "seed": 3, "opts": {"x": 1, "y": [1, 2]}}
    b = {"opts": {"y": (1, 2), "x": np.int64(1)}, "seed": 3, "impl": "paper"}
    assert trial_id(a) == trial_id(b)
    assert len(trial_id(a)) == 16 and int(trial_id(a), 16) >= 0
    # Golden value: sha256 of '{"a":1}' truncated (computed independently with hashlib).
    assert trial_id({"a": 1}) == "015abd7f5cc57a2d"
    assert trial_id({**a, "seed": 4}) != trial_id(a)
    with pytest.raises(ValueError, match="non-finite"):
        trial_id({"x": float("nan")})
