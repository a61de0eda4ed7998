"""Chunk sizes chosen once per set-up and machine: the on-disk rate cache and `-M auto`."""

import json

import pandas as pd
import pytest

from raudit.audit.runner import DEFAULT_CHUNK, AuditRequest, prepare
from raudit.engine.driver import EngineConfig
from raudit.runs import chunk_cache
from raudit.runs.chunk_size import audit_chunk_size


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(autouse=True)
def position_free_products(monkeypatch):
    """These tests check the chunk-size rules against what a generator declares; whether
    this host's batched products depend on a model's position (whole.products_batch_invariant,
    False on an AVX2 EPYC) is set per test where it matters, not read off the host."""
    from raudit.generators.nn import whole

    monkeypatch.setattr(whole, "products_batch_invariant", lambda dtype: True)


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
    assert list(json.loads((cache_dir / chunk_cache.NAME).read_text())) == ["x"]
    assert chunk_cache.lookup("x") == {4: 1.0}


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


def test_entries_are_per_cpu_second_with_the_load_and_old_wall_clock_ones_read_as_absent(
        cache_dir):
    chunk_cache.store("k", {8: 50.0}, load=3.5, threads=1)
    entry = chunk_cache.lookup_entry("k")
    assert entry.rates == {8: 50.0} and entry.load == 3.5 and entry.threads == 1
    assert entry.measured_at is not None
    # an entry of the format before rates were per CPU-second: wall clock, load unknown
    data = json.loads((cache_dir / chunk_cache.NAME).read_text())
    data["old"] = {"1": 4.0, "8": 19.0}
    (cache_dir / chunk_cache.NAME).write_text(json.dumps(data))
    assert chunk_cache.lookup("old") is None and chunk_cache.lookup("k") == {8: 50.0}
    chunk_cache.drop("k")
    assert chunk_cache.lookup("k") is None
    chunk_cache.drop("never-there")  # no error


def test_a_cached_rate_the_run_contradicts_is_dropped_and_measured_again():
    from raudit.runs import chunk_size as cb

    fit = ("paper", {"max_iter": 3, "teachers": 2}, "worst-case", 1.0, 1e-5, None, None)
    k = chunk_cache.key(fit, "cpu")
    chunk_cache.store(k, {1: 4.0, 8: 19.0}, load=7.9)  # taken on a loaded machine
    assert cb.cached_rate(fit, "cpu", 8) == 19.0 and cb.cached_rate(fit, "cpu", 32) is None
    said = []
    # within STALE_FACTOR of the cached rate either way: kept
    assert not cb.observe(fit, "cpu", 8, model_iterations=300, cpu_s=10.0, notice=said.append)
    assert not cb.observe(fit, "cpu", 8, model_iterations=100, cpu_s=10.0)
    assert cb.cached_rate(fit, "cpu", 8) == 19.0 and not said
    # the run saw 5x the cached rate: dropped, said so, and the next lookup measures
    assert cb.observe(fit, "cpu", 8, model_iterations=950, cpu_s=10.0, notice=said.append)
    assert cb.cached_rate(fit, "cpu", 8) is None and "disagrees" in said[0]
    rates = cb.measure_rate(fit, "cpu", ms=[1, 2])
    assert set(rates) == {1, 2} and all(r > 0 for r in rates.values())
    entry = chunk_cache.lookup_entry(k)
    assert entry.rates == rates and entry.threads >= 1


def test_calibration_reads_cpu_time_beside_wall_time():
    from raudit.runs import calibrate as cb

    cal = cb.fit_rate("paper", {"teachers": 2}, "worst-case", 1.0, 1e-5, 2, cap=2)
    assert cal.cpu_s_per_model_iter > 0 and cal.s_per_model_iter > 0
    assert cal.cpu_rate == 1 / cal.cpu_s_per_model_iter


