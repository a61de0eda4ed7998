"""Fault suite, promise: every bad input is refused before work, with one line.

Each test names the red team's defect (issue 46) it keeps from coming back."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.runs import limits

LOCAL = EngineConfig(backend="local")


# ------------------------------------------------ 8: the memory check misses tall tables

def _tall(rows: int, cols: int):
    """A dataset's shape without its bytes: the check reads only the shape and the label."""
    return SimpleNamespace(name="tall", classes=2, label="y", train=SimpleNamespace(shape=(rows, cols)))


def test_tall_table_refused_by_the_target_selections_chunks():
    # issue 46 item 8: 1.8M rows x 11 columns, -S 5. The game's chunks hold 5 models, but
    # the target selection trains its pool of 200 in chunks of --chunk-size 100: ~100 x
    # 0.35 GB. The check used to count chunks of 5 (~3 GB) and the run grew until the
    # kernel killed it.
    req = AuditRequest(impl="paper", attack="groundhog", shadow_models=5)
    machine = limits.Machine(cpus=2, gpus=0, memory=16 << 30)
    with pytest.raises(ConfigError, match=r"needs about .* chunks of 100\b"):
        limits.check_audit(req, LOCAL, _tall(1_800_000, 11), machine)


def test_chunk_is_the_largest_phase_of_the_audit():
    pool = AuditRequest(impl="paper", shadow_models=5, selection_models=40)
    assert limits.largest_chunk(pool, selects=True) == 40
    assert limits.largest_chunk(pool, selects=False) == 5  # a fixed target: no selection
    pairs = AuditRequest(impl="paper", shadow_models=5, target_selection="per-candidate",
                         target_pairs=30, chunk_size=16)
    assert limits.largest_chunk(pairs, selects=True) == 16


def test_tall_table_that_fits_runs_the_check_through():
    # the same audit with a fixed target and small chunks fits in 16 GiB
    req = AuditRequest(impl="paper", attack="groundhog", shadow_models=5, target="0",
                       chunk_size=5)
    limits.check_audit(req, LOCAL, _tall(1_800_000, 11),
                       limits.Machine(cpus=2, gpus=0, memory=16 << 30))


# ------------------------------------------------ 10: a campaign file, refused before work

LAUGHS = "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['x'] * 9)}]\n"
                 for p, c in zip(["", *"abcdefg"], "abcdefgh"))


@pytest.mark.parametrize("text,needle", [
    (LAUGHS + "jobs: [{kind: audit, options: {x: *h}}]\n", "expands to more than"),
    ("defaults: &d\n  x: *d\njobs: [{kind: audit}]\n", "recursive alias"),
    ("jobs: &j\n  - kind: audit\n    options: *j\n", "recursive alias"),
    ("jobs: [{kind: audit, [a, b]: 1}]\n", "a key must be a plain name"),
    ("jobs:\n  - kind: audit\n    grid: {seed: R, epsilon: R, shadow_models: R, chunk_size: R}\n"
     .replace("R", str(list(range(1, 101)))), "makes 100,000,000 jobs"),
], ids=["billion-laughs", "recursive-defaults", "recursive-jobs", "list-key", "huge-grid"])
def test_campaign_file_refused_as_one_line(text, needle):
    # issue 46 item 10: these grew memory without bound, hung, or were tracebacks
    from raudit.campaign import config

    with pytest.raises(ConfigError, match=needle) as err:
        config.expand(config.parse(text, "c.yaml"), "c.yaml")
    assert "\n" not in str(err.value) and str(err.value).startswith("c.yaml:")


@pytest.mark.parametrize("job,needle", [
    ("{kind: audit, impl: [identity], shadow_models: 10}", "key 'impl': impl must be text"),
    ("{kind: inspect, impl: paper, seed: [1], iterations: 2}", "key 'seed': --seed must be an integer"),
    ("{kind: audit, epsilon: {a: 1}, shadow_models: 10}", "key 'epsilon': epsilon must be a number"),
    ("{kind: utility, fits: 2.5}", "key 'fits': fits must be an integer"),
], ids=["impl-list", "inspect-seed-list", "epsilon-mapping", "fits-float"])
def test_campaign_value_of_the_wrong_type_refused_before_work(job, needle):
    # issue 46 item 10: `impl: [identity]` was a traceback; `seed: [1]` in an inspect job
    # passed --dry-run and failed only after the manifest was written
    from raudit.campaign import config, plan

    _, jobs = config.expand(config.parse(f"jobs: [{job}]\n", "c.yaml"), "c.yaml")
    with pytest.raises(ConfigError, match=needle) as err:
        plan.build_all(jobs)
    assert "\n" not in str(err.value) and str(err.value).startswith("c.yaml:1: job ")


# ------------------------------------------------ 11: names, switches, cells and numbers

def _cli(argv: list[str], cwd, env: dict | None = None):
    import os
    import subprocess
    import sys

    code = f"from raudit.cli.app import main; main({argv!r})"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, **(env or {})}, check=False)


