"""Probe of `fixed`'s training (docs/learning.md, "A fixed that learns"): 3 fits (seeds 1-3),
the teachers' mean "real" vote share and the released label share at five points of the
run, and each fit's LR AUROC on the real test set (trained on len(train) synthetic rows).

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python benchmarks/fixed_training_probe.py \\
        breast-cancer 1e6 iterations=1000 critic=joint teacher_lr=1e-5 lr=1e-3 [control=coin]

No control and no test here: a screen before the utility command's paired test.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from raudit import data, generators
from raudit.generators.events import Votes


def value(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v, v)


def main() -> int:
    torch.set_num_threads(1)
    name, eps = sys.argv[1], float(sys.argv[2])
    opts = {k: value(v) for k, v in (a.split("=", 1) for a in sys.argv[3:])}
    control = opts.pop("control", None)
    ds = data.load(name)
    stats = []  # (iteration, mean share of teachers voting "real", mean released label)

    def observe(ev):
        if isinstance(ev, Votes):
            stats.append((ev.iteration, (ev.n1 / ev.k).mean(), ev.labels.mean()))
    t = time.process_time()
    models = generators.get("fixed")(**opts).fit_many(
        [ds.train] * 3, epsilon=eps, delta=1e-5, seeds=[1, 2, 3], observer=observe,
        train_options={"control": control} if control else None)
    aucs = []
    for j, m in enumerate(models):
        s = m.sample(len(ds.train), seed=100 + j)
        y = s.iloc[:, -1].to_numpy()
        if len(np.unique(y)) < 2:
            aucs.append(0.5)
            continue
        clf = LogisticRegression(max_iter=2000).fit(s.iloc[:, :-1].to_numpy(float), y)
        p = clf.predict_proba(ds.test.iloc[:, :-1].to_numpy(float))[:, 1]
        aucs.append(roc_auc_score(ds.test.iloc[:, -1].to_numpy(), p))
    st = np.array(stats)
    last = int(st[:, 0].max())
    points = " ".join(f"it{i}: vote {st[st[:, 0] == i, 1].mean():.2f} / label "
                      f"{st[st[:, 0] == i, 2].mean():.2f}"
                      for i in (0, last // 4, last // 2, 3 * last // 4, last))
    print(f"{name} eps={eps} {opts} control={control} AUROC {np.round(aucs, 3).tolist()} "
          f"mean {np.mean(aucs):.3f} cpu {time.process_time() - t:.0f} s | {points}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
