"""The querybased feature set: the study's worst case and sampled queries."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from raudit.attacks import features as fs
from raudit.attacks import queries
from raudit.attacks.features import AttackContext

D_OUT = pd.DataFrame({"A": [0] * 4, "B": [0] * 4, "C": [0] * 4})
TARGET = pd.Series({"A": 1, "B": 1, "C": 1})
D_IN = pd.concat([D_OUT, TARGET.to_frame().T], ignore_index=True)


def test_worst_case_enumerates_the_eight_points():
    ctx = AttackContext.build(D_OUT, TARGET)
    assert ctx.queries.mode == "exact-points"
    got = fs.querybased(D_IN, ctx)
    # Points in C order 000, 001, ..., 111: four rows at 000, the target at 111.
    np.testing.assert_array_equal(got, [4, 0, 0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(fs.querybased(D_OUT, ctx), [4, 0, 0, 0, 0, 0, 0, 0])


def test_worst_case_counts_every_point():
    ctx = AttackContext.build(D_OUT, TARGET)
    grid = pd.DataFrame(list(itertools.product([0, 1], repeat=3)) * 2, columns=list("ABC"))
    np.testing.assert_array_equal(fs.querybased(grid, ctx), [2] * 8)
    # Near-integers (a float32 generator) still match; other values match nothing.
    noisy = pd.DataFrame({"A": [1 + 1e-8, 0.5, np.nan], "B": [1, 1, 1], "C": [1, 1, 1]})
    np.testing.assert_array_equal(fs.querybased(noisy, ctx), [0] * 7 + [1])


def brute_force(synth: pd.DataFrame, target: pd.Series, cols: list[str]) -> int:
    return int((synth[cols] == target[cols]).all(axis=1).sum())


def test_sampled_queries_match_a_brute_force_count():
    rng = np.random.default_rng(0)
    ref = pd.DataFrame(rng.integers(0, 6, size=(50, 6)), columns=list("abcdef"))
    target = ref.iloc[3]
    ctx = AttackContext.build(ref, target, n_queries=40, seed=7)
    assert ctx.queries.mode == "sampled" and ctx.queries.mask.shape == (40, 6)
    assert set(ctx.queries.mask.sum(axis=1)) <= set(range(1, 7))
    synth = pd.DataFrame(rng.integers(0, 6, size=(300, 6)), columns=list("abcdef"))
    got = fs.querybased(synth, ctx)
    want = [brute_force(synth, target, list(ref.columns[m])) for m in ctx.queries.mask]
    np.testing.assert_array_equal(got, want)


def test_sampled_queries_are_fixed_by_the_seed():
    rng = np.random.default_rng(1)
    ref = pd.DataFrame(rng.integers(0, 9, size=(30, 5)), columns=list("abcde"))
    a = AttackContext.build(ref, ref.iloc[0], seed=3).queries.mask
    b = AttackContext.build(ref, ref.iloc[0], seed=3).queries.mask
    c = AttackContext.build(ref, ref.iloc[0], seed=4).queries.mask
    assert a.shape == (256, 5)
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_continuous_columns_match_by_bin():
    ref = pd.DataFrame({"x": np.linspace(0, 1, 20) + 0.001, "b": [0, 1] * 10})
    target = pd.Series({"x": 0.95, "b": 1})
    ctx = AttackContext.build(ref, target, max_points=1)  # force sampled mode
    plan = ctx.queries
    assert plan.levels[0] is None and plan.target_codes[0] == 4
    synth = pd.DataFrame({"x": [0.99, 0.85, 0.1, 2.0], "b": [1, 1, 1, 1]})
    only_x = np.flatnonzero(plan.mask[:, 0] & ~plan.mask[:, 1])
    both = np.flatnonzero(plan.mask.all(axis=1))
    got = fs.querybased(synth, ctx)
    # bins of width ~0.2 over [0.001, 1.001]: 0.99, 0.85 and 2.0 (clipped) share bin 4.
    assert set(got[only_x]) == {3.0} and set(got[both]) == {3.0}


def test_nearest_level_and_bin_index():
    levels = np.array([0.0, 1.0, 5.0])
    np.testing.assert_array_equal(
        queries.nearest_level(np.array([0, 0.4, 1 - 1e-9, 4, 5, np.nan, 7]), levels),
        [0, -1, 1, -1, 2, -1, -1])
    np.testing.assert_array_equal(
        queries.bin_index(np.array([-1, 0, 1.99, 2, 10, 11, np.nan]), 0, 10, 5),
        [0, 0, 0, 1, 4, 4, -1])
