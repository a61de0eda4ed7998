"""The quick campaign on a real 3-node Ray cluster (a CPU-less head, two 1-CPU worker nodes
without the datasets), compared row by row with the single-machine result; and the
failures a cluster has: a worker node or its raylet killed mid-campaign, every worker
gone, the head gone. Each ends with identical results or one line and exit code 3.

Run with ``pytest -m cluster`` (minutes; the nodes are real `ray start` processes).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("ray")

from local_cluster import ROOT, LocalCluster  # noqa: E402

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

CONFIG = ROOT / "configs" / "quick-audit.yaml"
# the failure tests kill a node after the first part: the quick campaign can finish before Ray
# even notices, so they run one with more, longer chunks
LONG = Path(__file__).with_name("long-audit.yaml")
DATA = os.environ.get("RAUDIT_DATA_DIR") or str(ROOT.parent / "shared" / "data")
# measured, never compared: they differ run to run
VOLATILE = {"wall_s", "train_wall_s", "train_cpu_s", "score_wall_s", "created_at",
            "models_per_hour"}
KEYS = {"shadow": ["job", "trial_id"], "summary": ["job", "audit_id"],
        "utility": ["job", "trial_id", "classifier", "setting", "metric"]}


def _need_data():
    if not (Path(DATA) / "cervical_cancer").is_dir():
        pytest.skip(f"the quick campaign's utility job needs cervical under {DATA}")


def table(out: Path, name: str) -> pd.DataFrame:
    df = pd.read_parquet(out / name)
    df["job"] = df["job"].astype(str)
    df = df.drop(columns=[c for c in df.columns if c in VOLATILE])
    return df.sort_values(KEYS[name]).reset_index(drop=True)


def assert_same_store(a: Path, b: Path) -> None:
    for name in KEYS:
        ta, tb = table(a, name), table(b, name)
        assert len(ta) == len(tb) and ta[KEYS[name]].duplicated().sum() == 0, name
        for col in ta.columns:
            if col == "features_vec":
                assert all((x == y).all() for x, y in zip(ta[col], tb[col]))
            else:
                pd.testing.assert_series_equal(ta[col], tb[col], check_names=False,
                                               check_categorical=False, obj=f"{name}.{col}")


def campaign(env: dict, out: Path, *extra: str, config: Path = CONFIG) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "raudit.cli.app", "campaign", str(config), "--out", str(out),
         "--json", *extra], env=env, cwd=out.parent, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def wait_for_parts(proc: subprocess.Popen, out: Path, n: int = 1, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"the campaign ended before a part was written: "
                                 f"{proc.stderr.read()[-3000:]}")
        if len(list((out / "shadow").glob("job=*/*.parquet"))) >= n:
            return
        time.sleep(0.2)
    raise AssertionError(f"no part written under {out} in {timeout} s")


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[int, dict, str]:
    stdout, stderr = proc.communicate(timeout=timeout)
    try:
        result = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        result = {}
    return proc.returncode, result, stderr


def one_line_error(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr[-3000:]
    return errors[0]


@pytest.fixture(scope="module")
def cluster():
    _need_data()
    c = LocalCluster(workers=2)
    try:
        yield c.start()
    finally:
        c.stop()


def _local_store(tmp_path_factory, config: Path) -> Path:
    _need_data()
    out = tmp_path_factory.mktemp("local") / "store"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(PYTHONPATH=str(ROOT), RAUDIT_DATA_DIR=DATA, OMP_NUM_THREADS="1")
    code, result, stderr = finish(campaign(env, out, "--backend", "local", config=config))
    assert code == 0, stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def local_result(tmp_path_factory):
    return _local_store(tmp_path_factory, CONFIG)


@pytest.fixture(scope="module")
def long_result(tmp_path_factory):
    return _local_store(tmp_path_factory, LONG)


@pytest.fixture
def workers_up(cluster):
    cluster.ensure_workers()
    return cluster


def test_campaign_through_ray_address_equals_local(workers_up, local_result, tmp_path):
    out = tmp_path / "store"
    code, result, stderr = finish(campaign(workers_up.driver_env(DATA), out))
    assert code == 0, stderr[-3000:]
    assert result["placement"] == "2 CPU actors"  # the two worker nodes, not the head
    assert_same_store(out, local_result)


@pytest.mark.parametrize("kill", ["node w1", "raylet w2"])
def test_killed_worker_node_or_raylet_ends_with_identical_results(kill, workers_up, long_result,
                                                                  tmp_path):
    what, node = kill.split()
    out = tmp_path / "store"
    proc = campaign(workers_up.driver_env(DATA), out, config=LONG)
    wait_for_parts(proc, out)
    (workers_up.kill_node if what == "node" else workers_up.kill_raylet)(node)
    code, result, stderr = finish(proc)
    assert code == 0, stderr[-3000:]
    assert any("node left" in n or "actor died" in n for n in result["notes"]), result["notes"]
    assert_same_store(out, long_result)


def test_last_worker_gone_is_one_line_within_60s_and_resumes(workers_up, long_result,
                                                              tmp_path):
    out = tmp_path / "store"
    proc = campaign(workers_up.driver_env(DATA), out, config=LONG)
    wait_for_parts(proc, out)
    workers_up.kill_node("w1")
    workers_up.kill_node("w2")
    t0 = time.monotonic()
    code, _, stderr = finish(proc, timeout=120)
    assert time.monotonic() - t0 < 60
    assert code == 3
    assert "every Ray worker node is gone" in one_line_error(stderr)
    workers_up.ensure_workers()  # the cluster is back: the rerun resumes to the same store
    code, result, stderr = finish(campaign(workers_up.driver_env(DATA), out, config=LONG))
    assert code == 0, stderr[-3000:]
    assert_same_store(out, long_result)


def test_killed_head_is_one_line_and_a_new_cluster_resumes(long_result, tmp_path):
    # its own cluster: the head does not come back
    out = tmp_path / "store"
    first = LocalCluster(workers=2)
    try:
        first.start()
        proc = campaign(first.driver_env(DATA), out, config=LONG)
        wait_for_parts(proc, out)
        first.kill_node("head")
        t0 = time.monotonic()
        code, _, stderr = finish(proc, timeout=120)
        assert time.monotonic() - t0 < 60
        assert code == 3
        assert "head" in one_line_error(stderr)
    finally:
        first.stop()
    second = LocalCluster(workers=2)
    try:
        second.start()
        code, result, stderr = finish(campaign(second.driver_env(DATA), out, config=LONG))
        assert code == 0, stderr[-3000:]
        assert_same_store(out, long_result)
    finally:
        second.stop()


def test_ray_job_submit_equals_local(local_result, tmp_path):
    pytest.importorskip("aiohttp", reason="`ray job submit` needs the dashboard: "
                        "pip install 'ray[default]' (the [cluster] extra)")
    c = LocalCluster(workers=2, dashboard=True)
    out = tmp_path / "store"
    try:
        c.start()
        env = c.driver_env(DATA)
        env["RAY_ADDRESS"] = c.dashboard_url
        job_env = json.dumps({"env_vars": {"RAUDIT_DATA_DIR": DATA, "PYTHONPATH": str(ROOT)}})
        cmd = [str(Path(sys.executable).with_name("ray")), "job", "submit",
               f"--runtime-env-json={job_env}", "--",
               sys.executable, "-m", "raudit.cli.app", "campaign", str(CONFIG), "--out", str(out)]
        # the job's driver runs on the head with the submitter's job environment
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    finally:
        c.stop()
    assert_same_store(out, local_result)


def test_single_machine_raylet_killed_is_one_line_and_resumes(long_result, tmp_path):
    # The case that hung forever before: `raudit campaign` on this machine's own Ray.
    from local_cluster import with_descendants

    out = tmp_path / "store"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(PYTHONPATH=str(ROOT), RAUDIT_DATA_DIR=DATA, OMP_NUM_THREADS="1",
               RAUDIT_HEARTBEAT_S="2")
    proc = campaign(env, out, "--workers", "1", config=LONG)  # one actor: a longer campaign

    def raylets() -> list[int]:
        found = []
        for pid in with_descendants([proc.pid]):
            with contextlib.suppress(OSError):
                if b"raylet" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]:
                    found.append(pid)
        return found

    end = time.monotonic() + 240
    while not raylets() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.2)
    (raylet,) = raylets()  # found before the first part, so the kill follows it at once
    wait_for_parts(proc, out)
    os.kill(raylet, 9)
    t0 = time.monotonic()
    code, _, stderr = finish(proc, timeout=120)
    assert time.monotonic() - t0 < 60
    assert code == 3
    assert "the local Ray node died" in one_line_error(stderr)
    code, _, stderr = finish(campaign(env, out, "--workers", "1", config=LONG))
    assert code == 0, stderr[-3000:]
    assert_same_store(out, long_result)
