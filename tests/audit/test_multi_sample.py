"""Several synthetic datasets per shadow model: the extra ones feed the multi-sample Bayes
estimate only; the single-sample bounds stay those of the one-sample audit."""

from __future__ import annotations

import pytest

from raudit import seeds
from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.results import ResultStore
from raudit.runs.audit import run_audit

BASE = dict(impl="randomized-response", attack="querybased", epsilon=8.0, neighbours="replace",
            shadow_models=30, chunk_size=100, seed=1)

def test_extra_samples_leave_the_single_sample_bounds_alone(tmp_path):
    one = run_audit(AuditRequest(**BASE), tmp_path / "one", EngineConfig(backend="local"))
    three = run_audit(AuditRequest(**BASE, samples_per_model=3), tmp_path / "three",
                      EngineConfig(backend="local"))
    # the same models and first samples (seeds do not depend on the sample count)
    for key in ("auc", "tp", "fn", "tn", "fp", "eps_cp", "eps_bayes"):
        assert three[key] == one[key], key
    assert one["samples_per_model"] == 1 and one["eps_bayes_multi"] is None
    assert three["samples_per_model"] == 3 and three["eps_bayes_multi"] > 0
    shadow = ResultStore(tmp_path / "three").read("shadow")
    assert shadow["features_extra"].map(len).eq(2).all()
    # randomized response releases one table, so its samples coincide; a generator that
    # samples afresh gives every extra dataset its own draw (its own seed)
    ind = ResultStore(tmp_path / "ind")
    run_audit(AuditRequest(**{**BASE, "impl": "independent", "shadow_models": 10},
                           samples_per_model=2), ind.root, EngineConfig(backend="local"))
    rows = ind.read("shadow")
    assert any(list(r["features_extra"][0]) != list(r["features_vec"]) for _, r in rows.iterrows())

def test_extra_sample_seeds_are_their_own_stream():
    fit, sample = seeds.model_seeds(0, "in", 4)
    extra = {seeds.extra_sample_seed(0, "in", 4, k) for k in (1, 2, 3)}
    assert len(extra) == 3 and not extra & {fit, sample}

@pytest.mark.parametrize("bad", [0, 101, True])
def test_bad_sample_counts_are_refused(bad):
    with pytest.raises(ConfigError, match="samples-per-model"):
        from raudit.audit.runner import prepare
        prepare(AuditRequest(**{**BASE, "samples_per_model": bad}))
