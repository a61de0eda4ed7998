"""What `fixed -o analysis=data-dependent` would release on the votes of a recorded run.

Reads the ``votes`` events of a `raudit train --impl fixed ... --events` run (any
analysis) and, for each eps and Confident-GNMax setting, takes the plan `fixed` would make
for the same number of queries and teachers (:func:`raudit.generators.pategan.fixed.dd.plan_dd`:
the threshold check's sigma1, the answers' sigma2, T) and computes, on these vote
histograms, the expected data-dependent RDP of the run: every query's threshold check at its
data-independent cost, each query's GNMax answer at its data-dependent cost weighted by the
probability that its check passes. Converted to (eps, delta) at the best order, before the
smooth-sensitivity release's own cost and without the DP-bounds histogram (both add to it).
First order only: a data-dependent run trains its student on the answered queries alone, so
its own votes would differ. ``--every N`` keeps every N-th query (a run asking N times fewer).

    python lab/probes/dd_release_estimate.py runs/t/events.parquet --epsilon 5 10 --every 1 4 8
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd
from scipy.stats import norm

from raudit.accountants.gnmax import DEFAULT_ORDERS, logq_gnmax, rdp_gnmax
from raudit.generators.pategan.fixed.dd import plan_dd

SETTINGS = ((0.8, 0.1), (0.9, 0.1), (0.9, 0.05), (0.95, 0.05))  # (T / k, sigma2 / k)


def expected_eps(top: np.ndarray, k: int, eps: float, delta: float, threshold: float,
                 sigma2_share: float, dp_columns: int) -> dict:
    """The plan at ``eps`` for these votes' query count, and its expected released eps."""
    orders = DEFAULT_ORDERS[1:]
    p = plan_dd(eps, delta, len(top), k, dp_columns, 0.2, threshold, sigma2_share, 20.0, 0.4)
    s1, s2, t = p.votes.sigma1, p.votes.sigma2, p.votes.threshold
    passes = norm.sf((t - top) / s1)
    tops, inverse = np.unique(top, return_inverse=True)
    answer = np.stack([rdp_gnmax(np.array([logq_gnmax(np.array([x, k - x]), s2)]), s2, orders)[0]
                       for x in tops])
    checks = len(top) * orders / (2 * s1 ** 2)
    convert = math.log(1 / delta) / (orders - 1)
    total = checks + (passes[:, None] * answer[inverse]).sum(0) + convert
    i = int(np.argmin(total))
    return {"eps": eps, "T/k": threshold, "sigma2/k": sigma2_share, "queries": len(top),
            "sigma1": s1, "sigma2": s2, "answered (expected)": passes.sum(),
            "checks alone": float((checks + convert).min()), "expected eps": float(total[i]),
            "order": float(orders[i])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("events", help="events.parquet of a `raudit train --impl fixed --events` run")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[5.0, 10.0])
    ap.add_argument("--every", type=int, nargs="+", default=[1])
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--dp-columns", type=int, default=0,
                    help="columns without public bounds (sizes the plan's bounds share)")
    a = ap.parse_args()
    try:
        ev = pd.read_parquet(a.events)
    except (OSError, ValueError) as exc:  # missing, unreadable or not Parquet
        raise SystemExit(f"dd_release_estimate: cannot read {a.events}: {exc}") from None
    if "kind" not in ev:
        raise SystemExit(f"{a.events}: not an events table (record with `raudit train --events`)")
    votes = ev[ev.kind == "votes"]
    if votes.empty:
        raise SystemExit(f"{a.events}: no votes events (record with `raudit train --events`)")
    k = int(votes.k.iloc[0])
    n1 = np.concatenate([np.asarray(x, dtype=float) for x in votes.n1])
    top = np.maximum(n1, k - n1)
    print(f"k = {k}, {len(top):,} queries; top count >= 0.8k: {np.mean(top >= 0.8 * k):.2f}, "
          f">= 0.9k: {np.mean(top >= 0.9 * k):.2f}")
    rows = [expected_eps(top[::n], k, e, a.delta, t, s, a.dp_columns)
            for n in a.every for e in a.epsilon for t, s in SETTINGS]
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:,.2f}"))


if __name__ == "__main__":
    main()
