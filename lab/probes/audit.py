"""Shadow models per hour of the audit engine: batched chunks of M models vs M = 1.

Two workloads, each through the real path (game trials -> chunks -> engine ->
run_chunk -> Parquet store), on ``--workers`` actors:

* ``worst-case``: querybased attack on the study's worst case, 100 iterations
  (eps = 1; the paper generator reaches 100 iterations before its budget);
* ``cervical``: groundhog (naive) on the cervical training split (686 x 29;
  ``RAUDIT_DATA_DIR=/work/shared/data``), or on breast-cancer when no copy is here,
  1,000 iterations: eps is set to 100 so every model runs all 1,000 (at eps = 1 the
  paper generator stops after ~33, which would measure the stopping rule instead).

For each workload, generator (``paper``, and ``smartnoise`` when registered) and M,
every actor runs ``--rounds`` chunks of M models (2: a cold one that pays the
imports, a warm one). Reported: end to end (models / wall of the run, actor
start-up and cold chunks included) and steady state (workers x 3600 / seconds
per model in the warm chunks). Prints a table; ``--json`` for machines.

    RAUDIT_DATA_DIR=/work/shared/data python lab/probes/audit.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

from raudit import data, generators
from raudit.attacks import outlier_candidates
from raudit.audit.game import trials
from raudit.audit.chunk import failed_rows, run_chunk
from raudit.audit.runner import AuditRequest, chunk_specs, prepare
from raudit.engine.driver import EngineConfig, run_chunks, session
from raudit.results import ResultStore

WORKLOADS = {
    "worst-case": dict(attack="querybased", dataset="worst-case", epsilon=1.0, max_iter=100,
                       ms=[1, 32, 128, 512]),
    "cervical": dict(attack="groundhog", dataset="cervical", epsilon=100.0, max_iter=1000,
                     ms=[1, 16, 64]),
}


def _dataset(name: str) -> tuple[str, str]:
    if name != "cervical":
        return name, ""
    try:
        data.load("cervical")
        return "cervical", ""
    except Exception:  # noqa: BLE001 - no copy here: a table of similar size
        return "breast-cancer", "cervical not found (set RAUDIT_DATA_DIR): breast-cancer instead"


def measure(workload: str, impl: str, m: int, engine: EngineConfig, rounds: int) -> dict:
    w = WORKLOADS[workload]
    dataset, note = _dataset(w["dataset"])
    models = m * engine.workers * rounds  # per world split in two below: half in, half out
    # The most outlying record is the target (the mini-MIAs are not what is measured).
    train = data.load(dataset).train
    target = None if dataset == "worst-case" else str(train.index[outlier_candidates(train, 1)[0]])
    req = AuditRequest(impl=impl, attack=w["attack"], dataset=dataset, epsilon=w["epsilon"],
                       options={"max_iter": w["max_iter"]}, shadow_models=max(5, models // 2),
                       chunk_size=m, target=target)
    game, _, _ = prepare(req)
    per_world = {wd: trials(game, world=wd)[: models // 2 or 1] for wd in ("out", "in")}
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultStore(tmp)
        specs = chunk_specs(game, "bench", per_world, set(), m)
        stats = run_chunks(run_chunk, specs, config=engine, weight=lambda s: len(s["trials"]),
                           on_done=lambda spec, rows, error: store.append(
                               "shadow", rows if error is None else failed_rows(spec, error)))
        rows = store.read("shadow")
    ok = rows[rows["status"] == "ok"]
    # Steady state: seconds per model of the warm chunks. Every row of a chunk carries the
    # chunk's wall / M; each actor's first chunk pays its imports, so with more than one
    # round the `workers` slowest chunks are left out.
    chunks = sorted(ok["wall_s"].unique())
    warm = chunks[: len(chunks) - engine.workers] if len(chunks) > engine.workers else chunks
    per_model = float(sum(warm) / len(warm)) if warm else float("nan")
    return {"workload": workload, "dataset": dataset, "impl": impl, "M": m, "models": len(ok),
            "failed": int((rows["status"] != "ok").sum()),
            "iterations": float(ok["iterations"].mean()) if len(ok) else float("nan"),
            "wall_s": stats.wall_s, "end_to_end_per_h": len(ok) / stats.wall_s * 3600,
            "steady_per_h": engine.workers * 3600 / per_model, "placement": stats.placement,
            "note": note}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--impls", nargs="+", default=None, help="default: paper (+ smartnoise)")
    ap.add_argument("--ms", type=int, nargs="+", default=None, help="chunk sizes (default per workload)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=2, help="chunks per actor (the first is cold)")
    ap.add_argument("--backend", default="ray", choices=["ray", "local"])
    ap.add_argument("--quick", action="store_true", help="smoke test: tiny M and iterations")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    impls = args.impls or [i for i in ("paper", "smartnoise") if i in generators.names()]
    if args.quick:
        for w in WORKLOADS.values():
            w.update(max_iter=5, ms=[1, 4])
    engine = EngineConfig(backend=args.backend, workers=args.workers, device="cpu")
    results = []
    with session(engine):
        for wl in args.workloads:
            for impl in impls:
                for m in args.ms or WORKLOADS[wl]["ms"]:
                    results.append(measure(wl, impl, m, engine, args.rounds))
                    if not args.json:
                        print(_line(results[-1]), flush=True)
    for r in results:  # speed-up of each M over M = 1 of the same workload and generator
        base = next((b for b in results if (b["workload"], b["impl"], b["M"]) ==
                     (r["workload"], r["impl"], 1)), None)
        r["speedup"] = r["steady_per_h"] / base["steady_per_h"] if base else None
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"\nshadow models per hour, {args.workers} workers ({results[0]['placement']})")
    print(f"{'workload':<11} {'impl':<11} {'M':>4} {'models':>6} {'iters':>6} "
          f"{'end-to-end/h':>13} {'steady/h':>10} {'vs M=1':>7}")
    for r in results:
        sp = f"{r['speedup']:.1f}x" if r["speedup"] else "-"
        print(f"{r['workload']:<11} {r['impl']:<11} {r['M']:>4} {r['models']:>6} "
              f"{r['iterations']:>6.0f} {r['end_to_end_per_h']:>13,.0f} {r['steady_per_h']:>10,.0f} {sp:>7}")
    for best in _best(results):
        print(f"best {best['workload']}/{best['impl']}: M={best['M']}, "
              f"{best['steady_per_h']:,.0f} models/h ({best['speedup']:.1f}x M=1)")
    for note in {r["note"] for r in results if r["note"]}:
        print("note:", note)


def _best(results: list[dict]) -> list[dict]:
    groups: dict[tuple, dict] = {}
    for r in results:
        k = (r["workload"], r["impl"])
        if r["speedup"] and (k not in groups or r["steady_per_h"] > groups[k]["steady_per_h"]):
            groups[k] = r
    return list(groups.values())


def _line(r: dict) -> str:
    return (f"{r['workload']}/{r['impl']} M={r['M']}: {r['models']} models in {r['wall_s']:.1f} s, "
            f"{r['steady_per_h']:,.0f}/h steady, {r['end_to_end_per_h']:,.0f}/h end to end")


if __name__ == "__main__":
    main()
