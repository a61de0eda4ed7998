"""Feature sets: exact values on hand-made tables, and the robustness contract."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raudit.attacks import features as fs
from raudit.attacks.features import AttackContext
from raudit.errors import ConfigError, UnknownNameError


def ctx_for(reference: pd.DataFrame, target: dict | None = None, **kw) -> AttackContext:
    target = target or reference.iloc[0].to_dict()
    return AttackContext.build(reference, pd.Series(target, dtype=float), **kw)


def test_naive_on_a_three_row_table():
    ref = pd.DataFrame({"a": [1.0, 2.0, 6.0], "b": [0.0, 0.0, 1.0]})
    got = fs.naive(ref, ctx_for(ref))
    # a: min 1, max 6, mean 3, median 2, var ((-2)^2 + (-1)^2 + 3^2) / 2 = 7
    # b: min 0, max 1, mean 1/3, median 0, var (1/9 + 1/9 + 4/9) / 2 = 1/3
    np.testing.assert_allclose(got, [1, 6, 3, 2, 7, 0, 1, 1 / 3, 0, 1 / 3])


def test_naive_aligns_columns_by_name():
    ref = pd.DataFrame({"a": [1.0, 2.0, 6.0], "b": [0.0, 0.0, 1.0]})
    ctx = ctx_for(ref)
    np.testing.assert_array_equal(fs.naive(ref[["b", "a"]], ctx), fs.naive(ref, ctx))


def test_hist_bins_and_categories():
    ref = pd.DataFrame({"x": np.arange(11.0), "y": [0, 1, 2] * 3 + [0, 0]})
    ctx = ctx_for(ref)
    synth = pd.DataFrame({"x": [0, 1.9, 2, 9.9, 10, 12, -1, np.nan],
                          "y": [0, 0, 1, 5, 2, 2, 2, np.nan]})
    got = fs.hist(synth, ctx)
    # x: 5 bins of width 2 over [0, 10]; 12 and -1 go to the end bins; NaN left out.
    x_freq = np.array([3, 1, 0, 0, 3]) / 7
    # y: categories 0, 1, 2 of the reference; 5 is none of them (sum < 1).
    y_freq = np.array([2, 1, 3]) / 7
    np.testing.assert_allclose(got, np.concatenate([x_freq, y_freq]))


def test_hist_threshold_is_more_than_five_values():
    ref = pd.DataFrame({"five": [1, 2, 3, 4, 5, 5], "six": [1, 2, 3, 4, 5, 6]}, dtype=float)
    ctx = ctx_for(ref)
    assert ctx.hist_levels[0] is not None and ctx.hist_levels[1] is None
    np.testing.assert_allclose(fs.hist(ref, ctx)[:5], [1 / 6, 1 / 6, 1 / 6, 1 / 6, 2 / 6])
    # "six": bins [1, 2), ..., [5, 6] of width 1
    np.testing.assert_allclose(fs.hist(ref, ctx)[5:], [1 / 6, 1 / 6, 1 / 6, 1 / 6, 2 / 6])


def test_corr_upper_triangle_row_by_row():
    ref = pd.DataFrame({"a": [1.0, 2, 3], "b": [2.0, 4, 6], "c": [3.0, 2, 1], "k": [5.0, 5, 5]})
    got = fs.corr(ref, ctx_for(ref))
    # pairs ab, ac, ak, bc, bk, ck; the constant column k gives 0.
    np.testing.assert_allclose(got, [1, -1, 0, -1, 0, 0], atol=1e-12)


def test_ensemble_concatenates():
    ref = pd.DataFrame({"a": [1.0, 2, 3, 7], "b": [0.0, 1, 1, 0]})
    ctx = ctx_for(ref)
    np.testing.assert_array_equal(
        fs.ensemble(ref, ctx),
        np.concatenate([fs.naive(ref, ctx), fs.hist(ref, ctx), fs.corr(ref, ctx)]))


REF = pd.DataFrame({"a": [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.6], "b": [0, 1, 0, 1, 1, 0, 0],
                    "c": [3, 3, 3, 3, 3, 3, 3], "y": [0, 1, 1, 0, 1, 0, 1]}, dtype=float)
ODD = {
    "empty": REF.iloc[:0],
    "one row": REF.iloc[:1],
    "nan": REF.assign(a=np.nan, b=[np.nan, 1, 0, 1, np.nan, 0, 0]),
    "inf": REF.assign(a=[np.inf, -np.inf, 0, 1, 2, 3, 4]),
    "constant": REF.assign(a=0.5, b=1.0),
    "missing column": REF.drop(columns="b"),
    "extra column": REF.assign(z=1.0),
    "int dtype": REF.astype(int),
}


@pytest.mark.parametrize("name", sorted(fs.FEATURE_SETS))
@pytest.mark.parametrize("case", sorted(ODD))
def test_fixed_length_and_finite(name, case):
    ctx = ctx_for(REF, {"a": 0.9, "b": 1, "c": 3, "y": 1})
    want = len(fs.get(name)(REF, ctx))
    got = fs.get(name)(ODD[case], ctx)
    assert got.shape == (want,) and got.dtype == float
    assert np.isfinite(got).all()


def test_fill_values_are_zero():
    ctx = ctx_for(REF)
    assert not fs.naive(REF.iloc[:0], ctx).any()
    one = fs.naive(REF.iloc[:1], ctx).reshape(-1, 5)
    np.testing.assert_array_equal(one[:, 4], 0.0)  # variance of one value
    np.testing.assert_array_equal(one[:, 0], REF.iloc[0].to_numpy())


@settings(max_examples=40, deadline=None)
@given(arrays(float, st.tuples(st.integers(0, 6), st.just(4)),
              elements=st.one_of(st.floats(-1e6, 1e6), st.just(np.nan), st.just(np.inf))))
def test_any_table_gives_finite_fixed_length_vectors(values):
    ctx = ctx_for(REF)
    synth = pd.DataFrame(values, columns=REF.columns)
    for name, fn in fs.FEATURE_SETS.items():
        got = fn(synth, ctx)
        assert got.shape == fn(REF, ctx).shape and np.isfinite(got).all(), name


def test_extract_stacks_and_keeps_width_when_empty():
    ctx = ctx_for(REF)
    m = fs.extract("naive", [REF, REF.iloc[:3]], ctx)
    assert m.shape == (2, 5 * REF.shape[1])
    assert fs.extract("corr", [], ctx).shape == (0, 6)


def test_registry():
    assert fs.get("naive") is fs.naive
    with pytest.raises(UnknownNameError, match="unknown feature set 'nope'; known: corr, "
                                               "domias, ensemble, hist, naive, "
                                               "querybased, stacked"):
        fs.get("nope")
    with pytest.raises(ConfigError, match="already registered"):
        fs.register("naive", fs.naive)


def test_context_needs_the_targets_columns():
    with pytest.raises(ConfigError, match="lacks the columns"):
        AttackContext.build(REF, pd.Series({"a": 1.0}))


def _candidate_contexts():
    # Contexts for several targets of one table: dropping the extremes (rows 0 and 3
    # hold a's min and max) moves the reference's ranges, dropping row 1 does not.
    ref = pd.DataFrame({"a": [0.0, 1.0, 2.0, 9.0, 3.0, 4.0, 5.0, 6.0],
                        "b": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
                        "c": [0.5, 1.5, 2.5, 3.5, 2.0, 1.0, 0.0, 7.0]})
    return [AttackContext.build(ref.drop(index=i), ref.loc[i]) for i in (0, 1, 3, 2)]


@pytest.mark.parametrize("name", ["naive", "hist", "corr", "ensemble", "querybased"])
def test_extract_many_gives_the_numbers_of_one_extract_per_context(name):
    rng = np.random.default_rng(3)
    synths = [pd.DataFrame(rng.normal(3, 3, size=(20, 3)).round(1), columns=list("abc"))
              for _ in range(4)]
    synths[1].iloc[2, 0] = np.nan
    ctxs = _candidate_contexts()
    got = fs.extract_many(name, synths, ctxs)
    assert len(got) == len(ctxs)
    for g, ctx in zip(got, ctxs):
        want = fs.extract(name, synths, ctx)
        assert g.shape == want.shape and np.array_equal(g, want)
    assert [g.shape for g in fs.extract_many(name, [], ctxs)] == \
        [fs.extract(name, [], c).shape for c in ctxs]


def test_extract_many_reads_each_table_once_per_distinct_context(monkeypatch):
    calls = []
    real = AttackContext.values
    monkeypatch.setattr(AttackContext, "values", lambda self, s: calls.append(1) or real(self, s))
    synths = [REF, REF.iloc[:3]]
    ctxs = _candidate_contexts()
    fs.extract_many("naive", synths, ctxs)
    assert len(calls) == 2  # not 2 x 4: naive reads only the columns
    calls.clear()
    fs.extract_many("hist", synths, ctxs)
    # targets 1 and 2 leave every range as it is: 3 distinct contexts of 4
    assert len(calls) == 2 * 3
    calls.clear()
    fs.extract_many("querybased", synths, ctxs)
    assert len(calls) == 2 * 4  # its queries are the target's


def test_extract_many_rejects_unknown_names():
    with pytest.raises(UnknownNameError):
        fs.extract_many("nope", [REF], [ctx_for(REF)])
