"""How tight a transcript-level audit of PATE's noisy votes gets: paper and fixed at eps 1, 2, 4.

For each generator and eps the mechanism is the one the generator runs at that budget
(``paper``: Laplace(1/lambda = 1,000) argmax votes, as many queries as its
data-independent moments accountant allows, accountants.closed_form.queries_to_reach;
``fixed``: GNMax with the sigma its planner calibrates for 12,800 answers and public
bounds). eps_true is the PLD of those votes (raudit.accountants.true_curve); the audit
draws ``--trials`` runs per world of the worst-case likelihood-ratio statistic
(raudit.audit.transcript) and reports the ratios audited / true in eps (larger of CP and
curve) and in mu (GDP bound against the mu-equivalent of eps_true), mean of ``--repeats``;
then the GDP fit of all trials' likelihood ratios (raudit.audit.gdp_fit: mu_fit and its
eps at delta, eps_fit) against mu_true and eps_true, and the share of repeats whose mu_fit
exceeded mu_true. The worst case is the same statistic at the transcript and active levels
(the active auditor builds it: raudit.audit.active).

    python lab/probes/transcript.py --trials 10000 --repeats 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from raudit.events import PateVote
from raudit.accountants.true_curve import eps_true
from raudit.audit.mechanisms import schedule_of
from raudit.audit.transcript import VoteMechanism, mu_equivalent, transcript_audit

DELTA = 1e-5


def mechanism(impl: str, eps: float) -> VoteMechanism:
    """The votes ``impl`` releases at eps with its default options (a dry run of its schedule)."""
    return schedule_of(impl, {}, eps, DELTA).mechanism


def repeated_audits(mech, trials: int, repeats: int) -> tuple[list[dict], float, tuple]:
    """``repeats`` transcript audits of ``mech`` (seeds 0..repeats-1): the runs, wall seconds
    per audit, and the mean audited eps (larger of CP and curve), mu_gdp and GDP-fit mu."""
    t0 = time.perf_counter()
    runs = [transcript_audit(mech, trials=trials, seed=s, delta=DELTA) for s in range(repeats)]
    wall = (time.perf_counter() - t0) / repeats
    means = tuple(float(np.mean(v)) for v in zip(*[
        (max(r["eps_cp"], r["eps_curve"]), r["mu_gdp"], r["mu_fit"]) for r in runs]))
    return runs, wall, means


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=10_000, help="runs per world")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--eps", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    args = p.parse_args()
    print("impl   eps  queries  eps_true  mu_true | eps_audit  ratio | mu_audit  ratio | "
          "mu_fit  ratio  over | eps_fit  ratio |  s/audit")
    for impl in ("paper", "fixed"):
        for eps in args.eps:
            mech = mechanism(impl, eps)
            ev = PateVote(np.zeros((1, mech.queries), dtype=np.int64), 2, mech.noise, mech.scale)
            true = eps_true([ev], delta=DELTA).eps
            mu_true = mu_equivalent(true, DELTA)
            runs, wall, (e, m, f) = repeated_audits(mech, args.trials, args.repeats)
            over = np.mean([r["mu_fit"] > mu_true for r in runs])
            ef = np.mean([r["eps_fit"] for r in runs])
            print(f"{impl:6s} {eps:3g} {mech.queries:8d} {true:9.4f} {mu_true:8.4f} | "
                  f"{e:9.4f} {e / true:6.3f} | {m:8.4f} {m / mu_true:6.3f} | "
                  f"{f:6.4f} {f / mu_true:6.3f} {over:5.2f} | {ef:7.4f} {ef / true:6.3f} | "
                  f"{wall:7.2f}")


if __name__ == "__main__":
    main()
