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

    python benchmarks/one_run.py --trials 10000 --canaries 100 1000 --repeats 5
    python benchmarks/one_run.py --level active --canaries 1000 --repeats 20
"""

from __future__ import annotations

import argparse
import time

import numpy as np

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
    args = p.parse_args()
    print("impl   eps  eps_true | full: eps_lo  eps_fit  cpu s | canaries  q/canary  "
          "one-run eps_lo  cpu s  bound ratio  cost ratio (runs)")
    for impl in ("paper", "fixed"):
        for eps in args.eps:
            sched = schedule_of(impl, {}, eps, DELTA)
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


if __name__ == "__main__":
    main()
