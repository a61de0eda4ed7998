"""Chunk sizes chosen once per set-up and machine: the on-disk rate cache and `-M auto`."""

import json

import pytest

from raudit.audit.runner import DEFAULT_CHUNK, AuditRequest, prepare
from raudit.engine.driver import EngineConfig
from raudit.runs import chunk_cache
from raudit.runs.calibrate import audit_chunk_size


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _fit(req):
    g = prepare(req)[0]
    return (g.impl, dict(g.options), g.dataset, g.epsilon, g.delta, g.label, g.bounds)


def test_rates_round_trip_and_keys_differ_by_setup_and_device():
    k = chunk_cache.key(("paper", {"teachers": 5}, "cervical", 1.0, 1e-5, None, None), "cpu")
    assert chunk_cache.lookup(k) is None
    chunk_cache.store(k, {8: 100.0, 32: 300.5})
    assert chunk_cache.lookup(k) == {8: 100.0, 32: 300.5}
    other = chunk_cache.key(("paper", {"teachers": 6}, "cervical", 1.0, 1e-5, None, None), "cpu")
    gpu = chunk_cache.key(("paper", {"teachers": 5}, "cervical", 1.0, 1e-5, None, None), "cuda")
    assert len({k, other, gpu}) == 3 and chunk_cache.lookup(other) is None


def test_damaged_cache_is_set_aside_and_started_afresh(cache_dir):
    cache_dir.mkdir(parents=True)
    (cache_dir / chunk_cache.NAME).write_text("{not json")
    assert chunk_cache.lookup("x") is None
    assert (cache_dir / (chunk_cache.NAME + ".damaged")).exists()
    chunk_cache.store("x", {4: 1.0})
    assert json.loads((cache_dir / chunk_cache.NAME).read_text()) == {"x": {"4": 1.0}}


def test_auto_uses_the_default_for_small_audits_and_the_cache_for_large_ones():
    engine = EngineConfig(backend="local", workers=1)
    small = AuditRequest(impl="paper", attack="querybased", shadow_models=20)
    assert audit_chunk_size(small, engine) == DEFAULT_CHUNK  # not worth a calibration
    large = AuditRequest(impl="paper", attack="querybased", shadow_models=1000)
    chunk_cache.store(chunk_cache.key(_fit(large), "cpu"), {1: 10.0, 8: 80.0, 32: 300.0, 128: 310.0})
    said = []
    # the smallest M within 10% of the best rate (32), no calibration run
    assert audit_chunk_size(large, engine, said.append) == 32
    assert "cached" in said[0] and "M=128: 310" in said[0]
