"""The driver on a local Ray cluster (2 CPUs) and in-process: every chunk reported once,
retries, failures recorded, a killed actor losing nothing, and Ray == local results."""

from __future__ import annotations

import os
import signal
import sys
import time

import pandas as pd
import pytest

ray = pytest.importorskip("ray")

from raudit.audit.runner import AuditRequest  # noqa: E402
from raudit.engine import actors  # noqa: E402
from raudit.engine.driver import EngineConfig, run_chunks  # noqa: E402
from raudit.errors import ConfigError  # noqa: E402
from raudit.runs.audit import run_audit  # noqa: E402

pytestmark = pytest.mark.ray

# Ray workers cannot import this test module by name: ship its functions by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

RAY = EngineConfig(backend="ray", workers=2, retries=1)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def square(spec):
    time.sleep(spec.get("sleep", 0.0))
    if spec["x"] in spec.get("fail", ()):
        raise ValueError(f"bad x {spec['x']}")
    return {"x": spec["x"], "y": spec["x"] ** 2, "pid": os.getpid(), "device": spec["device"]}


def _collect(specs, config, **kw):
    seen = []
    stats = run_chunks(square, specs, config=config,
                       on_done=lambda s, r, e: seen.append((s["x"], r, e)), **kw)
    return seen, stats


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_every_chunk_is_reported_once(cluster, backend):
    ticks = []
    seen, stats = _collect([{"x": i} for i in range(9)], EngineConfig(backend=backend, workers=2),
                           weight=lambda s: 10, progress=ticks.append)
    assert sorted(x for x, _, _ in seen) == list(range(9))
    assert all(r["y"] == x * x and e is None and r["device"] == "cpu" for x, r, e in seen)
    assert stats.units == 90 and sum(ticks) == 90 and stats.failed_chunks == 0
    if backend == "ray":
        assert stats.placement == "2 CPU actors"
        assert len({r["pid"] for _, r, _ in seen}) == 2 and os.getpid() not in {r["pid"] for _, r, _ in seen}


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_failing_chunk_is_retried_then_reported(cluster, backend):
    seen, stats = _collect([{"x": i, "fail": (3,)} for i in range(5)],
                           EngineConfig(backend=backend, workers=2, retries=2))
    errors = {x: e for x, _, e in seen if e}
    assert list(errors) == [3] and "bad x 3" in errors[3]
    assert stats.failed_chunks == 1 and stats.attempts == 5 + 2 and stats.units == 4


def test_killed_actor_loses_nothing(cluster, capfd):
    # Kill the actor process that finished the first chunk (SIGKILL, like an OOM kill):
    # its queued chunks are resubmitted; every chunk is reported exactly once, without error.
    killed = []

    def on_done(spec, result, error):
        seen.append((spec["x"], error))
        if not killed and result is not None:
            killed.append(result["pid"])
            os.kill(result["pid"], signal.SIGKILL)

    seen: list = []
    stats = run_chunks(square, [{"x": i, "sleep": 0.3} for i in range(8)], config=RAY,
                       on_done=on_done)
    assert sorted(x for x, _ in seen) == list(range(8)) and all(e is None for _, e in seen)
    assert killed and stats.attempts > 8  # something was resubmitted
    # one raudit line for the death, saying what was lost and that it is retried
    said = [ln for ln in capfd.readouterr().err.splitlines() if "worker process" in ln]
    assert len(said) == 1 and said[0].startswith("raudit: a worker process"), said
    assert "retried on another worker" in said[0] and "results already saved are kept" in said[0]


def test_placement_falls_back_to_cpu_without_gpus(cluster):
    p = actors.place("cuda", None, per_gpu=4)
    assert p.device == "cpu" and p.actors == 2 and "no GPU" in p.note
    assert actors.place("cpu", 8, per_gpu=1).actors == 2  # capped at the cluster's CPUs
    with pytest.raises(ConfigError):
        EngineConfig(backend="dask")


def test_ray_and_local_audits_agree(cluster, tmp_path):
    req = AuditRequest(impl="paper", attack="querybased", shadow_models=10, chunk_size=4,
                       options={"max_iter": 3})
    a = run_audit(req, tmp_path / "ray", RAY)
    b = run_audit(req, tmp_path / "local", EngineConfig(backend="local"))
    assert a["placement"] == "2 CPU actors" and a["models_ok"] == b["models_ok"] == 20
    cols = ["trial_id", "world", "split", "seed", "iterations"]
    ra = pd.read_parquet(tmp_path / "ray" / "shadow").sort_values("trial_id").reset_index(drop=True)
    lo = pd.read_parquet(tmp_path / "local" / "shadow").sort_values("trial_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(ra[cols], lo[cols])
    assert all((x == y).all() for x, y in zip(ra["features_vec"], lo["features_vec"]))
    assert (a["auc"], a["eps_cp"]) == (b["auc"], b["eps_cp"])


def test_killing_a_worker_mid_audit_loses_nothing(cluster, tmp_path, kill_actor_after_first_part):
    killed = kill_actor_after_first_part  # one chunk is safely on disk: kill an actor
    req = AuditRequest(impl="paper", attack="querybased", shadow_models=10, chunk_size=2,
                       options={"max_iter": 3})
    r = run_audit(req, tmp_path, RAY)
    shadow = pd.read_parquet(tmp_path / "shadow")
    assert killed and r["models_ok"] == 20 and r["missing"] == 0
    assert len(shadow) == 20 and shadow["trial_id"].is_unique and (shadow["status"] == "ok").all()


def test_early_in_world_chunks_on_ray_with_a_killed_worker_lose_nothing(
        cluster, tmp_path, kill_actor_after_first_part):
    """--target auto on Ray queues the game's first in-world chunks behind the selection's
    (raudit.runs.early); an actor killed once the first selection part is stored loses
    none of them: the same rows (features, iterations, eps_hat, eps_true) and the same
    result as the local backend, which queues none."""
    from raudit.generators.kwargs import generator_kwargs

    killed = kill_actor_after_first_part
    options = generator_kwargs("smartnoise", preset=None, teachers=None, lam=None, max_iter=3,
                               device=None, options=None)
    req = AuditRequest(impl="smartnoise", attack="groundhog", dataset="breast-cancer",
                       target="auto", shadow_models=10, chunk_size=3, selection_models=8,
                       target_candidates=4, options=options)
    a = run_audit(req, tmp_path / "ray", RAY)
    b = run_audit(req, tmp_path / "local", EngineConfig(backend="local"))
    assert killed and a["models_ok"] == b["models_ok"] == 20 and a["missing"] == 0
    cols = ["trial_id", "world", "split", "seed", "sample_seed", "iterations", "eps_hat",
            "eps_true", "chunk_models", "target"]
    ra = pd.read_parquet(tmp_path / "ray" / "shadow").sort_values("trial_id").reset_index(drop=True)
    lo = pd.read_parquet(tmp_path / "local" / "shadow").sort_values("trial_id").reset_index(drop=True)
    assert ra["trial_id"].is_unique and (ra["status"] == "ok").all()
    pd.testing.assert_frame_equal(ra[cols], lo[cols])
    assert all((x == y).all() for x, y in zip(ra["features_vec"], lo["features_vec"]))
    for key in ("target", "auc", "eps_cp", "eps_bayes", "eps_true", "selection_models"):
        assert a[key] == b[key], key
