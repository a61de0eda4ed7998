"""The estimator contract, run over every registered estimator (raudit.audit.estimators):
each declares a guarantee and an assumption, reads only the Evidence, is deterministic,
returns a non-negative eps_lo (or None where it does not apply), and appears in the
summary's columns, the long estimates table, `raudit audit`'s table and the report.

Adding an estimator: register it, and add its golden value to GOLDEN below (a value
recomputed independently, with its source)."""

import math

import numpy as np
import pytest

from raudit.audit.thresholds import threshold_counts
from raudit.audit.estimators import (ASSUMPTIONS, ESTIMATORS, Evidence, best, column_of,
                                     estimate, estimate_rows, values_of)

DELTA, ALPHA = 1e-5, 0.1


def evidence(seed: int = 0, n: int = 200, shift: float = 2.0, multi=lambda: {}) -> Evidence:
    """A seeded attack: scores sigmoid(N(shift, 1)) for members, sigmoid(N(0, 1)) for
    non-members (probabilities, as the attack classifier gives)."""
    rng = np.random.default_rng(seed)

    def split():
        labels = np.repeat([1, 0], n)
        return 1.0 / (1.0 + np.exp(-rng.normal(shift * labels, 1.0))), labels

    val, test = split(), split()
    out = threshold_counts(*val, *test, delta=DELTA, alpha=ALPHA)
    return Evidence(val, test, (out["tp"], out["fn"], out["tn"], out["fp"]), DELTA, ALPHA, multi)


#: estimator -> (evidence, eps_lo, tolerance, source)
GOLDEN = {
    # EVALUATION.md section 3: 400/400 test models, no errors -> 4.682 (CP), 5.068 (Jeffreys)
    "cp": ((400, 0, 400, 0), 4.682, 5e-4),
    "jeffreys": ((400, 0, 400, 0), 5.068, 5e-4),
}


@pytest.fixture(params=ESTIMATORS.names())
def name(request):
    return request.param


def test_declares_its_guarantee_and_assumption(name):
    est = ESTIMATORS.get(name)
    assert est.name == name and est.label and len(est.guarantee) > 20
    assert est.assumption in ASSUMPTIONS
    assert not est.in_verdict or est.assumption == "none"


def test_deterministic_non_negative_or_none(name):
    fn = ESTIMATORS.get(name).fn
    a, b = fn(evidence(seed=3)), fn(evidence(seed=3))
    assert (a is None and b is None) or (a == b or (math.isnan(a) and math.isnan(b)))
    assert a is None or math.isnan(a) or a >= 0


def test_a_stronger_attack_never_bounds_lower(name):
    """Same seed, members shifted further: the counts only improve, so does eps_lo."""
    fn = ESTIMATORS.get(name).fn
    weak, strong = fn(evidence(seed=5, shift=1.0)), fn(evidence(seed=5, shift=4.0))
    if weak is not None and strong is not None and not math.isnan(weak):
        assert strong >= weak - 1e-9


def test_every_summary_and_long_table_carries_it(name):
    values = estimate(evidence(seed=1, multi=lambda: {"eps_bayes_multi": 0.5}))
    assert name in values
    rows = estimate_rows("a" * 16, values, ALPHA)
    assert [r["estimator"] for r in rows] == [n for n in ESTIMATORS.names()
                                             if values[n] is not None]
    row = {column_of(n): v for n, v in values.items()}
    assert values_of(row)[name] == (None if values[name] is None or math.isnan(values[name])
                                    else values[name])


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_goldens(name):
    counts, want, tol = GOLDEN[name]
    ev = Evidence((np.zeros(0), np.zeros(0)), (np.zeros(0), np.zeros(0)), counts, DELTA, ALPHA)
    assert abs(ESTIMATORS.get(name).fn(ev) - want) <= tol


def test_best_is_the_largest_assumption_free_bound():
    assert best({"cp": 1.0, "curve": 2.0, "gdp": 9.0}) == "curve"
    assert best({"cp": 1.0, "curve": 1.0}) == "cp"
    assert best({"cp": float("nan"), "curve": 2.0}) == "cp"  # as before the registry


def test_an_audit_writes_every_estimator_beside_its_summary(tmp_path):
    """run_audit -> the estimates table (one row per estimator with a value, equal to the
    summary's column), a resume adds none, and an estimator registered later reaches the
    long table and the report without a new summary column."""
    from raudit.audit.estimators import Estimator, register
    from raudit.audit.runner import AuditRequest
    from raudit.engine.driver import EngineConfig
    from raudit.report.audits import summaries
    from raudit.report.load import load
    from raudit.results import ResultStore
    from raudit.runs.audit import run_audit

    req = AuditRequest(impl="identity", attack="querybased", shadow_models=10)
    out, engine = tmp_path / "a", EngineConfig(backend="local")
    register(Estimator("half_cp", lambda ev: ESTIMATORS.get("cp").fn(ev) / 2, "eps_emp CP / 2",
                       "a made-up estimator for this test: half the CP bound, so also a bound",
                       "none"))
    try:
        row = run_audit(req, out, engine)
        run_audit(req, out, engine)  # resumed: nothing new
        est = ResultStore(out).read("estimates")
        assert list(est["estimator"]) == [n for n in ESTIMATORS.names()
                                          if row["estimates"][n] is not None]
        assert (est["audit_id"] == row["audit_id"]).all() and (est["alpha"] == ALPHA).all()
        by = dict(zip(est["estimator"], est["eps_lo"]))
        assert by["cp"] == row["eps_cp"] and by["half_cp"] == pytest.approx(row["eps_cp"] / 2)
        assert "eps_half_cp" not in ResultStore(out).read("summary")
        assert summaries(load(out))["eps_half_cp"].iloc[0] == pytest.approx(row["eps_cp"] / 2)
    finally:
        ESTIMATORS.unregister("half_cp")
