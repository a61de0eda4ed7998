"""Wall time of the quick campaign on the local 3-node Ray cluster vs one machine.

    PYTHONPATH=. RAUDIT_DATA_DIR=../shared/data python benchmarks/cluster_quick.py --rounds 2

Runs ``raudit campaign configs/quick-audit.yaml`` (a fresh --out each time, as a CLI
process, start-up included) alternately on: the 3-node cluster of tests/cluster (a
CPU-less head and two 1-CPU worker nodes, through RAY_ADDRESS), one machine's Ray with
``--workers 2``, and ``--backend local``. Alternating keeps a loaded machine's drift out of
the ratios; report ratios, not absolute times. Every store is checked equal to the first
local one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cluster"))

from local_cluster import LocalCluster  # noqa: E402
from test_multinode import DATA, assert_same_store, campaign, finish  # noqa: E402


def timed(env: dict, out: Path, *extra: str) -> float:
    t0 = time.perf_counter()
    code, _, stderr = finish(campaign(env, out, *extra), timeout=600)
    if code:
        raise SystemExit(f"campaign failed ({code}): {stderr[-2000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    local_env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    local_env.update(PYTHONPATH=str(ROOT), RAUDIT_DATA_DIR=DATA, OMP_NUM_THREADS="1")
    times: dict[str, list[float]] = {"3-node cluster": [], "one machine, ray -w 2": [],
                                     "one machine, --backend local": []}
    work = Path(tempfile.mkdtemp(prefix="rcb-"))
    cluster = LocalCluster(workers=2)
    try:
        t0 = time.perf_counter()
        cluster.start()
        print(f"cluster up in {time.perf_counter() - t0:.1f} s", flush=True)
        reference = None
        for r in range(args.rounds):
            for name, env, extra in (("3-node cluster", cluster.driver_env(DATA), ()),
                                     ("one machine, ray -w 2", local_env, ("--workers", "2")),
                                     ("one machine, --backend local", local_env,
                                      ("--backend", "local"))):
                out = work / f"{r}-{len(times[name])}-{name.split()[0]}"
                times[name].append(timed(env, out, *extra))
                reference = reference or out
                assert_same_store(out, reference)
                print(f"round {r + 1}: {name}: {times[name][-1]:.1f} s", flush=True)
    finally:
        cluster.stop()
    base = statistics.median(times["one machine, ray -w 2"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:32s} median {med:6.1f} s  ({med / base:.2f}x one machine's Ray)  "
              f"runs {', '.join(f'{t:.1f}' for t in ts)}")


if __name__ == "__main__":
    main()
