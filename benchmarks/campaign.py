"""Campaign engine benchmark: 1 vs 2 workers, per-chunk overhead, one pool vs a Ray
session per audit.

    RAUDIT_DATA_DIR=... python benchmarks/campaign.py [--shadow-models 100] [--iters 50] [--chunk 25]

Runs two worst-case querybased audits (paper, original; M models per chunk, a fixed
number of iterations per model) as one campaign, and prints:
* the campaign's wall time with 1 and 2 Ray workers (one pool for both jobs), the speed-up;
* the engine's per-chunk overhead on the 2-worker pool: the pool's wall time minus the
  actors' start-up (timed with no-op chunks) minus the chunks' own compute time (summed
  from the rows' wall_s) divided by the workers, per chunk and as a share of a chunk;
* the same two audits as two ``run_audit`` calls, each starting its own Ray session.
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd

from raudit.audit.runner import AuditRequest, run_audit
from raudit.campaign.run import load_jobs, run_campaign
from raudit.campaign.schedule import schedule
from raudit.engine.driver import EngineConfig, run_chunks

IMPLS = ("paper", "original")


def noop(spec: dict) -> int:
    return 0


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


def overhead(cfg: Path, out: Path, workers: int) -> None:
    import ray

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        engine = EngineConfig(workers=workers)
        start = run_chunks(noop, [{}] * workers, on_done=lambda *a: None, config=engine).wall_s
        _, jobs = load_jobs(cfg)
        done = schedule(jobs, out, engine)
    finally:
        ray.shutdown()
    shadow = pd.read_parquet(out / "shadow")
    compute = float(shadow["wall_s"].sum())  # per-model wall_s: sums to the chunks' time
    chunks = done.stats.chunks
    per = (done.stats.wall_s - start - compute / workers) / (chunks / workers)
    print(f"engine, {workers} workers: {chunks} chunks in {done.stats.wall_s:.1f} s, actor "
          f"start-up {start:.1f} s, chunk compute {compute:.1f} s "
          f"({compute / chunks:.2f} s a chunk): overhead {per:.3f} s per chunk = "
          f"{per / (compute / chunks):.1%} of a chunk")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shadow-models", type=int, default=100)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--chunk", type=int, default=25)
    a = ap.parse_args()
    models = 2 * a.shadow_models * len(IMPLS)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cfg = _config(tmp, a.shadow_models, a.iters, a.chunk)
        walls = {}
        for w in (1, 2):
            t0 = time.perf_counter()
            run_campaign(cfg, tmp / f"w{w}", EngineConfig(workers=w))
            walls[w] = time.perf_counter() - t0
            print(f"campaign, {w} worker(s): {models} models x {a.iters} iterations in "
                  f"{walls[w]:.1f} s ({models / walls[w] * 3600:,.0f} models/hour, Ray "
                  "start-up and analysis included)")
        print(f"speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}x")
        overhead(cfg, tmp / "engine", 2)
        t0 = time.perf_counter()
        for impl in IMPLS:
            run_audit(AuditRequest(impl=impl, attack="querybased", dataset="worst-case",
                                   shadow_models=a.shadow_models, chunk_size=a.chunk,
                                   options={"max_iter": a.iters}),
                      tmp / f"single-{impl}", EngineConfig(workers=2))
        single = time.perf_counter() - t0
        print(f"the same {len(IMPLS)} audits as run_audit calls (a Ray session each), 2 "
              f"workers: {single:.1f} s; as one campaign (one pool): {walls[2]:.1f} s")


if __name__ == "__main__":
    main()
