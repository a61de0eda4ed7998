"""Outlier candidates for the average-case target."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit.attacks.targets import outlier_candidates, outlier_scores
from raudit.errors import ConfigError, DataError


def test_obvious_outlier_comes_first():
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(0, 0.05, size=(40, 3)), columns=list("abc"))
    table.iloc[17] = [3.0, -3.0, 3.0]
    got = outlier_candidates(table, n=5)
    assert got[0] == 17 and len(got) == 5 and len(set(got)) == 5


def test_scores_by_hand():
    # One column, scaled to [0, 1] by /10: points 0, 0.1, 0.2, 1.0; k = 2.
    table = pd.DataFrame({"x": [0.0, 1.0, 2.0, 10.0]})
    np.testing.assert_allclose(outlier_scores(table, k=2),
                               [(0.1 + 0.2) / 2, (0.1 + 0.1) / 2, (0.1 + 0.2) / 2,
                                (0.8 + 0.9) / 2])
    assert outlier_candidates(table, n=4, k=2) == [3, 0, 2, 1]  # tie 0 vs 2: row order


def test_self_is_excluded_but_duplicates_count():
    table = pd.DataFrame({"x": [0.0, 0.0, 1.0]})
    np.testing.assert_allclose(outlier_scores(table, k=1), [0.0, 0.0, 1.0])


def test_constant_columns_nan_and_small_tables():
    table = pd.DataFrame({"x": [0.0, 1.0, 2.0, 9.0], "c": [5.0] * 4,
                          "n": [np.nan, 0.0, 0.0, 0.0]})
    assert outlier_candidates(table, n=1) == [3]
    assert outlier_candidates(table.iloc[:1]) == [0]
    assert outlier_candidates(table.iloc[:0]) == []
    assert sorted(outlier_candidates(table, n=64, k=5)) == [0, 1, 2, 3]


def test_bad_arguments():
    with pytest.raises(ConfigError):
        outlier_scores(pd.DataFrame({"x": [1.0, 2.0]}), k=0)
    with pytest.raises(DataError, match="non-numeric"):
        outlier_candidates(pd.DataFrame({"x": ["a", "b"]}))
