"""Campaign engine benchmark: 1 vs 2 workers, per-chunk overhead, one pool vs a Ray
session per audit.

    RAUDIT_DATA_DIR=... python benchmarks/campaign.py [--shadow-models 100] [--iters 50] [--chunk 25] [--scaling-only] [--rounds 1] [--preload on|off|both]

Runs two worst-case querybased audits (paper, original; M models per chunk, a fixed
number of iterations per model) as one campaign, and prints:
* the campaign's wall time with 1 and 2 Ray workers (one pool for both jobs), the speed-up,
  and where the CPU went: seconds of the driver (this process), the chunk actors, the
  raylet, the GCS and Ray's other daemons (dashboard, agents, monitors), per model and
  the driver's share (sampled every 0.2 s; what a loaded machine does not distort);
* the engine's per-chunk overhead on the 2-worker pool: the pool's wall time minus the
  actors' start-up (timed with no-op chunks) minus the chunks' own compute time (summed
  from the rows' wall_s) divided by the workers, per chunk and as a share of a chunk;
* the same two audits as two ``run_audit`` calls, each starting its own Ray session.

    python benchmarks/campaign.py --extrapolate configs/study-audit.yaml [--m 32] [--clock cpu|wall]

times one chunk of M models of every job of the campaign at its full settings (one
core, in this process, training only) and extrapolates the campaign's training time
on this machine's cores and on a 16-vCPU node (assuming per-core throughput as here).
``--clock cpu`` (the default) times by this process's CPU seconds, so a loaded machine
gives the figure of a core the campaign has to itself; ``--clock wall`` by elapsed time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd

from raudit.audit.runner import AuditRequest
from raudit.campaign.run import load_jobs, run_campaign
from raudit.engine.driver import EngineConfig, run_chunks
from raudit.runs.audit import run_audit
from raudit.runs.schedule import schedule

IMPLS = ("paper", "original")


class ProcessCPU:
    """CPU seconds of this process and its descendants by kind while the block runs.

    Children are sampled every ``every`` s, so one that exits loses at most that much;
    the driver is read exactly at both ends."""

    KINDS = ("driver", "actors", "raylet", "gcs", "ray daemons")

    def __init__(self, every: float = 0.2):
        import ray  # noqa: F401 - puts Ray's bundled psutil on the path
        import psutil

        self.me, self.every = psutil.Process(), every
        self.seen: dict[int, tuple[str, float]] = {}
        self.by: dict[str, float] = {}

    @staticmethod
    def kind(cmdline: list[str]) -> str:
        line = " ".join(cmdline)
        if "gcs_server" in line:
            return "gcs"
        if "raylet/raylet" in line:
            return "raylet"
        if line.startswith("ray::") and "Agent" not in line:
            return "actors"  # ray::ChunkActor, ray::IDLE
        return "ray daemons"

    def _sample(self) -> None:
        for p in self.me.children(recursive=True):
            try:
                t = p.cpu_times()
                kind = self.seen[p.pid][0] if p.pid in self.seen else self.kind(p.cmdline())
                self.seen[p.pid] = (kind, t.user + t.system)
            except Exception:  # noqa: BLE001 - it exited between listing and reading
                pass

    def __enter__(self) -> "ProcessCPU":
        t = self.me.cpu_times()
        self._d0 = t.user + t.system
        self._stop = threading.Event()

        def loop() -> None:
            while not self._stop.wait(self.every):
                self._sample()

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        t = self.me.cpu_times()
        self.by = dict.fromkeys(self.KINDS, 0.0)
        self.by["driver"] = t.user + t.system - self._d0
        for kind, cpu in self.seen.values():
            self.by[kind] += cpu

    def line(self, models: int) -> str:
        total = sum(self.by.values())
        parts = ", ".join(f"{k} {v:.1f}" for k, v in self.by.items())
        return (f"CPU {total:.1f} s ({total / models * 1000:.1f} ms per model): {parts}; "
                f"driver share {self.by['driver'] / total:.1%}")


def noop(spec: dict) -> int:
    return 0


def sleepy(spec: dict) -> list[dict]:
    """A chunk that takes ``sleep`` s without using a core and returns real shadow rows:
    what remains of its wall time in the pool is the engine's own cost."""
    time.sleep(spec["sleep"])
    return spec["rows"]


