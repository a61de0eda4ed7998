"""`raudit inspect --impl gpate`: the upstream bug switches (issue 47) as measured cells.

Shared optimiser state: retrained with one teacher's rows permuted, another teacher's input
to the first aggregation changes (its votes depend on another partition). The authors'
data-dependent stop (accountant=gnmax): the released eps lies below the data-independent
bound of the same queries. Both off (the image defaults): both cells hold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit.data.dataset import ColumnMeta, Dataset
from raudit.inspect.partition import permuted_partition
from raudit.inspect.runner import InspectSpec, inspect_generator

#: 8 teachers of 10 rows in 2 slots of 4 (teachers 0, 2, 4, 6 share slot 0)
SMALL = {"config": "image", "conditional": True, "classes": 10, "teachers": 8, "max_iter": 2,
         "sigma1": 1.0, "sigma2": 1.0, "z_dim": 8, "slot_teachers": 4}


@pytest.fixture(scope="module")
def ds() -> Dataset:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 256, size=(80, 784)), columns=[f"p{i}" for i in range(784)])
    df["digit"] = np.arange(80) % 10
    cols = tuple(ColumnMeta(f"p{i}", "integer", 0, 255, "public") for i in range(784)) + (
        ColumnMeta("digit", "integer", 0, 9, "public"),)
    return Dataset("mnist10-toy", df, df.iloc[:0], cols)


def _cells(ds, **switches) -> dict:
    run = inspect_generator(InspectSpec("gpate", epsilon=1e6, options={**SMALL, **switches}), ds)
    return {v["category"]: v for v in run["violations"]}


def test_without_shared_state_only_the_changed_teachers_input_moves(ds):
    c = _cells(ds)["data_partition"]
    assert c["status"] == "ok", c["evidence"]
    assert "the inputs of 0 of 7 other teachers changed" in c["evidence"]
    assert "own partition only" in c["evidence"]


def test_shared_state_shows_votes_that_depend_on_another_partition(ds):
    c = _cells(ds, shared_teacher_state=True)["data_partition"]
    assert c["status"] == "violated", c["evidence"]
    # teacher 0's slot mates (2, 4, 6) stepped through the Adam moments it left
    assert "the inputs of 3 of 7 other teachers changed (teachers [2, 4, 6]" in c["evidence"]


def test_the_data_dependent_stop_reports_an_eps_below_the_data_independent_bound(ds):
    ok = _cells(ds)["moments_accountant"]
    assert ok["status"] == "ok" and "equal" in ok["evidence"], ok["evidence"]
    bug = _cells(ds, accountant="gnmax")["moments_accountant"]
    assert bug["status"] == "violated" and "underestimate" in bug["evidence"]
    assert "smooth sensitivity" in bug["evidence"]


def test_a_permuted_partition_changes_its_records_and_keeps_every_columns_values():
    t = pd.DataFrame({"a": np.arange(10.0), "b": np.arange(10) * 7, "c": np.arange(10) % 3})
    rows = np.array([1, 4, 5, 8])
    out = permuted_partition(t, rows, np.random.default_rng(0))
    rest = np.setdiff1d(np.arange(10), rows)
    assert out.iloc[rest].equals(t.iloc[rest])
    for name in t:
        assert sorted(out[name].iloc[rows]) == sorted(t[name].iloc[rows])
    assert not out.iloc[rows].equals(t.iloc[rows])
