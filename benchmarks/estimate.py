"""How close the estimate said before an audit trains is to the audit's measured wall time.

Runs `raudit audit` end to end (a subprocess, as a user runs it) and compares the total of
its first line ("raudit: estimate: about ... in all") with the command's measured wall
time, side by side in one run. The advertised first command (`raudit audit --impl
smartnoise --attack groundhog`: 200 selection models + 2,000 game models) takes about an
hour on 2 cores; ``--scale`` shrinks -S and --selection-models alike to fit a short run,
keeping the stages.

    RAUDIT_DATA_DIR=/work/shared/data python benchmarks/estimate.py --scale 0.05
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time


def seconds(text: str) -> float:
    """'12 s' / '5 min' / '1.5 h' as seconds."""
    num, unit = re.match(r"([\d.,]+) (s|min|h)", text).groups()
    return float(num.replace(",", "")) * {"s": 1, "min": 60, "h": 3600}[unit]


def run(args: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "raudit.cli.app", "audit", *args,
                            "--out", f"{tmp}/a", "--json"], capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(r.stderr[-2000:])
    first = r.stderr.splitlines()[0]
    est = seconds(re.search(r"estimate: about (?:>= )?(\S+ (?:s|min|h))", first).group(1))
    return {"args": " ".join(args), "estimate_s": est, "measured_s": round(wall, 1),
            "ratio": round(est / wall, 3), "first_line": first}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.05,
                    help="fraction of the advertised run's models (1 = the full hour)")
    ap.add_argument("--backend", default="local")
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args()
    s = max(5, int(1000 * a.scale))
    sel = max(10, 2 * int(100 * a.scale))
    args = ["--impl", "smartnoise", "--attack", "groundhog", "-S", str(s),
            "--selection-models", str(sel), "--backend", a.backend, "--workers", str(a.workers)]
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()
