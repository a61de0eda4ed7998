"""How tight a transcript-level audit of DP-SGD (dpgan) and G-PATE gets at eps 1, 2, 4.

dpgan: the mechanism is a dry run of its schedule (iterations x critic_steps Poisson
subsampled Gaussian steps at its planner's noise multiplier, raudit.audit.mechanisms) on
``--dataset`` (breast-cancer: rate 64/455; worst-case: 5 rows, full batch). gpate: the
Gaussian vote releases of ONE training run on ``--gpate-dataset`` (its step count and
answered queries depend on the votes). eps_true is the PLD of the audited releases;
the audit draws ``--trials`` runs per world of the worst-case likelihood-ratio statistic
and reports audited / true in eps (larger of CP and curve) and in mu (GDP bound
against the mu-equivalent of eps_true; and main's GDP fit, raudit.audit.gdp_fit, which
assumes a Gaussian trade-off), mean of ``--repeats`` seeds.

    python lab/probes/transcript_dpsgd.py --trials 10000 --repeats 5
"""

from __future__ import annotations

import argparse

from raudit import data
from raudit.audit.mechanisms import schedule_eps_true, schedule_of
from raudit.audit.run_schedule import schedule_from_run
from raudit.audit.transcript import mu_equivalent
from transcript import repeated_audits  # lab/probes/transcript.py, beside this script (its folder is sys.path[0])

DELTA = 1e-5


def schedules(args, eps: float):
    for name in args.dataset:
        ds = data.load(name)
        yield f"dpgan/{name}", schedule_of("dpgan", {}, eps, DELTA, table=ds.train,
                                           columns=ds.columns)
    if args.gpate_dataset:
        ds = data.load(args.gpate_dataset)
        sched, _ = schedule_from_run("gpate", {}, ds.train, ds.columns, eps, DELTA, seed=0)
        yield f"gpate/{args.gpate_dataset}", sched


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=10_000, help="runs per world")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--eps", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    p.add_argument("--dataset", nargs="*", default=["breast-cancer", "worst-case"])
    p.add_argument("--gpate-dataset", default="epileptic")
    args = p.parse_args()
    print("mechanism               eps  steps  eps_true  mu_true | eps_audit  ratio | "
          "mu_audit  ratio | mu_fit  ratio | s/audit")
    for eps in args.eps:
        for label, sched in schedules(args, eps):
            mech = sched.mechanism
            true = schedule_eps_true(sched, DELTA).eps
            mu_true = mu_equivalent(true, DELTA)
            # f: the GDP fit's mu (assumes a Gaussian trade-off)
            _, wall, (e, m, f) = repeated_audits(mech, args.trials, args.repeats)
            print(f"{label:22s} {eps:3g} {mech.queries:6d} {true:9.4f} {mu_true:8.4f} | "
                  f"{e:9.4f} {e / true:6.3f} | {m:8.4f} {m / mu_true:6.3f} | {f:6.4f} "
                  f"{f / mu_true:6.3f} | {wall:6.2f}",
                  flush=True)
            if label.startswith("gpate"):  # its own (data-dependent RDP) charge, beside eps_true
                print(f"    {sched.source}", flush=True)


if __name__ == "__main__":
    main()
