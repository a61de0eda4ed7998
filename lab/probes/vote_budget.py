"""How many informative vote answers each dataset's budget buys (docs/learning.md, issue 30).

    RAUDIT_DATA_DIR=../shared/data python lab/probes/vote_budget.py --epsilon 1 5 10 100
    RAUDIT_DATA_DIR=../shared/data python lab/probes/vote_budget.py --epsilon 1 5 10 --checks

Per dataset and eps: k = max(2, N // 50) teachers (``fixed``'s default, N the training
rows), the exact GDP mu of (eps, delta), and the most Gaussian vote answers with noise
sigma <= k / 2 that any correct data-independent accounting can release
(:func:`raudit.accountants.vote_budget.informative_answers`). Also the count for one
record per teacher (k = N) at ``--one-row-eps``: no PATE-style generator has more teachers.

``--checks``: the data-dependent analysis (Confident-GNMax) instead, per dataset, eps and
teacher ratio (``--ratios``): the informative threshold checks
(:func:`~raudit.accountants.vote_budget.informative_checks`) beside the informative answers
at the same k, and the most answers the data-dependent RDP alone can pay for at sigma2 =
k / 10 (``fixed``'s ``dd_sigma2``) when every vote has a tenth, a quarter or half of the
teachers dissenting (:func:`~raudit.accountants.vote_budget.dd_answers`).
"""

from __future__ import annotations

import argparse

from raudit import data
from raudit.accountants.vote_budget import (dd_answers, gdp_mu, informative_answers,
                                            informative_checks)


def _count(n: int | None) -> str:
    return "unbounded" if n is None else (f"{n:,}" if n < 10 ** 9 else "> 10^9")


def _answers_table(a, rows: dict[str, int]) -> None:
    print("| dataset | N | k | " + " | ".join(f"eps = {e:g}" for e in a.epsilon)
          + f" | k = N, eps = {a.one_row_eps:g} |")
    print("|---" * (4 + len(a.epsilon)) + "|")
    for name, n in rows.items():
        k = max(2, n // a.teacher_ratio)
        cells = [f"{informative_answers(e, a.delta, k):,}" for e in a.epsilon]
        print(f"| {name} | {n:,} | {k} | " + " | ".join(cells)
              + f" | {informative_answers(a.one_row_eps, a.delta, n):,} |")


def _checks_table(a, rows: dict[str, int]) -> None:
    print("| dataset | ratio | k | eps | informative checks | informative answers | "
          "dd answers, sigma2 = k/10, dissent k/10 / k/4 / k/2 |")
    print("|---" * 7 + "|")
    for name, n in rows.items():
        for ratio in a.ratios:
            k = max(2, n // ratio)
            for e in a.epsilon:
                dd = " / ".join(_count(dd_answers(e, a.delta, k, d, k / 10.0))
                                for d in (k // 10, k // 4, k // 2))
                print(f"| {name} | {ratio} | {k} | {e:g} | {informative_checks(e, a.delta, k):,} "
                      f"| {informative_answers(e, a.delta, k):,} | {dd} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", nargs="+",
                    default=["breast-cancer", "cervical", "isolet", "epileptic"])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 5.0, 10.0, 100.0])
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--teacher-ratio", type=int, default=50)
    ap.add_argument("--one-row-eps", type=float, default=10.0,
                    help="eps of the last column (one record per teacher, k = N)")
    ap.add_argument("--checks", action="store_true",
                    help="the data-dependent analysis' threshold checks (module docstring)")
    ap.add_argument("--ratios", type=int, nargs="+", default=[50, 5],
                    help="teacher ratios (rows per teacher) of the --checks table")
    a = ap.parse_args()
    print("eps: " + ", ".join(f"{e:g} (mu {gdp_mu(e, a.delta):.4f})" for e in a.epsilon))
    rows = {name: len(data.load(name).train) for name in a.dataset}
    (_checks_table if a.checks else _answers_table)(a, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
