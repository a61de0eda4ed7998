"""The dataset contract, over every registered dataset (raudit.data.registry.DATASETS):
one record per dataset holds its provenance (Source) and its reader; info() describes
it without parsing; a loaded table is numeric with a 0/1 label last (mnist10: its digit) and the documented
size. Built-in tables load here; file-backed ones where the files are (slow)."""

import numpy as np
import pytest

from raudit import data
from raudit.data.registry import DATASETS


def _param(name):
    slow = bool(DATASETS.get(name).source.files)
    return pytest.param(name, marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("name", DATASETS.names())
def test_one_record_with_provenance(name):
    entry = DATASETS.get(name)
    src = entry.source
    assert src.title and src.licence and src.label_rule
    assert data.source(name) is src
    assert all(f.relpath for f in (*src.files, *src.fallback))
    got = data.info(name)
    assert got["status"]


@pytest.mark.parametrize("name", [_param(n) for n in DATASETS.names()])
def test_loads_as_documented(name):
    src = data.source(name)
    if src.files and not data.info(name)["available"]:
        pytest.skip(f"{name}: files not here")
    ds = data.load(name)
    # a table without a split (worst-case: no held-out data in the game) is all train
    parts = [ds.train, ds.test] if DATASETS.get(name).stratified_split else [ds.train]
    table = np.vstack([p.to_numpy(dtype=float) for p in parts])
    assert set(np.unique(table[:, -1])) <= set(map(float, range(DATASETS.get(name).classes)))
    if "fallback" not in ds.notes:
        assert src.rows is None or table.shape[0] == src.rows
        assert src.columns is None or table.shape[1] == src.columns
        assert src.positives is None or int(table[:, -1].sum()) == src.positives
