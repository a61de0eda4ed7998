"""Reading stored values as numbers: what is missing is NaN (or None), never an error."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from raudit.results.convert import number, number_or_none


@pytest.mark.parametrize("value", [None, pd.NA, "n/a", "", object(), math.nan, np.float64("nan")])
def test_a_missing_value_is_nan_and_none(value):
    assert math.isnan(number(value))
    assert number_or_none(value) is None


@pytest.mark.parametrize("value, expected", [(1, 1.0), ("2.5", 2.5), (np.int64(3), 3.0),
                                             (True, 1.0), (math.inf, math.inf), (-0.0, 0.0)])
def test_a_number_reads_as_itself(value, expected):
    assert number(value) == expected
    assert number_or_none(value) == expected
    assert type(number_or_none(value)) is float
