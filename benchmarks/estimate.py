"""How close the estimate said before an audit trains is to the audit's measured time.

Runs `raudit audit` end to end (a subprocess, as a user runs it) and compares the total of
its first line ("raudit: estimate: about ... in all") with the time the command took after
printing it (the estimate covers what follows it: the parts it measured before the line are
already spent), and with the command's whole wall time, side by side in one run. Also the
command's CPU seconds, and with ``--backend local`` (one process, one worker) the CPU
seconds it used after the line: on a loaded machine, compare those.

``--scale 1`` runs the advertised first command exactly (`raudit audit --impl smartnoise
--attack groundhog`: 200 selection models + 2,000 game models); a smaller ``--scale``
shrinks -S and --selection-models alike, keeping the stages.

    RAUDIT_DATA_DIR=/work/shared/data python benchmarks/estimate.py --scale 0.05
    RAUDIT_DATA_DIR=/work/shared/data python benchmarks/estimate.py --scale 1 --backend ray --workers 2
    RAUDIT_COMPILE=step RAUDIT_DATA_DIR=/work/shared/data python benchmarks/estimate.py --scale 0.25 --chunk-size 125

``--as-user`` runs it exactly as a user does instead: the ``raudit`` command itself with no
flag but the advertised ones (Ray, its default workers and chunk size, the default results
folder, here in a temporary working folder), in the default environment (none of the
variables that tune raudit, Ray or the thread pools: ``RAUDIT_*`` but the data folder,
``RAY_*``, ``OMP_NUM_THREADS`` and the like, whatever this script itself runs under), twice:
from a cold cache (a fresh ``RAUDIT_CACHE_DIR``: the calibration, the native kernels' build,
Ray's first start all happen in the run) and then warm (the same cache, a new results folder).

    RAUDIT_DATA_DIR=/work/shared/data python benchmarks/estimate.py --as-user --scale 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# what a user's shell does not set: every variable that tunes raudit, Ray or the thread
# pools is dropped for --as-user (the data folder is where the user keeps the data)
KEEP = ("RAUDIT_DATA_DIR",)
TUNING = ("RAUDIT_", "RAY_", "OMP_", "MKL_", "OPENBLAS_", "TORCH", "KMP_")


def seconds(text: str) -> float:
    """'12 s' / '5 min' / '1.5 h' as seconds."""
    num, unit = re.match(r"([\d.,]+) (s|min|h)", text).groups()
    return float(num.replace(",", "")) * {"s": 1, "min": 60, "h": 3600}[unit]


def run(args: list[str], local: bool, keep: str | None = None) -> dict:
    """``keep``: the audit's results folder (default: a temporary one, deleted)."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        before = os.times()
        proc = subprocess.Popen([sys.executable, "-m", "raudit.cli.app", "audit", *args,
                                 "--out", keep or f"{tmp}/a", "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        first = proc.stderr.readline().strip()
        t_first = time.perf_counter()
        cpu_first = _cpu_of(proc.pid)
        err = proc.stderr.read()
        summary = proc.stdout.read()
        proc.wait()
        end = time.perf_counter()
        after = os.times()
    if proc.returncode != 0:
        raise SystemExit(first + "\n" + err[-2000:])
    est = seconds(re.search(r"estimate: about (?:>= )?(\S+ (?:s|min|h))", first).group(1))
    after_line = end - t_first
    cpu = (after.children_user + after.children_system
           - before.children_user - before.children_system)
    out = {"args": " ".join(args), "estimate_s": est,
            "measured_after_line_s": round(after_line, 1), "measured_total_s": round(end - t0, 1),
            "ratio_after_line": round(est / after_line, 3), "ratio_total": round(est / (end - t0), 3),
            "cpu_s": round(cpu, 1), "load_1min": round(os.getloadavg()[0], 2),
            "first_line": first}
    if keep:
        out["summary"] = json.loads(summary)
    if local and cpu_first is not None:  # the work after the line is this process's (Ray's
        # actors are other processes: compare wall time on a quiet machine instead)
        out["cpu_after_line_s"] = round(cpu - cpu_first, 1)
        out["ratio_cpu_after_line"] = round(est / max(cpu - cpu_first, 1e-9), 3)
    return out


def user_env(cache: Path) -> dict[str, str]:
    """The default environment (see the module) with ``cache`` as raudit's cache."""
    env = {k: v for k, v in os.environ.items()
           if k in KEEP or not k.startswith(TUNING)}
    return {**env, "RAUDIT_CACHE_DIR": str(cache)}


def raudit_command() -> list[str]:
    """The ``raudit`` command installed beside this Python (as a user types it), else the
    same entry point through ``python -m`` (a checkout run without installing)."""
    script = Path(sys.executable).with_name("raudit")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "raudit.cli.app"]


def as_user(args: list[str]) -> dict:
    """``raudit audit ARGS`` from a cold cache, then warm (see the module): per run the
    first line's estimate, the wall time to it and in all, their ratio, and the load."""
    tmp = Path(tempfile.mkdtemp(prefix="raudit-as-user-"))
    try:
        out = {"command": " ".join(["raudit", "audit", *args])}
        for name in ("cold", "warm"):  # the warm run reads the cache the cold one wrote
            work = tmp / name
            work.mkdir()
            out[name] = timed([*raudit_command(), "audit", *args], user_env(tmp / "cache"), work)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Run ``cmd``: its first estimate line against its wall time (to the line and in all)."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    first = ""
    for text in proc.stderr:  # the estimate is the first line, after any warning
        if "estimate: about" in text:
            first = text.strip()
            break
    t_first = time.perf_counter()
    err = proc.stderr.read()
    proc.wait()
    end = time.perf_counter()
    if proc.returncode != 0 or not first:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}\n{first}\n{err[-2000:]}")
    est = seconds(re.search(r"estimate: about (?:>= )?(\S+ (?:s|min|h))", first).group(1))
    return {"estimate_s": est, "measured_total_s": round(end - t0, 1),
            "to_line_s": round(t_first - t0, 1), "ratio_total": round(est / (end - t0), 3),
            "load_1min_before": round(load, 2), "load_1min_after": round(os.getloadavg()[0], 2),
            "first_line": first}


def _cpu_of(pid: int) -> float | None:
    """CPU seconds a running process has used (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.05,
                    help="fraction of the advertised run's models (1 = the advertised command)")
    ap.add_argument("--backend", default="local")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--keep", default=None, help="write the audit's results here (kept)")
    ap.add_argument("--chunk-size", default=None,
                    help="-M for the audit (default: its own, auto); a fixed M compares "
                         "RAUDIT_COMPILE=step with eager on the same chunks")
    ap.add_argument("--as-user", action="store_true",
                    help="the raudit command in the default environment, cold then warm "
                         "cache (--backend, --workers, --keep and --chunk-size do not apply)")
    a = ap.parse_args()
    args = ["--impl", "smartnoise", "--attack", "groundhog"]
    if a.scale != 1:
        args += ["-S", str(max(5, int(1000 * a.scale))),
                 "--selection-models", str(max(10, 2 * int(100 * a.scale)))]
    if a.as_user:
        print(json.dumps(as_user(args), indent=2))
        return
    args += ["--backend", a.backend, "--workers", str(a.workers)]
    if a.chunk_size:
        args += ["--chunk-size", a.chunk_size]
    print(json.dumps(run(args, local=a.backend == "local", keep=a.keep), indent=2))


if __name__ == "__main__":
    main()
