"""Datasets travel with the work: what the driver loaded is what a worker loads, even
where the worker has no file (no RAUDIT_DATA_DIR, no user CSV)."""

from __future__ import annotations

import pandas as pd

from raudit import data
from raudit.data import shipped


def test_a_worker_loads_the_shipped_table_without_the_file(tmp_path):
    csv = tmp_path / "mine.csv"
    pd.DataFrame({"a": [1, 2, 3, 4, 5, 6] * 5, "y": [0, 1] * 15}).to_csv(csv, index=False)
    ds = data.load(str(csv), label="y")
    ds.train.iloc[0, 0] = 99  # a caller's edit is not what gets shipped
    tables = shipped.export(data.load)
    assert list(tables) == [(str(csv), "y", None, 13)]
    csv.unlink()  # the worker has no such file
    data.clear_cache()
    shipped.install(tables)
    again = data.load(str(csv), label="y")
    fresh = tables[(str(csv), "y", None, 13)]
    pd.testing.assert_frame_equal(again.train, fresh.train)
    assert again.train.iloc[0, 0] != 99
    again.train.iloc[0, 0] = -1  # each load is a fresh copy
    assert data.load(str(csv), label="y").train.iloc[0, 0] != -1


def test_builtin_tables_round_trip():
    ds = data.load("worst-case")
    tables = shipped.export(data.load)
    data.clear_cache()
    shipped.install(tables)
    pd.testing.assert_frame_equal(data.load("worst-case").train, ds.train)
    data.clear_cache()


def test_a_relative_path_is_shipped_from_where_it_was_loaded(tmp_path, monkeypatch):
    """A notebook loads "mine.csv", changes directory, then runs on Ray: the export read
    "mine.csv" again from the new directory (no such file, or another table of that
    name). It reads the file it loaded, and ships it under the name the chunks ask for."""
    data.clear_cache()
    first, elsewhere = tmp_path / "first", tmp_path / "elsewhere"
    first.mkdir()
    elsewhere.mkdir()
    pd.DataFrame({"a": [1, 2, 3, 4, 5, 6] * 5, "y": [0, 1] * 15}).to_csv(
        first / "mine.csv", index=False)
    monkeypatch.chdir(first)
    loaded = data.load("mine.csv", label="y")
    monkeypatch.chdir(elsewhere)  # no mine.csv here
    tables = shipped.export(data.load)
    assert list(tables) == [("mine.csv", "y", None, 13)]
    pd.testing.assert_frame_equal(tables[("mine.csv", "y", None, 13)].train, loaded.train)
    # another file of that name here: still the one that was loaded
    pd.DataFrame({"a": [7, 8] * 15, "y": [1, 0] * 15}).to_csv(elsewhere / "mine.csv",
                                                            index=False)
    pd.testing.assert_frame_equal(shipped.export(data.load)[("mine.csv", "y", None, 13)].train,
                                  loaded.train)
    data.clear_cache()
