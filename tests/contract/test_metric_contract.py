"""The utility-metric contract, over every metric the utility benchmark computes
(raudit.utility.metrics.METRICS): the schema's utility table accepts its name, a perfect
ranking scores 1, a single-class test split is NaN (undefined, not 0 or 1), and the
value does not depend on the scores' scale."""

import math

import numpy as np
import pytest

from raudit.results.schema import ENUMS
from raudit.utility.metrics import METRICS


@pytest.fixture(params=list(METRICS))
def name(request):
    return request.param


def test_the_utility_table_accepts_it(name):
    assert name in ENUMS["utility"]["metric"]


def test_perfect_undefined_and_scale_free(name):
    fn = METRICS[name]
    y = np.array([0, 0, 1, 1, 0, 1])
    perfect = np.array([0.1, 0.2, 0.8, 0.9, 0.3, 0.7])
    assert fn(y, perfect) == pytest.approx(1.0)
    assert math.isnan(fn(np.zeros(4), np.arange(4.0)))
    scores = np.random.default_rng(0).uniform(size=6)
    assert fn(y, scores) == pytest.approx(fn(y, 10 * scores + 3))