@pytest.mark.slow  # a CLI process each
@pytest.mark.parametrize("argv,env,needle", [
    (["--out", "x" * 300], {}, "is 300 bytes; a file system takes at most 255"),
    (["--out", "o"], {"RAUDIT_COMPILE": "bogus"}, "RAUDIT_COMPILE must be one of"),
    (["--out", "o", "-e", "1e308"], {}, "above raudit's ceiling"),
], ids=["long-out", "compile-bogus", "epsilon-1e308"])
def test_train_refuses_before_work_with_one_line(tmp_path, argv, env, needle):
    # issue 46 item 11: each was a traceback (or, for 1e308, overflow warnings and a
    # 300-digit verdict)
    r = _cli(["train", "--impl", "paper", "--dataset", "breast-cancer", "--max-iter", "1", *argv],
             tmp_path, env)
    err = r.stderr.strip()
    assert r.returncode == 2 and err.startswith("error: ") and "\n" not in err, err[-2000:]
    assert needle in err
    assert list(tmp_path.iterdir()) == []


def test_out_name_longer_than_the_file_system_takes():
    from raudit.results.files import as_folder

    with pytest.raises(ConfigError, match="256 bytes"):
        as_folder("runs/" + "é" * 128)  # 128 characters, 256 bytes
    assert str(as_folder("runs/" + "x" * 255)).endswith("x" * 255)


def test_epsilon_ceiling():
    from raudit.generators.base import MAX_EPSILON, check_privacy

    check_privacy(1e9, 1e-5)  # the performance pages' non-private runs stay allowed
    for eps in (1e308, MAX_EPSILON * 2):
        with pytest.raises(ConfigError, match="above raudit's ceiling"):
            AuditRequest(epsilon=eps)


def _parquet(path, column):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 40
    pq.write_table(pa.table({"a": column(n), "b": [float(i) for i in range(n)],
                             "y": [0, 1] * (n // 2)}), path)
    return path


@pytest.mark.parametrize("column,needle", [
    (lambda n: [[1, 2]] * n, "holds nested values"),
    (lambda n: [{"x": 1, "z": 2}] * n, "holds nested values"),
    (lambda n: __import__("pyarrow").array([2**64 - 1] + list(range(n - 1)),
                                           type=__import__("pyarrow").uint64()),
     "18446744073709551615, beyond the int64 range"),
], ids=["list", "struct", "uint64-max"])
def test_parquet_cells_raudit_cannot_hold_exactly(tmp_path, column, needle):
    # issue 46 item 11: nested columns were 'unhashable type' tracebacks; a uint64 of
    # 2**64-1 trained "successfully" with every synthetic value -9.22e18
    from raudit.data.userfile import load_file
    from raudit.errors import DataError

    with pytest.raises(DataError, match=needle):
        load_file(_parquet(tmp_path / "t.parquet", column))


def test_uint64_within_int64_still_loads(tmp_path):
    import pyarrow as pa

    from raudit.data.userfile import load_file

    ds = load_file(_parquet(tmp_path / "t.parquet", lambda n: pa.array(range(n), type=pa.uint64())))
    assert ds.train["a"].max() < 40


# ------------------------------------------------ 14: a report never writes into a table

@pytest.mark.slow  # a small audit, then its report (~15 s)
def test_report_out_inside_a_table_folder_is_refused(tmp_path):
    # issue 46 item 14: `report X --out X/shadow` wrote HTML into the shadow table, and
    # pd.read_parquet(X / "shadow") failed from then on
    import pandas as pd

    from raudit.report.build import build
    from raudit.runs.audit import run_audit

    store = tmp_path / "audit"
    run_audit(AuditRequest(impl="paper", attack="querybased", shadow_models=5,
                           options={"max_iter": 2}), store, LOCAL)
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    for out in (store / "shadow", store / "shadow" / "deeper", store / "summary"):
        with pytest.raises(ConfigError, match="reads as data") as err:
            build(store, out)
        assert "\n" not in str(err.value)
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before
    build(store, store / "report")  # a new folder inside the results: fine, and again
    build(store, store / "report")
    assert len(pd.read_parquet(store / "shadow")) == 10


# ------------------------------------------------ 9: a RAY_ADDRESS where nothing answers

def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # bound, never listening: a connect is refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dead_ray_address_refused_before_work(monkeypatch):
    # issue 46 item 9: Ray retried a dead address for minutes, after the lock and manifest
    port = _closed_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        monkeypatch.setenv("RAY_ADDRESS", address)
        with pytest.raises(ConfigError, match=r"nothing answers there \(Connection refused\)"):
            limits.check_engine(EngineConfig(backend="ray", workers=2))
    limits.check_engine(EngineConfig(backend="local"))  # the local backend never joins it


def test_live_ray_address_passes_the_probe(monkeypatch):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{s.getsockname()[1]}")
        assert limits.check_engine(EngineConfig(backend="ray", workers=2)) == 2
    monkeypatch.setenv("RAY_ADDRESS", "auto")  # no port: Ray finds it
    assert limits.check_engine(EngineConfig(backend="ray", workers=2)) == 2


@pytest.mark.slow  # a CLI process
def test_dead_ray_address_under_audit_writes_nothing(tmp_path):
    r = _cli(["audit", "--impl", "paper", "--attack", "querybased", "-S", "10", "--max-iter", "2",
              "--out", "store"], tmp_path, {"RAY_ADDRESS": f"127.0.0.1:{_closed_port()}"})
    err = r.stderr.strip()
    assert r.returncode == 2 and err.startswith("error: RAY_ADDRESS=") and "\n" not in err, err
    assert list(tmp_path.iterdir()) == []
