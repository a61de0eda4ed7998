"""Where an audit's wall time goes: the driver's phases and every chunk's span on its actor.

Runs ``raudit audit ARGS`` in this process (as ``python -m raudit.cli.app audit`` does) and
records, relative to this script's first line: the imports, each driver phase (planning and
the estimate, ray.init, the pool's life, choosing the target, the analysis, the shutdown)
with the driver's CPU seconds, and each chunk's submit / start / end on its actor (from
``ray.timeline()``), then prints a JSON summary: the phases, the chunk sizes, each actor's
busy and idle seconds (before its first chunk, between chunks, after its last one) and the
gap across the selection -> game boundary.

    RAUDIT_DATA_DIR=/work/shared/data python tools/audit_timeline.py \\
        --save /tmp/t.json --impl smartnoise --attack groundhog --workers 2 --out /tmp/a

Measurement only: the audit runs the same code and writes the same rows.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

EVENTS: list[tuple[str, float, float]] = []  # (what, wall since T0, driver CPU s)


def mark(what: str) -> None:
    EVENTS.append((what, round(time.perf_counter() - T0, 3), round(time.process_time(), 3)))


def wrap(owner, name: str, label: str) -> None:
    fn = getattr(owner, name)

    def wrapped(*args, **kwargs):
        mark(f"{label} begin")
        try:
            return fn(*args, **kwargs)
        finally:
            mark(f"{label} end")

    setattr(owner, name, wrapped)


def main() -> None:
    args = sys.argv[1:]
    save = None
    if args[:1] == ["--save"]:
        save, args = args[1], args[2:]
    timeline = tempfile.mktemp(suffix=".json")
    from raudit.cli import app as cli  # the imports a user's command pays

    mark("imported cli")
    import ray

    from raudit.engine import ray_run, ray_start
    from raudit.runs import audit as ra
    from raudit.runs import jobs, schedule

    mark("imported ray")
    submitted: dict[int, tuple[str, int, float]] = {}
    done: list[dict] = []
    fill, finish_one = ray_run._Loop._fill, ray_run._Loop._done

    def _fill(self):
        before = set(self.in_flight)
        fill(self)
        for ref in set(self.in_flight) - before:
            spec = self.in_flight[ref].attempt.spec
            trials = spec.get("chunk", {}).get("trials", ())  # calibration chunks have none
            submitted[id(ref)] = (spec.get("kind", "calibration"), len(trials),
                                  time.perf_counter() - T0)

    def _done(self, ref):
        kind, n, t_sub = submitted.get(id(ref), ("?", 0, 0.0))
        slot = self.in_flight[ref].slot
        t = time.perf_counter() - T0
        finish_one(self, ref)
        done.append({"kind": kind, "models": n, "slot": slot, "submitted": round(t_sub, 3),
                     "reported": round(t, 3), "stored": round(time.perf_counter() - T0, 3)})

    ray_run._Loop._fill, ray_run._Loop._done = _fill, _done
    wrap(ray, "init", "ray.init")
    wrap(ra, "_say_estimate", "estimate")
    wrap(ra, "audit_chunk_size", "chunk size")
    wrap(ra, "probe", "probe")
    wrap(jobs.AuditJob, "_chosen", "choose target")
    wrap(jobs.AuditJob, "finish", "analysis")
    wrap(schedule, "run_chunks", "pool")
    shutdown = ray_start.shutdown

    def _shutdown():
        ray.timeline(filename=timeline)
        mark("shutdown begin")
        shutdown()
        mark("shutdown end")

    ray_start.shutdown = _shutdown
    mark("run begin")
    try:
        cli.main(["audit", *args, "--json"])
    except SystemExit as exc:
        if exc.code:
            raise
    mark("run end")
    text = json.dumps(summarise(timeline, done), indent=1)
    if save:
        with open(save, "w") as f:
            f.write(text)
    else:
        print(text)


def summarise(timeline: str, done: list[dict]) -> dict:
    spans = []
    if os.path.exists(timeline):
        with open(timeline) as f:
            for e in json.load(f):
                if e.get("ph") == "X" and e.get("cat") == "task::ChunkActor.run":
                    spans.append((str(e["tid"]), e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6))
        os.unlink(timeline)
    # ray's timestamps are epoch seconds; align them with this script's clock
    shift = time.time() - (time.perf_counter() - T0)
    actors: dict[str, list[tuple[float, float]]] = {}
    for tid, a, b in spans:
        actors.setdefault(tid, []).append((a - shift, b - shift))
    end = {w: e for w, e, _ in EVENTS}.get("pool end")
    idle = {}
    for tid, ss in actors.items():
        ss.sort()
        gaps = [b[0] - a[1] for a, b in zip(ss, ss[1:])]
        idle[tid] = {"chunks": len(ss), "first_start": round(ss[0][0], 2),
                     "last_end": round(ss[-1][1], 2), "busy_s": round(sum(b - a for a, b in ss), 2),
                     "gaps_s": round(sum(gaps), 2), "largest_gap_s": round(max(gaps, default=0), 2),
                     "idle_after_last_s": None if end is None else round(end - ss[-1][1], 2)}
    sizes: dict[str, list[int]] = {}
    for d in done:
        sizes.setdefault(d["kind"], []).append(d["models"])
    return {"events": EVENTS, "chunk_models": {k: sorted(set(v)) for k, v in sizes.items()},
            "chunks": {k: len(v) for k, v in sizes.items()}, "actors": idle, "done": done,
            "spans": {k: [(round(a, 2), round(b, 2)) for a, b in v] for k, v in actors.items()}}


if __name__ == "__main__":
    main()
