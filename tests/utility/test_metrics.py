"""Aggregations, SRA and the feature-ranking agreement on hand-computed examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from raudit.utility import metrics as mt


def test_best_then_average_by_hand():
    # lr: best of (0.6, 0.8, NaN) = 0.8; rf: best of (0.7, 0.5) = 0.7; mean = 0.75
    df = pd.DataFrame({"classifier": ["lr", "lr", "lr", "rf", "rf"],
                       "value": [0.6, 0.8, math.nan, 0.7, 0.5]})
    out = mt.best_then_average(df)
    assert out["best"].iloc[0] == pytest.approx(0.75) and out["classifiers"].iloc[0] == 2
    df["eps"] = [1, 1, 1, 1, 5]  # grouped: eps=1 -> (0.8 + 0.7)/2, eps=5 -> rf only 0.5
    by = mt.best_then_average(df, by=["eps"]).set_index("eps")
    assert by.loc[1, "best"] == pytest.approx(0.75) and by.loc[5, "best"] == pytest.approx(0.5)


def test_mean_and_standard_error_by_hand():
    m, se = mt.mean_se([0.5, 0.7, 0.9, math.nan])
    assert m == pytest.approx(0.7)
    assert se == pytest.approx(0.2 / math.sqrt(3))  # sd (ddof 1) = 0.2
    assert math.isnan(mt.mean_se([0.4])[1])


def test_drop_by_hand():
    assert mt.drop(0.7, 0.9) == pytest.approx(0.5)  # (0.9 - 0.7) / (0.9 - 0.5)
    assert mt.drop(0.95, 0.9) == pytest.approx(-0.125)  # better than the reference
    assert math.isnan(mt.drop(0.7, 0.5))


def test_sra_by_hand():
    assert mt.sra([0.9, 0.8, 0.7], [0.6, 0.5, 0.4]) == 1.0  # same order
    assert mt.sra([0.9, 0.8, 0.7], [0.4, 0.5, 0.6]) == 0.0  # reversed
    # A orders 1 > 2 > 3; C swaps 2 and 3: pairs (1,2) and (1,3) agree, (2,3) does not:
    # 2 of the 3 unordered pairs, each counted twice: 4 / (3 * 2)
    assert mt.sra([0.9, 0.8, 0.7], [0.9, 0.6, 0.7]) == pytest.approx(4 / 6)
    # a tie in C counts as disagreement (strict > in eq. 8): only (1,3),(2,3) agree
    assert mt.sra([0.9, 0.8, 0.7], [0.9, 0.9, 0.1]) == pytest.approx(4 / 6)
    # NaN pairs are left out: L = 2 remaining, agree
    assert mt.sra([0.9, math.nan, 0.7], [0.5, 0.1, 0.4]) == 1.0
    with pytest.raises(ValueError):
        mt.sra([1, 2], [1, 2, 3])


def test_label_correlations_and_feature_agreement():
    t = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [4.0, 3, 2, 1], "c": [1.0, 1, 1, 1],
                      "y": [0.0, 0, 1, 1]})
    r = mt.label_correlations(t)
    assert r[0] == pytest.approx(math.sqrt(0.8)) and r[1] == pytest.approx(math.sqrt(0.8))
    assert r[2] == 0.0  # constant column
    # identical rankings agree fully with themselves... except the tie a == b (strict >)
    assert mt.sra(r, r) == pytest.approx(4 / 6)


def test_auroc_auprc_undefined_on_one_class_test():
    assert math.isnan(mt.auroc([1, 1, 1], [0.1, 0.2, 0.3]))
    assert math.isnan(mt.auprc([0, 0], [0.1, 0.2]))
    assert mt.auroc([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8]) == 1.0
    np.testing.assert_allclose(mt.auprc([0, 1, 0, 1], [0.5] * 4), 0.5)
