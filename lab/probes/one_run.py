"""One-run audits against the full transcript game: paper and fixed at eps 1, 2, 4.

For each generator and eps (the votes of a dry run of its schedule,
raudit.audit.mechanisms) the full game draws ``--trials`` runs per world of the
worst-case likelihood-ratio statistic (raudit.audit.transcript.transcript_audit; its
bound: the larger of CP and the curve bound) and the one-run audit ONE run with
``--canaries`` canaries (raudit.audit.transcript.one_run_transcript). Cost is counted
in mechanism runs (2 x trials against 1) and measured side by side in seconds of this
process (CPU seconds); bounds are means of ``--repeats`` seeds.

``--level active`` runs the active one-run design instead (raudit.audit.active.one_run_active:
each canary in its own teacher when ``--teachers`` >= canaries, flipping its vote on every
canary query in a direction pattern of its own); ``--teachers 0`` (default) gives every
canary its own teacher (the auditor builds a table large enough: fixed trains N // 50
teachers, paper N // 1000 or ``-o teachers=K``). The full game's GDP-fit eps
(raudit.audit.gdp_fit, gaussian-tradeoff assumption) is printed beside its CP/curve bound.

    python lab/probes/one_run.py --trials 10000 --canaries 100 1000 --repeats 5
    python lab/probes/one_run.py --level active --canaries 1000 --repeats 20
    python lab/probes/one_run.py --impl dpgan --trials 10000 --canaries 100 400 --repeats 5
    python lab/probes/one_run.py --impl dpgan --dataset epileptic --canaries 1000 5000 --repeats 3

dpgan's DP-SGD schedule is dry-run on ``--dataset`` (breast-cancer: 455 rows, at most 455
canaries); each canary has a gradient coordinate of its own, so it sees all the steps.

``--black-box``: one training run with m canaries scored on its synthetic data
(raudit.audit.one_run_bb) against the full black-box game (raudit.runs.audit.run_audit,
``--shadow-models`` per world, --backend local, one worker) on the same generator and
data, cost in models trained and in CPU seconds of this process (side by side):

    python lab/probes/one_run.py --black-box --shadow-models 100 --canaries 400 1000 --repeats 3
"""

from __future__ import annotations

import argparse
import time

from pathlib import Path

import numpy as np
import pandas as pd

from raudit import data
from raudit.audit.active import one_run_active
from raudit.audit.mechanisms import schedule_eps_true, schedule_of
from raudit.audit.transcript import one_run_transcript, transcript_audit

DELTA = 1e-5


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=10_000, help="full game: runs per world")
    p.add_argument("--canaries", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--eps", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    p.add_argument("--level", choices=("transcript", "active"), default="transcript")
    p.add_argument("--teachers", type=int, default=0, help="active: 0 = one per canary")
    p.add_argument("--impl", nargs="+", default=["paper", "fixed"])
    p.add_argument("--dataset", default="breast-cancer", help="dpgan's table (its rate, rows)")
    p.add_argument("--black-box", action="store_true", help="the black-box comparison")
    p.add_argument("--shadow-models", type=int, default=100, help="black-box full game, per world")
    args = p.parse_args()
    if args.black_box:
        return black_box(args)
    print("impl   eps  eps_true | full: eps_lo  eps_fit  cpu s | canaries  q/canary  "
          "one-run eps_lo  cpu s  bound ratio  cost ratio (runs)")
    ds = data.load(args.dataset)
    for impl in args.impl:
        for eps in args.eps:
            sched = schedule_of(impl, {}, eps, DELTA, table=ds.train, columns=ds.columns)
            true = schedule_eps_true(sched, DELTA).eps
            t0 = time.process_time()
            full = [transcript_audit(sched.mechanism, trials=args.trials, seed=s, delta=DELTA)
                    for s in range(args.repeats)]
            t_full = (time.process_time() - t0) / args.repeats
            e_full = np.mean([max(r["eps_cp"], r["eps_curve"]) for r in full])
            e_fit = np.mean([r["eps_fit"] for r in full])
            for m in args.canaries:
                t0 = time.process_time()
                if args.level == "active":
                    one = [one_run_active(sched.mechanism, canaries=m, seed=s,
                                          teachers=args.teachers or m)
                           for s in range(args.repeats)]
                else:
                    one = [one_run_transcript(sched.mechanism, canaries=m, seed=s)
                           for s in range(args.repeats)]
                t_one = (time.process_time() - t0) / args.repeats
                e_one = np.mean([r["eps_lo"] for r in one])
                ratio = e_one / e_full if e_full > 0 else float("nan")
                print(f"{impl:6s} {eps:3g} {true:9.4f} | {e_full:12.4f} {e_fit:8.4f} "
                      f"{t_full:8.3f} | "
                      f"{m:8d} {one[0]['queries_per_canary']:9d} {e_one:15.4f} {t_one:8.4f} "
                      f"{ratio:12.3f}  1/{2 * args.trials}")


def binary_table(path: str = "/tmp/raudit-bench-bin12.csv") -> str:
    """2,000 rows of 12 independent fair bits (randomized response needs 0/1 columns)."""
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.integers(0, 2, size=(2000, 12)),
                 columns=[f"c{i}" for i in range(12)]).to_csv(path, index=False)
    return path


def black_box(args) -> None:
    import tempfile

    from raudit.audit.one_run_bb import one_run_black_box
    from raudit.audit.runner import AuditRequest
    from raudit.engine.driver import EngineConfig
    from raudit.runs.audit import run_audit

    binary = binary_table()
    cases = [("identity", {}, "breast-cancer", None, None, 1.0),
             ("randomized-response", {}, binary, "c11", "0", 12.0),
             ("randomized-response", {}, binary, "c11", "0", 24.0)]
    print("impl                 eps  data          | full: S/world  eps_lo  cpu_s | canaries  "
          "one-run eps_lo (mean of repeats)  cpu_s | bound ratio  cost (models, cpu)")
    for impl, opts, name, label, target, eps in cases:
        req = AuditRequest(impl=impl, attack="querybased", dataset=name, label=label,
                           target=target, options=opts, epsilon=eps,
                           shadow_models=args.shadow_models, seed=0)
        with tempfile.TemporaryDirectory() as out:
            t0 = time.process_time()
            full = run_audit(req, out, EngineConfig(backend="local", workers=1))
            c_full = time.process_time() - t0
        e_full = max(full["eps_cp"] or 0.0, full.get("eps_curve") or 0.0)
        ds = data.load(name, label=label)
        for m in args.canaries:
            if m > len(ds.train):
                print(f"{impl:20s} {eps:4g} {Path(name).stem[:13]:13s} | {m} canaries > "
                      f"{len(ds.train)} rows: skipped")
                continue
            t0 = time.process_time()
            lows = [one_run_black_box(impl, opts, ds.train, ds.columns, canaries=m,
                                      epsilon=eps, delta=None if impl != "identity" else 1e-5,
                                      seed=s)["eps_lo"] for s in range(args.repeats)]
            c_one = (time.process_time() - t0) / args.repeats
            e_one = float(np.mean(lows))
            ratio = e_one / e_full if e_full > 0 else float("nan")
            print(f"{impl:20s} {eps:4g} {Path(name).stem[:13]:13s} | {args.shadow_models:13d} "
                  f"{e_full:7.3f} {c_full:6.1f} | {m:8d} {e_one:7.3f} "
                  f"{np.round(lows, 2)!s:24s} {c_one:6.2f} | {ratio:11.3f}  "
                  f"1/{2 * args.shadow_models}, 1/{c_full / c_one:,.0f}", flush=True)


if __name__ == "__main__":
    main()