def engine_overhead(rows: list[dict], out: Path, workers: int, chunks: int = 40,
                    sleep: float = 1.0, chunk_s: float | None = None) -> None:
    import ray

    from raudit.results import ResultStore

    store = ResultStore(out)
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        engine = EngineConfig(workers=workers)
        start = run_chunks(noop, [{}] * workers, on_done=lambda *a: None, config=engine).wall_s
        specs = [{"sleep": sleep, "rows": rows, "i": i} for i in range(chunks)]
        stats = run_chunks(sleepy, specs, config=engine,
                           on_done=lambda s, r, e: store.append("shadow", r))
    finally:
        ray.shutdown()
    per = (stats.wall_s - start - chunks * sleep / workers) / (chunks / workers)
    print(f"engine overhead, {workers} workers, {chunks} chunks of {len(rows)} stored rows "
          f"that sleep {sleep:g} s: {stats.wall_s:.1f} s (actor start-up {start:.1f} s): "
          f"{per * 1000:.0f} ms per chunk" + (f"; {per / chunk_s:.1%} of the {chunk_s:.2f} s "
                                              "chunk measured above" if chunk_s else ""))


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


def overhead(cfg: Path, out: Path, workers: int) -> float:
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
          f"{per / (compute / chunks):.1%} of a chunk (compute includes other processes' "
          "load on these cores)")
    return compute / chunks


