"""G-PATE: how many steps eps affords on simulated, saturated votes (no training).

    python lab/probes/gpate_vote_budget.py --teachers 200 --batch 8 --k-proj 100 --bins 2 \
        --sigma1 600 --sigma2 200 --epsilon 10 --agree 1.0 0.95 0.8

On MNIST the teachers' projected gradients are 100-400 times the clip, so every vote falls in
an edge bin (docs/learning.md). This builds one step's vote histograms with a share
``--agree`` of the k teachers in one edge bin and the rest in the other, draws which queries
the noisy threshold answers (T = 0.5 k), charges them with the data-dependent Confident-GNMax
accountant (:func:`raudit.accountants.gnmax.rdp_confident_gnmax`), and finds the largest
number of such steps whose eps at ``--delta`` stays within ``--epsilon``. Also printed: the
share of answered queries and how often GNMax's noisy argmax picks the majority bin.
Simulated votes, not measured ones: the real count depends on the coordinates the teachers
split on.
"""

from __future__ import annotations

import argparse

import numpy as np

from raudit.accountants.gnmax import DEFAULT_ORDERS, eps_from_rdp, rdp_confident_gnmax


def affordable_steps(step_rdp: np.ndarray, epsilon: float, delta: float, cap: int) -> int:
    """The largest n <= cap with eps(n x step_rdp) <= epsilon (eps grows with n)."""
    lo, hi = 0, cap
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if eps_from_rdp(mid * step_rdp, DEFAULT_ORDERS, delta)[0] <= epsilon:
            lo = mid
        else:
            hi = mid - 1
    return lo


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teachers", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--k-proj", type=int, default=10)
    ap.add_argument("--bins", type=int, default=10)
    ap.add_argument("--sigma1", type=float, required=True)
    ap.add_argument("--sigma2", type=float, required=True)
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--agree", type=float, nargs="+", default=[1.0, 0.95, 0.8])
    ap.add_argument("--cap", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.bins < 2 or not all(0.5 <= x <= 1 for x in a.agree):
        ap.error("--bins must be >= 2 and every --agree in [0.5, 1]")
    rng = np.random.default_rng(a.seed)
    k, q = a.teachers, a.batch * a.k_proj
    for agree in a.agree:
        counts = np.zeros((1, q, a.bins))
        counts[..., -1] = round(agree * k)
        counts[..., 0] = k - round(agree * k)
        answered = counts.max(-1) + rng.normal(0, a.sigma1, (1, q)) >= 0.5 * k
        rdp = rdp_confident_gnmax(counts, answered, 0.5 * k, a.sigma1, a.sigma2, DEFAULT_ORDERS)
        noisy = counts[0, 0] + rng.normal(0, a.sigma2, (20_000, a.bins))
        right = float((noisy.argmax(1) == a.bins - 1).mean())
        n = affordable_steps(rdp, a.epsilon, a.delta, a.cap)
        print(f"agree={agree:g} queries/step={q} steps={n} answered={answered.mean():.2f} "
              f"majority_bin_wins={right:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
