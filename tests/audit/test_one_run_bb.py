"""Black-box one-run audits (raudit.audit.one_run_bb): the canary design, the score, a
generator that leaks shows a bound and one that reads no record shows none."""

from __future__ import annotations

import numpy as np
import pytest

from raudit import data
from raudit.attacks.targets import outlier_candidates
from raudit.audit.known import max_overshoots
from raudit.audit.one_run_bb import canary_design, canary_scores, check_canaries, one_run_black_box
from raudit.errors import ConfigError


@pytest.fixture(scope="module")
def table():
    return data.load("breast-cancer").train


def test_canaries_are_the_most_outlying_rows_each_in_with_probability_half(table):
    rows, inc = canary_design(table, 200, seed=3)
    assert list(rows) == outlier_candidates(table, n=200) and set(np.unique(inc)) == {-1, 1}
    assert 70 < int(np.sum(inc == 1)) < 130
    again = canary_design(table, 200, seed=3)
    np.testing.assert_array_equal(again[1], inc)  # the seed decides, nothing else


def test_score_is_high_for_a_reproduced_canary(table):
    rows = np.array(outlier_candidates(table, n=10))
    synth = table.iloc[rows[:5]]  # the first five canaries reproduced exactly
    s = canary_scores(table, rows, synth)
    assert np.all(s[:5] > 0) and np.all(s[:5] > s[5:].max())


def test_identity_leaks_and_independent_does_not(table):
    cols = data.load("breast-cancer").columns
    leak = one_run_black_box("identity", {}, table, cols, canaries=400, epsilon=1.0, delta=1e-5,
                             seed=0)
    assert leak["eps_lo"] > 1.0 and leak["v"] >= 0.9 * leak["r"]
    assert len(table) - 400 < leak["trained_rows"] < len(table)  # the base + the canaries in


def test_a_generator_that_reads_no_record_shows_no_bound_beyond_the_level(table):
    """40 one-run audits of `independent` (eps = 0): eps_lo > 0 is a false alarm, allowed
    in at most the exact binomial share at beta = 0.05 (a score that saw the coins would
    fail this)."""
    cols = data.load("breast-cancer").columns
    lows = [one_run_black_box("independent", {}, table, cols, canaries=300, epsilon=1.0,
                              delta=1e-5, seed=s)["eps_lo"] for s in range(40)]
    assert sum(lo > 0 for lo in lows) <= max_overshoots(40, 0.05)


def test_bad_canary_counts():
    with pytest.raises(ConfigError, match="at least 2"):
        check_canaries(1, 100)
    with pytest.raises(ConfigError, match="more than the 100 training rows"):
        check_canaries(101, 100)
