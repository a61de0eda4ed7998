"""Campaign engine benchmark: 1 vs 2 workers, per-chunk overhead, one pool vs a Ray
session per audit.

    RAUDIT_DATA_DIR=... python benchmarks/campaign.py [--shadow-models 50] [--iters 20]

Runs the worst-case jobs of configs/quick-audit.yaml (paper, original) at the given
size into temporary folders, and prints:
* wall time with 1 and 2 Ray workers (one pool for both jobs) and the speed-up;
* the engine's per-chunk overhead: (wall x workers - sum of the chunks' own compute
  time) / chunks, also as a share of the mean chunk time;
* the same two audits as two `run_audit` calls, each with its own Ray session.
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd

from raudit.audit.runner import AuditRequest, run_audit
from raudit.campaign.run import run_campaign
from raudit.engine.driver import EngineConfig

IMPLS = ("paper", "original")


def _config(folder: Path, s: int, iters: int, m: int) -> Path:
    p = folder / "bench.yaml"
    p.write_text(textwrap.dedent(f"""\
        name: bench
        jobs:
          - name: wc-{{impl}}
            grid: {{impl: [{', '.join(IMPLS)}]}}
            attack: querybased
            dataset: worst-case
            shadow_models: {s}
            chunk_size: {m}
            max_iter: {iters}
        """))
    return p


def _campaign(cfg: Path, out: Path, workers: int) -> tuple[float, pd.DataFrame]:
    t0 = time.perf_counter()
    run_campaign(cfg, out, EngineConfig(workers=workers))
    return time.perf_counter() - t0, pd.read_parquet(out / "shadow")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shadow-models", type=int, default=50)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--chunk", type=int, default=10)
    a = ap.parse_args()
    models = 2 * a.shadow_models * len(IMPLS)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cfg = _config(tmp, a.shadow_models, a.iters, a.chunk)
        walls = {}
        for w in (1, 2):
            walls[w], shadow = _campaign(cfg, tmp / f"w{w}", w)
            print(f"campaign, {w} worker(s): {models} models in {walls[w]:.1f} s "
                  f"({models / walls[w] * 3600:,.0f} models/hour, Ray start-up included)")
            compute = float((shadow["wall_s"]).sum())  # wall_s is per model: sums to compute
            chunks = models // a.chunk
            over = (walls[w] * w - compute) / chunks
            print(f"  per-chunk overhead (Ray start-up and analysis included): {over:.3f} s "
                  f"= {over / (compute / chunks):.1%} of a {compute / chunks:.2f} s chunk")
        print(f"speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}x")
        t0 = time.perf_counter()
        for impl in IMPLS:
            run_audit(AuditRequest(impl=impl, attack="querybased", dataset="worst-case",
                                   shadow_models=a.shadow_models, chunk_size=a.chunk,
                                   options={"max_iter": a.iters}),
                      tmp / f"single-{impl}", EngineConfig(workers=2))
        single = time.perf_counter() - t0
        print(f"the same audits as {len(IMPLS)} run_audit calls (a Ray session each), 2 workers: "
              f"{single:.1f} s vs one campaign pool {walls[2]:.1f} s")


if __name__ == "__main__":
    main()
