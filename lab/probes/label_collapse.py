"""Where a generator's label output goes on a long run (docs/learning.md, "Why paper collapses").

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python lab/probes/label_collapse.py \\
        --impl paper --dataset breast-cancer --epsilon 10 1 33 300 2408

For each iteration cap, fits 3 models (seeds 1-3) and draws 2,000 rows from each
generator, BEFORE decoding (the encoded output in [0, 1]): prints the share of label
outputs above 0.5 (the decoded label is 1 there), the mean sd of the columns and the
share of columns whose mean sits at a corner of the box (< 0.02 or > 0.98).
``--control coin`` trains with every vote replaced by a fair coin; ``--lam 1`` gives
``paper`` informative votes (Laplace scale 1; use a large --epsilon).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from raudit import data, generators
from raudit.generators.nn.rng import CounterRNG


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", default="paper")
    ap.add_argument("--dataset", default="breast-cancer")
    ap.add_argument("--epsilon", type=float, default=10.0)
    ap.add_argument("--control", default=None)
    ap.add_argument("--lam", type=float, default=None, help="paper's lambda (Laplace scale 1/lambda)")
    ap.add_argument("caps", type=int, nargs="+")
    a = ap.parse_args()
    ds = data.load(a.dataset)
    print(f"{a.dataset}: real label share {ds.train.iloc[:, -1].mean():.3f}")
    for cap in a.caps:
        t = time.perf_counter()
        gen = generators.get(a.impl)(max_iter=cap, **({"lam": a.lam} if a.lam else {}))
        models = gen.fit_many([ds.train] * 3, epsilon=a.epsilon, delta=1e-5, seeds=[1, 2, 3],
                              train_options={"control": a.control} if a.control else None)
        fb = models[0]._batch  # the three share one trained batch
        rng = CounterRNG([11, 12, 13], purpose="sample", dtype=fb.dtype)
        x = fb.trained.sample_fn(fb.trained.generator, rng, 2000).detach().cpu().numpy()
        print(f"cap {cap}: iterations {[m.summary()['iterations'] for m in models]}, "
              f"{time.perf_counter() - t:.0f} s")
        for j in range(3):
            mu = x[j].mean(0)
            print(f"  fit {j}: label share > 0.5 {np.mean(x[j][:, -1] > 0.5):.3f}, column sd "
                  f"{x[j].std(0).mean():.4f}, columns at a corner {np.mean((mu < 0.02) | (mu > 0.98)):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
