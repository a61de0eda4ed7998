"""eps_true against the claim for every port: does any accountant under-charge?

Fits one model of each generator that emits privacy events on a dataset at eps
(default: the worst-case table, the study's eps 1, the generator's default options),
with an event log, and prints its own accountant's eps_hat beside eps_true of what it
released (raudit.generators.transcript.run_eps_true: every vote, charged or not, at
the most teachers one row reached over the run; the note gives eps_true with teachers
refit each iteration where rows reach fewer teachers within one).

    python lab/probes/eps_true_ports.py --eps 1 --impl paper smartnoise synthcity
"""

from __future__ import annotations

import argparse
import time

from raudit import data, generators
from raudit.events import EventLog
from raudit.generators.transcript import run_eps_true
from raudit.privacy import PrivacySpec

PORTS = ("paper", "smartnoise", "borealis", "synthcity", "updated", "fixed")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--impl", nargs="+", default=list(PORTS))
    p.add_argument("--eps", type=float, default=1.0)
    p.add_argument("--dataset", default="worst-case")
    p.add_argument("--delta", type=float, default=None, help="default: the generator's rule")
    p.add_argument("--max-iter", type=int, default=None, help="cap the iterations (cheaper)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    ds = data.load(args.dataset)
    for impl in args.impl:
        opts = {} if args.max_iter is None else {"max_iter": args.max_iter}
        gen = generators.get(impl)(**opts)
        privacy = PrivacySpec(args.eps, args.delta).resolve(gen, len(ds.train))
        log = EventLog()
        t0 = time.perf_counter()
        gen.fit(ds.train, epsilon=privacy.epsilon, delta=privacy.delta, seed=args.seed,
                columns=ds.columns, observer=log)
        wall = time.perf_counter() - t0
        claimed = gen.summary()["eps_hat"]
        true = run_eps_true(log.events, delta=privacy.delta)
        flag = "UNDER-CHARGES" if true.eps > claimed else "ok"
        print(f"{impl:10s} eps {args.eps:g} delta {privacy.delta:.3g}: claimed eps_hat "
              f"{claimed:.4f}, eps_true {true.eps:.4f} ({true.method}, sensitivity "
              f"{true.sensitivity}) {flag}  [{wall:.1f} s] {true.note}", flush=True)


if __name__ == "__main__":
    main()
