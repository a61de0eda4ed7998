"""Sequential audits: alpha spending keeps the error rate of a fixed-size audit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from raudit.audit import sequential as sq
from raudit.audit.epsilon import eps_clopper_pearson
from raudit.errors import ConfigError


def test_stages_double_up_to_the_last():
    assert sq.stages(50, 400) == [50, 100, 200, 400]
    assert sq.stages(50, 300) == [50, 100, 200, 300]
    assert sq.stages(20, 20) == [20]
    with pytest.raises(ConfigError):
        sq.stages(100, 50)


def test_look_levels_sum_to_alpha():
    levels = [sq.look_alpha(0.1, k) for k in range(1, 100_000)]
    assert sum(levels) <= 0.1 and sum(levels) == pytest.approx(0.1, rel=1e-4)
    assert sq.look_alpha(0.1, 1) == pytest.approx(0.1 * 6 / math.pi ** 2)


def test_interval_brackets_the_point_estimate():
    lo, hi = sq.eps_interval(180, 20, 190, 10, delta=1e-5, alpha=0.1)
    point = max(math.log((1 - 0.05) / 0.1), math.log((1 - 0.1) / 0.05))
    assert lo == pytest.approx(eps_clopper_pearson(180, 20, 190, 10, delta=1e-5, alpha=0.1))
    assert lo < point < hi
    assert sq.eps_interval(200, 0, 200, 0, delta=1e-5, alpha=0.1)[1] == math.inf


def test_stopping_rules():
    look = {"eps_cp": 1.0, "eps_hi": 1.4, "saturated": False, "eps_max": 3.0}
    assert sq.should_stop(look, width=0.5) and not sq.should_stop(look, width=0.3)
    assert not sq.should_stop(look, until_ceiling=True)  # the first look never plateaus
    assert sq.should_stop(look, until_ceiling=True, previous={"eps_cp": 0.98})
    assert not sq.should_stop(look, until_ceiling=True, previous={"eps_cp": 0.5})
    assert not sq.should_stop({**look, "saturated": True}, until_ceiling=True,
                              previous={"eps_cp": 1.0})
    assert sq.should_stop({"eps_cp": math.nan}, last=True) == "reached the last stage"
    assert sq.should_stop({"eps_cp": math.nan}, width=10.0) is None


def _simulate(n_sims, stages, p, eps, alpha, rng, corrected):
    """Final bounds of sequential audits whose trials have FPR = FNR = p (on the boundary of
    eps-DP), stopping by the width rule; counts grow stage by stage (the same models)."""
    final = np.empty(n_sims)
    for j in range(n_sims):
        errors = rng.random((2, stages[-1])) < p  # out-world false positives, in-world misses
        for k, s in enumerate(stages, start=1):
            fp, fn = int(errors[0, :s].sum()), int(errors[1, :s].sum())
            level = sq.look_alpha(alpha, k) if corrected else alpha
            lo, hi = sq.eps_interval(s - fn, fn, s - fp, fp, delta=0.0, alpha=level)
            stop = sq.should_stop({"eps_cp": lo, "eps_hi": hi}, width=0.8,
                                  last=k == len(stages))
            if stop:
                break
        final[j] = lo
    return final


@pytest.mark.slow
def test_sequential_stop_keeps_the_fixed_size_error_rate():
    # Randomized response at eps = 1 sits on its boundary: FPR = FNR = 1/(1 + e).
    eps, alpha = 1.0, 0.5  # a large alpha makes errors frequent enough to count
    p = 1.0 / (1.0 + math.e)
    stages = [25, 50, 100, 200, 400]
    rng = np.random.default_rng(5)
    fixed = np.array([eps_clopper_pearson(400 - fn, fn, 400 - fp, fp, delta=0.0, alpha=alpha)
                      for fp, fn in rng.binomial(400, p, size=(3000, 2))])
    seq = _simulate(3000, stages, p, eps, alpha, np.random.default_rng(6), corrected=True)
    naive = _simulate(3000, stages, p, eps, alpha, np.random.default_rng(6), corrected=False)
    err_fixed, err_seq, err_naive = ((x > eps).mean() for x in (fixed, seq, naive))
    # guarantee: <= alpha/2 each; the corrected sequential audit is no worse than the
    # fixed-size one (binomial noise of 3000 runs: ~0.006), the uncorrected one is
    assert err_fixed <= alpha / 2 and err_seq <= alpha / 2
    assert err_seq <= err_fixed + 0.015
    assert err_naive > err_seq


def _seq(tmp_path, name, **kw):
    from raudit.audit.runner import AuditRequest
    from raudit.engine.driver import EngineConfig
    from raudit.runs.audit import run_audit

    base = dict(attack="querybased", shadow_models=100, chunk_size=100, first_stage=25)
    return run_audit(AuditRequest(**{**base, **kw}), tmp_path / name, EngineConfig(backend="local"))


def test_a_perfect_attack_goes_to_the_last_stage_and_a_null_one_stops(tmp_path):
    ident = _seq(tmp_path, "id", impl="identity", until_ceiling=True)
    assert ident["looks"] == 3 and ident["shadow_models"] == 100
    assert ident["stop_reason"] == "reached the last stage"
    # the last look's level is alpha 6/(pi^2 9): the CP ceiling at that level, 40 per class
    b = (sq.look_alpha(0.1, 3) / 4) ** (1 / 40)
    assert ident["eps_cp"] == pytest.approx(math.log((b - 1e-5) / (1 - b)), abs=1e-6)
    null = _seq(tmp_path, "ind", impl="independent", until_ceiling=True)
    assert null["looks"] == 2 and null["models_ok"] == 100 and null["eps_cp"] == 0.0


def test_a_sequential_audit_resumes_to_the_same_answer(tmp_path):
    first = _seq(tmp_path, "a", impl="identity", target_width=0.5)
    again = _seq(tmp_path, "a", impl="identity", target_width=0.5)
    assert again["models_run"] == 0
    for key in ("eps_cp", "looks", "stop_reason", "shadow_models", "auc"):
        assert again[key] == first[key], key
    with pytest.raises(ConfigError, match="target-width"):
        _seq(tmp_path, "b", impl="identity", target_width=-1.0)