def extrapolate(path: str, m: int, cores_here: int, cap: int | None = None,
                only: list[str] | None = None, clock: str = "cpu", device: str = "cpu") -> None:
    import torch

    from raudit.runs import calibrate as cb

    torch.set_num_threads(1)
    if device != "cpu":
        clock = "wall"  # a GPU's work is not this process's CPU time
    _, jobs = load_jobs(path, only)
    total_s = 0.0
    for job in jobs:
        if job.kind == "inspect":  # one training in the driver, no shadow models: not counted
            print(f"{job.name}: an inspection, run once after the pool (not counted)")
            continue
        impl, opts, dataset, eps, delta, label, bounds = cb.job_fit(job)
        cal = cb.fit_rate(impl, cb.on_device(impl, opts, device), dataset, eps, delta, m, label,
                          bounds, cap=cap)
        # capped and still running: count the job's own max_iter (an upper bound)
        its = cal.iterations
        ge = "<=" if cap and its == opts.get("max_iter") and its > cap else ""
        # cpu: this process's CPU seconds (1 thread), what a core it has to itself would
        # take; wall: the elapsed time, which a loaded machine inflates
        per = 1 / cal.cpu_rate if clock == "cpu" else cal.s_per_model_iter
        secs = job.planned_models() * its * per
        total_s += secs
        where, unit = ("one core", "core-hours") if device == "cpu" else (device, "h")
        print(f"{job.name}: {job.planned_models():,} models x {ge}{its} iterations, "
              f"{1 / per:,.0f} model-iterations per {clock}-second on {where} at M={m} "
              f"(load {cal.load}): {secs / 3600:.3f} {unit}")
    if device != "cpu":
        print(f"total: {total_s / 3600:.2f} h of training on one {device} device at M={m} "
              "(wall clock; generators without a device path counted at their CPU rate)")
        return
    print(f"total ({clock} clock): {total_s / 3600:.1f} core-hours of training; on {cores_here} cores here "
          f"~{total_s / 3600 / cores_here:.1f} h; on a 16-vCPU node ~{total_s / 3600 / 16:.1f} h "
          "(per-vCPU throughput as one core here, linear scaling)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--extrapolate", default=None, help="a campaign file to extrapolate")
    ap.add_argument("--m", type=int, default=32)
    ap.add_argument("--overhead-only", action="store_true")
    ap.add_argument("--scaling-only", action="store_true",
                    help="only the 1 -> 2 worker campaigns and their CPU")
    ap.add_argument("--cap", type=int, default=None,
                    help="--extrapolate: stop the timing fits after this many iterations")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                    help="--extrapolate: time the fits by this process's CPU time (default) "
                         "or by the wall clock")
    ap.add_argument("--device", default="cpu",
                    help="--extrapolate: time the fits on this device (cuda: wall clock, one device)")
    ap.add_argument("--shadow-models", type=int, default=100)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--chunk", type=int, default=25)
    ap.add_argument("--rounds", type=int, default=1,
                    help="1- and 2-worker campaigns this many times each, alternating; the "
                         "speed-up is of the medians")
    ap.add_argument("--preload", choices=["on", "off", "both"], default="on",
                    help="the workers' preloaded modules (raudit.engine.ray_start.PRELOAD): as "
                         "shipped, none, or both alternately in one run")
    a = ap.parse_args()
    if a.extrapolate:
        import os

        extrapolate(a.extrapolate, a.m, os.cpu_count() or 1, a.cap, a.only, a.clock, a.device)
        return
    models = 2 * a.shadow_models * len(IMPLS)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cfg = _config(tmp, a.shadow_models, a.iters, a.chunk)
        if a.overhead_only:
            run_campaign(_config(tmp, 5, 2, a.chunk), tmp / "rows", EngineConfig(backend="local"))
            rows = pd.read_parquet(tmp / "rows" / "shadow").drop(columns=["job"]).head(a.chunk)
            engine_overhead([{k: (list(v) if k == "features_vec" else v) for k, v in r.items()}
                             for r in rows.to_dict("records")], tmp / "sleepy", 2)
            return
        from raudit.engine import ray_start

        kept = ray_start.PRELOAD
        variants = {"both": ("off", "on"), "on": ("on",), "off": ("off",)}[a.preload]
        walls: dict[tuple, list[float]] = {}
        for r in range(a.rounds):  # alternating, so that a change of load hits every run
            for pre in (variants if r % 2 == 0 else variants[::-1]):
                ray_start.PRELOAD = kept if pre == "on" else ()
                for w in ((1, 2) if r % 2 == 0 else (2, 1)):
                    t0 = time.perf_counter()
                    with ProcessCPU() as cpu:
                        run_campaign(cfg, tmp / f"w{w}-{r}-{pre}", EngineConfig(workers=w))
                    walls.setdefault((pre, w), []).append(time.perf_counter() - t0)
                    wall = walls[(pre, w)][-1]
                    print(f"campaign, {w} worker(s), preload {pre}: {models} models x {a.iters} "
                          f"iterations in {wall:.1f} s ({models / wall * 3600:,.0f} models/hour, "
                          f"Ray start-up and analysis included); {cpu.line(models)}", flush=True)
        ray_start.PRELOAD = kept
        for pre in variants:
            one, two = statistics.median(walls[(pre, 1)]), statistics.median(walls[(pre, 2)])
            print(f"speed-up 1 -> 2 workers, preload {pre}: {one / two:.2f}x" + (
                f" (medians of {a.rounds} rounds: {one:.1f} s, {two:.1f} s)" if a.rounds > 1 else ""))
        if a.scaling_only:
            return
        chunk_s = overhead(cfg, tmp / "engine", 2)
        rows = pd.read_parquet(tmp / "engine" / "shadow").drop(columns=["job"]).head(a.chunk)
        engine_overhead([{k: (list(v) if k == "features_vec" else v) for k, v in r.items()}
                         for r in rows.to_dict("records")], tmp / "sleepy", 2, chunk_s=chunk_s)
        t0 = time.perf_counter()
        for impl in IMPLS:
            run_audit(AuditRequest(impl=impl, attack="querybased", dataset="worst-case",
                                   shadow_models=a.shadow_models, chunk_size=a.chunk,
                                   options={"max_iter": a.iters}),
                      tmp / f"single-{impl}", EngineConfig(workers=2))
        single = time.perf_counter() - t0
        print(f"the same {len(IMPLS)} audits as run_audit calls (a Ray session each), 2 "
              f"workers: {single:.1f} s; as one campaign (one pool): {two:.1f} s")


if __name__ == "__main__":
    main()
