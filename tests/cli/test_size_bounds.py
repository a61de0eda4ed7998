"""Every size bounded before work (issue 27): absurd -S, --workers, iterations and an empty
--out are one line, exit 2 and write nothing; a full disk while writing is one line, exit
3, and loses nothing (the rerun resumes to the same rows)."""

from __future__ import annotations

import errno
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError, RunInterrupted
from raudit.runs import limits
from raudit.runs.audit import run_audit

LOCAL = EngineConfig(backend="local")
SMALL = limits.Machine(cpus=2, gpus=0, memory=2 << 30)


def _cli(argv: list[str], cwd) -> subprocess.CompletedProcess:
    code = f"from raudit.cli.app import main; main({argv!r})"
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


@pytest.mark.slow  # a CLI process each (~10 s on a loaded machine)
@pytest.mark.parametrize("argv,needle", [
    (["-S", "100000000000", "--max-iter", "5"], "needs about"),
    (["--workers", "100000", "-S", "10", "--max-iter", "5"], "--workers 100,000 is more than"),
    (["--max-iter", "100000000000", "-S", "10"], "above raudit's ceiling"),
])
@pytest.mark.parametrize("backend", ["ray", "local"])
def test_absurd_sizes_are_one_line_and_write_nothing(tmp_path, monkeypatch, argv, needle,
                                                     backend):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    r = _cli(["audit", "--impl", "paper", "--attack", "querybased", "--backend", backend,
              "--out", "store", *argv], tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    err = r.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and needle in err, err
    assert list(tmp_path.iterdir()) == []  # no .lock, no raudit.json, no store


@pytest.mark.slow
@pytest.mark.parametrize("command", [["audit"], ["campaign", "configs/quick-audit.yaml"],
                                     ["utility"], ["train"]])
def test_empty_out_is_refused(tmp_path, command):
    r = _cli([*command, "--out", ""], tmp_path)
    assert r.returncode == 2 and "'--out': is empty" in r.stderr, r.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_workers_bounded_by_this_machine_not_by_a_cluster(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert limits.check_engine(EngineConfig(workers=8), SMALL) == 8  # 4 per core
    with pytest.raises(ConfigError, match="at most 8"):
        limits.check_engine(EngineConfig(workers=9), SMALL)
    gpu = limits.Machine(cpus=2, gpus=1, memory=2 << 30)
    with pytest.raises(ConfigError, match=r"1 GPU\(s\) x --per-gpu 2: at most 8"):
        limits.check_engine(EngineConfig(workers=9, per_gpu=2), gpu)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")  # the engine caps it there, with a note
    assert limits.check_engine(EngineConfig(workers=100_000), SMALL) == 100_000


def test_memory_estimate_refuses_what_does_not_fit_and_accepts_the_study():
    req = AuditRequest(impl="paper", attack="querybased", shadow_models=2000,
                       options={"max_iter": 5})
    limits.check_audit(req, LOCAL, machine=SMALL)  # the study's largest audit fits in 2 GiB
    big = AuditRequest(impl="paper", attack="querybased", shadow_models=1_000_000)
    # 2 x 10^6 shadow + 200 selection models x 4 KiB = 7.6 GiB in the driver, + one actor
    with pytest.raises(ConfigError, match=r"needs about 8\.0 GiB .*\(7\.6 GiB in the driver "
                       r"for 2,000,200 models.* 2\.0 GiB available"):
        limits.check_audit(big, LOCAL, machine=SMALL)
    # a chunk's models count too: a wide table with many teachers in huge chunks
    wide = AuditRequest(impl="paper", attack="groundhog", dataset="breast-cancer",
                        shadow_models=100, chunk_size=100, options={"teachers": 400})
    with pytest.raises(ConfigError, match="actor"):
        limits.check_audit(wide, EngineConfig(backend="ray", workers=8), machine=SMALL)


def test_teachers_above_the_rows_are_refused():
    req = AuditRequest(impl="paper", attack="querybased", shadow_models=10,
                       options={"teachers": 6})
    with pytest.raises(ConfigError, match="more than the 5 training rows"):
        limits.check_audit(req, LOCAL, machine=SMALL)


def test_full_disk_is_one_line_exit_3_and_the_rerun_resumes(tmp_path, monkeypatch):
    from raudit.results import store as st

    req = AuditRequest(impl="paper", attack="querybased", shadow_models=10, chunk_size=2,
                       options={"max_iter": 3})
    real, parts = st.write_atomic, []

    def full(fh):
        raise OSError(errno.ENOSPC, "No space left on device")

    def fills_up(path, write):
        # a part's bytes are made in memory and written to a temp file: the disk fills up
        # inside that write, once three parts are on disk
        if path.suffix == ".parquet" and len(parts) == 3:
            return real(path, full)
        parts.append(path.suffix == ".parquet")
        return real(path, write)

    monkeypatch.setattr(st, "write_atomic", fills_up)
    with pytest.raises(RunInterrupted) as info:
        run_audit(req, tmp_path / "s", LOCAL)
    msg = str(info.value)
    assert "cannot write " + str(tmp_path / "s" / "shadow") in msg
    assert "errno 28" in msg and "free disk space" in msg and "rerun" in msg
    assert info.value.exit_code == 3
    assert not list((tmp_path / "s").rglob(".*.tmp"))  # no half-written part left behind
    kept = pd.read_parquet(tmp_path / "s" / "shadow")
    assert len(kept) == 6  # the three parts written before the disk filled up
    monkeypatch.setattr(st, "write_atomic", real)
    again = run_audit(req, tmp_path / "s", LOCAL)
    fresh = run_audit(req, tmp_path / "fresh", LOCAL)
    cols = ["trial_id", "world", "split", "seed", "iterations", "status"]
    a = pd.read_parquet(tmp_path / "s" / "shadow").sort_values("trial_id")[cols]
    b = pd.read_parquet(tmp_path / "fresh" / "shadow").sort_values("trial_id")[cols]
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    assert (again["auc"], again["eps_cp"]) == (fresh["auc"], fresh["eps_cp"])


@pytest.mark.slow
def test_full_disk_through_the_cli_is_one_line(tmp_path):
    code = textwrap.dedent(f"""
        import errno
        from raudit.results import store as st
        real = st.write_atomic
        def full(fh):  # the disk fills up as the part's bytes are written
            raise OSError(errno.ENOSPC, "No space left on device")
        st.write_atomic = lambda path, write: real(path, full)
        from raudit.cli.app import main
        main(["audit", "--impl", "paper", "--attack", "querybased", "-S", "10", "-M", "5",
              "--max-iter", "3", "--backend", "local", "--out", {str(tmp_path / 's')!r}])
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr[-2000:]
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "No space left on device" in lines[0], r.stderr[-2000:]
    assert "Traceback" not in r.stderr


def test_utility_sizes_are_bounded():
    from raudit.utility.plan import UtilityRequest

    limits.check_utility(UtilityRequest(impl="paper", dataset="worst-case", fits=5, samples=5),
                         LOCAL, machine=SMALL)
    with pytest.raises(ConfigError, match="--fits 1,000,000 is above raudit's ceiling"):
        limits.check_utility(UtilityRequest(dataset="worst-case", fits=1_000_000), LOCAL,
                             machine=SMALL)
    with pytest.raises(ConfigError, match="--teachers 7 is more than the 5 training rows"):
        limits.check_utility(UtilityRequest(dataset="worst-case", teachers=("7",)), LOCAL,
                             machine=SMALL)
    tiny = limits.Machine(cpus=2, gpus=0, memory=300 << 20)  # less than one actor process
    with pytest.raises(ConfigError, match="this utility run .* needs about"):
        limits.check_utility(UtilityRequest(dataset="worst-case", fits=2, samples=1), LOCAL,
                             machine=tiny)
