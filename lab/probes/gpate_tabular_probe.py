"""G-PATE tabular configurations, quickly: Setting B AUROC of LR, real run vs coin control.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python lab/probes/gpate_tabular_probe.py \
        isolet 10 4 '{"conditional": true, "teacher_hidden": 32, "teachers": 249, "bins": 2}'

Arguments: dataset, eps, fits, the options as JSON, optionally the first seed (default 0)
and the classifier (lr, default, or rf). The F fits of each arm train as one batched call
(seeds s..s+F-1), each writes one synthetic table as large as the training set, a
standardised logistic regression (or a random forest) is fitted on it and scored (AUROC) on
the real test split; the control arm is the same with ``control="coin"``. Prints per-fit
AUROCs, their means, the paired difference (mean +- se over fits), and per fit the cosine
between the synthetic and the real class-mean differences (features min-max scaled on the
training table): a direct reading of whether the generator moved its classes apart the way
the data does (about 0 for a generator that learned nothing). A screening tool for choosing
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


def rf_auroc(syn, label: str, xte: np.ndarray, yte: np.ndarray) -> float:
    from sklearn.ensemble import RandomForestClassifier
    x, y = syn.drop(columns=label).to_numpy(float), syn[label].to_numpy()
    if len(np.unique(y)) < 2:
        return 0.5
    clf = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1).fit(x, y)
    return float(roc_auc_score(yte, clf.predict_proba(xte)[:, 1]))


def mean_difference_cosine(syn, label: str, scale, real_diff: np.ndarray) -> float:
    x, y = scale(syn.drop(columns=label).to_numpy(float)), syn[label].to_numpy()
    if len(np.unique(y)) < 2:
        return 0.0
    d = x[y == 1].mean(0) - x[y == 0].mean(0)
    return float(d @ real_diff / (np.linalg.norm(d) * np.linalg.norm(real_diff) + 1e-12))


def main(argv: list[str]) -> int:
    torch.set_num_threads(1)
    name, eps, fits, opts = argv[0], float(argv[1]), int(argv[2]), json.loads(argv[3])
    seed0 = int(argv[4]) if len(argv) > 4 else 0
    score = {"lr": auroc, "rf": rf_auroc}[argv[5] if len(argv) > 5 else "lr"]
    ds = data.load(name)
    label = ds.train.columns[-1]
    x, y = ds.train.drop(columns=label).to_numpy(float), ds.train[label].to_numpy()
    lo, hi = x.min(0), x.max(0)
    scale = lambda a: (a - lo) / np.where(hi > lo, hi - lo, 1.0)  # noqa: E731
    real_diff = scale(x)[y == 1].mean(0) - scale(x)[y == 0].mean(0)
    xte, yte = ds.test.drop(columns=label).to_numpy(float), ds.test[label].to_numpy()
    res = {}
    for control in (None, "coin"):
        t0 = time.process_time()
        gens = generators.get("gpate")(**opts).fit_many(
            [ds.train] * fits, epsilon=eps, seeds=list(range(seed0, seed0 + fits)),
            train_options={"control": control} if control else None)
        syns = [g.sample(len(ds.train), seed=100 + seed0 + i) for i, g in enumerate(gens)]
        aucs = [score(syn, label, xte, yte) for syn in syns]
        cos = [mean_difference_cosine(syn, label, scale, real_diff) for syn in syns]
        res[control or "real"] = aucs
        s = gens[0].summary()
        print(f"{control or 'real'}: iterations {s['iterations']} eps_hat {s['eps_hat']:.3f} "
              f"AUROC {np.round(aucs, 4).tolist()} mean {np.mean(aucs):.4f} "
              f"cos {np.round(cos, 3).tolist()} cpu {time.process_time() - t0:.1f}s", flush=True)
    d = np.array(res["real"]) - np.array(res["coin"])
    print(f"{name} eps={eps:g} {opts}: paired diff {d.mean():.4f} +- "
          f"{d.std(ddof=1) / np.sqrt(len(d)):.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