def test_an_auto_audit_checks_the_cached_rate_against_its_rows(tmp_path):
    from typer.testing import CliRunner

    from raudit.cli.app import app

    args = ["audit", "--backend", "local", "--impl", "paper", "--attack", "querybased", "-S",
            "5", "--max-iter", "2"]
    r = CliRunner().invoke(app, [*args, "-M", "5", "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    shadow = pd.read_parquet(tmp_path / "a" / "shadow")
    assert (shadow["train_cpu_s"] > 0).all()  # the rows carry their training CPU time
    opts = json.loads(shadow["options_json"].iloc[0])  # the options as the CLI resolved them
    k = chunk_cache.key(_fit(AuditRequest(impl="paper", attack="querybased", shadow_models=5,
                                          options=opts)), "cpu")
    chunk_cache.store(k, {1: 1e9, 8: 1e9, 32: 1e9, 128: 1e9})  # absurdly fast: stale
    r = CliRunner().invoke(app, [*args, "-M", "auto", "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert chunk_cache.lookup(k) is None and "disagrees" in r.stderr


def test_rates_are_keyed_on_the_arithmetic_mode(monkeypatch):
    """A rate measured under RAUDIT_COMPILE=step never steers an eager run, nor the reverse;
    the default eager mode keeps the key it had before the mode was part of it."""
    from raudit.generators.nn import compiled

    monkeypatch.setattr(compiled, "_has_compiler", lambda: True)
    for name in compiled.ARITHMETIC:
        monkeypatch.delenv(name, raising=False)
    fit = ("smartnoise", {}, "breast-cancer", 1.0, None, None, None)
    eager = chunk_cache.key(fit, "cpu")
    assert json.loads(eager)[-1] == chunk_cache.machine()  # nothing appended for eager
    chunk_cache.store(eager, {8: 200.0, 32: 230.0})
    monkeypatch.setenv("RAUDIT_COMPILE", "step")
    step = chunk_cache.key(fit, "cpu")
    assert step != eager and chunk_cache.lookup(step) is None  # eager's rates are not step's
    chunk_cache.store(step, {32: 400.0})
    monkeypatch.setenv("RAUDIT_COMPILE", "0")
    assert chunk_cache.key(fit, "cpu") == eager and chunk_cache.lookup(eager) == {8: 200.0, 32: 230.0}
    monkeypatch.setenv("RAUDIT_HAND_GRAD", "0")  # autograd's teachers: another entry again
    assert chunk_cache.key(fit, "cpu") not in (eager, step)
    monkeypatch.setenv("RAUDIT_HAND_GRAD", "1")
    assert chunk_cache.key(fit, "cpu") == eager


def test_auto_keeps_one_chunk_size_where_a_setup_is_not_chunk_invariant(monkeypatch):
    """A set-up whose last bits could depend on its chunk (here: RAUDIT_COMPILE=step; or a
    batched generator without whole_blocks at a batch not of whole SIMD blocks): -M auto
    ignores a cached calibration and the number of workers and takes the generator's
    canonical chunk size, saying why; without it the cache steers M as before."""
    from raudit.generators.pategan.paper import PaperPateGan

    req = AuditRequest(impl="paper", attack="querybased", shadow_models=1000, options={"batch": 16})
    chunk_cache.store(chunk_cache.key(_fit(req), "cpu"), {1: 10.0, 8: 80.0, 32: 300.0})
    assert audit_chunk_size(req, EngineConfig(backend="local", workers=1)) == 32  # whole blocks
    said = []
    monkeypatch.setenv("RAUDIT_COMPILE", "step")
    for workers in (1, 2, 8):
        engine = EngineConfig(backend="local", workers=workers)
        assert audit_chunk_size(req, engine, said.append) == DEFAULT_CHUNK
    assert len(said) == 3 and "RAUDIT_COMPILE=step" in said[0] and "cached" not in said[0]
    assert said[0].startswith(f"chunk size {DEFAULT_CHUNK}, not calibrated") and "-M N" in said[0]
    monkeypatch.delenv("RAUDIT_COMPILE")
    monkeypatch.setattr(PaperPateGan, "whole_blocks", False)
    said.clear()
    assert audit_chunk_size(req, EngineConfig(backend="local", workers=1), said.append) == DEFAULT_CHUNK
    assert "batch 16 is not a multiple of 32 (float32)" in said[0]


def test_the_rule_without_whole_blocks_per_dtype(monkeypatch):
    from raudit import generators
    from raudit.generators.batched import BatchedGenerator
    from raudit.runs.chunk_size import canonical_chunk

    from raudit.generators.nn import whole

    batched = [n for n in generators.names() if issubclass(generators.get(n), BatchedGenerator)]
    # a host whose batched products do not depend on a model's position (AVX-512 Xeon)
    assert all(generators.get(n)(batch=7).chunk_dependence(686, 30) is None for n in batched)
    # one whose do (an AVX2 EPYC's MKL): whole_blocks alone no longer frees the batch size
    monkeypatch.setattr(whole, "products_batch_invariant", lambda dtype: False)
    assert generators.get("borealis")(batch=7).chunk_dependence(686, 30) == \
        "batch 7 is not a multiple of 16 (float64)"
    assert generators.get("borealis")(batch=16).chunk_dependence(686, 30) is None
    monkeypatch.setattr(whole, "products_batch_invariant", lambda dtype: True)
    monkeypatch.setattr(BatchedGenerator, "whole_blocks", False)
    for n in batched:
        monkeypatch.setattr(generators.get(n), "whole_blocks", False, raising=False)
    paper = generators.get("paper")
    assert paper().chunk_dependence(686, 30) is None  # batch min(64, N // k) = 64
    assert paper(batch=16).chunk_dependence(686, 30) == "batch 16 is not a multiple of 32 (float32)"
    assert paper(batch=16, dtype="float64").chunk_dependence(686, 30) is None
    assert generators.get("fixed")(query_batch=8).chunk_dependence(686, 30) == \
        "query_batch 8 is not a multiple of 32 (float32)"
    assert generators.get("borealis")(batch=7).chunk_dependence(686, 30) == \
        "batch 7 is not a multiple of 16 (float64)"
    # the study's harness on a small table: batch = N // k
    assert paper().chunk_dependence(100, 30) == "batch 50 is not a multiple of 32 (float32)"
    assert canonical_chunk("paper") == DEFAULT_CHUNK and canonical_chunk("gpate") == 1


def test_a_campaign_job_that_is_not_chunk_invariant_gets_the_canonical_size(monkeypatch):
    """``chunk_size: auto`` in a campaign: such a job is not calibrated (nothing runs)."""
    from raudit.generators.pategan.paper import PaperPateGan
    from raudit.runs import chunk_size as cs
    from raudit.runs.jobs import AuditJob

    monkeypatch.setattr(PaperPateGan, "whole_blocks", False)
    monkeypatch.setattr(cs, "measure_rates", lambda *a, **k: pytest.fail("calibrated"))
    job = AuditJob("odd", AuditRequest(impl="paper", attack="querybased", shadow_models=1000,
                                       options={"batch": 16}))
    job.auto_chunk = True
    said = []
    got = cs.auto_chunk_sizes([job], EngineConfig(backend="local", workers=2), 2, said.append)
    assert got == {"odd": DEFAULT_CHUNK}
    assert said == [f"odd: chunk size {DEFAULT_CHUNK}, not calibrated: batch 16 is not a multiple "
                    "of 32 (float32), so a model's last bits could depend on its chunk; auto "
                    "keeps this size on every machine and resume (an explicit size, -M N, can "
                    "change the last bits)"]


def test_a_resume_at_one_chunk_size_keeps_the_chunk_boundaries():
    """Why one canonical M is enough for resumes: the trials done are whole chunks, and the
    pending ones are cut again in runs of M from the start of each world, so every chunk
    left is one of the first run's, whatever was done and in which order."""
    from raudit.audit import game as g
    from raudit.audit.runner import chunk_specs

    game = prepare(AuditRequest(impl="identity", attack="querybased", shadow_models=23))[0]
    per_world = {w: g.trials(game, world=w) for w in ("out", "in")}
    ids = lambda s: tuple(t["trial_id"] for t in s["trials"])  # noqa: E731
    first = [ids(s) for s in chunk_specs(game, "x", per_world, set(), 5)]
    for done_chunks in ([0], [1, 4], [0, 2, 3, 9], list(range(0, 10, 2))):
        done = {t for i in done_chunks for t in first[i]}
        again = [ids(s) for s in chunk_specs(game, "x", per_world, done, 5)]
        assert sorted(again) == sorted(c for i, c in enumerate(first) if i not in done_chunks)
