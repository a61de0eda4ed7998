"""G-PATE tabular configurations, quickly: Setting B AUROC of LR, real run vs coin control.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python benchmarks/gpate_tabular_probe.py \
        isolet 10 4 '{"conditional": true, "teacher_hidden": 32, "teachers": 249, "bins": 2}'

Arguments: dataset, eps, fits, the options as JSON. The F fits of each arm train as one
batched call (seeds 0..F-1), each writes one synthetic table as large as the training set,
a standardised logistic regression is fitted on it and scored (AUROC) on the real test
split; the control arm is the same with ``control="coin"``. Prints per-fit AUROCs, their
means and the paired difference (mean +- se over fits). A screening tool for choosing
options; the measure of record is ``raudit utility ... --control coin`` (docs/learning.md).
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from raudit import data, generators


def auroc(syn, label: str, xte: np.ndarray, yte: np.ndarray) -> float:
    x, y = syn.drop(columns=label).to_numpy(float), syn[label].to_numpy()
    if len(np.unique(y)) < 2:  # a one-class table trains nothing: chance
        return 0.5
    sc = StandardScaler().fit(x)
    clf = LogisticRegression(max_iter=500).fit(sc.transform(x), y)
    return float(roc_auc_score(yte, clf.predict_proba(sc.transform(xte))[:, 1]))


def main(argv: list[str]) -> int:
    torch.set_num_threads(1)
    name, eps, fits, opts = argv[0], float(argv[1]), int(argv[2]), json.loads(argv[3])
    ds = data.load(name)
    label = ds.train.columns[-1]
    xte, yte = ds.test.drop(columns=label).to_numpy(float), ds.test[label].to_numpy()
    res = {}
    for control in (None, "coin"):
        t0 = time.process_time()
        gens = generators.get("gpate")(**opts).fit_many(
            [ds.train] * fits, epsilon=eps, seeds=list(range(fits)),
            train_options={"control": control} if control else None)
        aucs = [auroc(g.sample(len(ds.train), seed=100 + i), label, xte, yte)
                for i, g in enumerate(gens)]
        res[control or "real"] = aucs
        s = gens[0].summary()
        print(f"{control or 'real'}: iterations {s['iterations']} eps_hat {s['eps_hat']:.3f} "
              f"AUROC {np.round(aucs, 4).tolist()} mean {np.mean(aucs):.4f} "
              f"cpu {time.process_time() - t0:.1f}s", flush=True)
    d = np.array(res["real"]) - np.array(res["coin"])
    print(f"{name} eps={eps:g} {opts}: paired diff {d.mean():.4f} +- "
          f"{d.std(ddof=1) / np.sqrt(len(d)):.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
