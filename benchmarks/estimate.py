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
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


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
    a = ap.parse_args()
    args = ["--impl", "smartnoise", "--attack", "groundhog"]
    if a.scale != 1:
        args += ["-S", str(max(5, int(1000 * a.scale))),
                 "--selection-models", str(max(10, 2 * int(100 * a.scale)))]
    args += ["--backend", a.backend, "--workers", str(a.workers)]
    if a.chunk_size:
        args += ["--chunk-size", a.chunk_size]
    print(json.dumps(run(args, local=a.backend == "local", keep=a.keep), indent=2))


if __name__ == "__main__":
    main()
