"""How many informative vote answers each dataset's budget buys (docs/learning.md, issue 30).

    RAUDIT_DATA_DIR=../shared/data python benchmarks/vote_budget.py --epsilon 1 5 10 100

Per dataset and eps: k = max(2, N // 50) teachers (``fixed``'s default, N the training
rows), the exact GDP mu of (eps, delta), and the most Gaussian vote answers with noise
sigma <= k / 2 that any correct data-independent accounting can release
(:func:`raudit.accountants.vote_budget.informative_answers`). Also the count for one
record per teacher (k = N) at ``--one-row-eps``: no PATE-style generator has more teachers.
"""

from __future__ import annotations

import argparse

from raudit import data
from raudit.accountants.vote_budget import gdp_mu, informative_answers


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", nargs="+",
                    default=["breast-cancer", "cervical", "isolet", "epileptic"])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 5.0, 10.0, 100.0])
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--teacher-ratio", type=int, default=50)
    ap.add_argument("--one-row-eps", type=float, default=10.0,
                    help="eps of the last column (one record per teacher, k = N)")
    a = ap.parse_args()
    print("eps: " + ", ".join(f"{e:g} (mu {gdp_mu(e, a.delta):.4f})" for e in a.epsilon))
    print("| dataset | N | k | " + " | ".join(f"eps = {e:g}" for e in a.epsilon)
          + f" | k = N, eps = {a.one_row_eps:g} |")
    print("|---" * (4 + len(a.epsilon)) + "|")
    for name in a.dataset:
        n = len(data.load(name).train)
        k = max(2, n // a.teacher_ratio)
        cells = [f"{informative_answers(e, a.delta, k):,}" for e in a.epsilon]
        print(f"| {name} | {n:,} | {k} | " + " | ".join(cells)
              + f" | {informative_answers(a.one_row_eps, a.delta, n):,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
