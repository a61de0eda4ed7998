"""How much of a table `fixed`'s DP bounds clamp, rule by rule, over many noise draws.

    python lab/probes/fixed_bounds.py --dataset breast-cancer cervical epileptic --epsilon 0.5 1 5 10

Per dataset, eps and rule: the share of the training values (columns without public bounds)
outside their bounds, its largest over the seeds, how many (column, seed) pairs got a width
above 10x the column's data range, and the largest width / range. The bounds come from the
same noisy histogram whatever the rule (post-processing; `bounds_share` of eps, 0.2 here as
`fixed`'s default). Reading off the records is what makes this a measurement, not a release:
it is for choosing a rule, never part of a run.
"""

from __future__ import annotations

import argparse

import numpy as np

from raudit import data
from raudit.generators.pategan.core.dp_bounds import DPBoundsEncoder, private_columns
from raudit.generators.pategan.core.noise_calibration import bounds_noise

RULES = {  # name: (mass, centred, within_run)
    "run (before 2026-11-25)": (1.0, False, False),
    "mass 0.9 centred, all passing bins": (0.9, True, False),
    "mass 0.9 centred, within the run (default)": (0.9, True, True),
}


def measure(dataset: str, epsilon: float, rule: tuple, seeds: range, share: float = 0.2):
    ds = data.load(dataset)
    names = list(ds.train.columns)
    priv = private_columns(names, ds.columns)
    if not priv:
        return None
    x = ds.train.to_numpy(float)[:, priv]
    span = np.ptp(x, axis=0)
    span = np.where(span > 0, span, 1.0)
    z = bounds_noise(epsilon, 1e-5, len(priv), share)
    mass, centred, within = rule
    clamped, stretched, widest = [], 0, 0.0
    for s in seeds:
        enc = DPBoundsEncoder(noise_multiplier=z, seed=s, mass=mass, centred=centred,
                              within_run=within).fit(ds.train, ds.columns)
        lo, hi = enc.lo[priv], enc.hi[priv]
        clamped.append(float(((x < lo) | (x > hi)).mean()))
        stretched += int(((hi - lo) > 10 * span).sum())
        widest = max(widest, float(np.max((hi - lo) / span)))
    return len(priv), float(np.mean(clamped)), float(np.max(clamped)), stretched, widest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", nargs="+", default=["breast-cancer", "cervical", "epileptic"])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[0.5, 1.0, 5.0, 10.0])
    ap.add_argument("--seeds", type=int, default=40)
    a = ap.parse_args(argv)
    print("| dataset | eps | rule | clamped, mean (max) | width > 10x range | widest / range |")
    print("|---|---:|---|---:|---:|---:|")
    for name in a.dataset:
        for eps in a.epsilon:
            for label, rule in RULES.items():
                r = measure(name, eps, rule, range(a.seeds))
                if r is None:
                    print(f"| {name} | {eps:g} | every column has public bounds | | | |")
                    break
                n, mean, top, stretched, widest = r
                print(f"| {name} | {eps:g} | {label} | {100 * mean:.2f} % ({100 * top:.1f}) | "
                      f"{stretched} of {a.seeds * n} | {widest:.3g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
