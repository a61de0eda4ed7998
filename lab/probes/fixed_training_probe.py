"""Probe of `fixed`'s training (docs/learning.md, "A fixed that learns"): F fits (seeds 1-F,
``fits=F``, default 3), the teachers' mean "real" vote share and the released label share at
five points of the run, each fit's AUROC on the real test set (``clf=NAME``, default lr:
a registered classifier trained on len(train) synthetic rows) and the spread ratio: the mean
over features of class 1's standard deviation over class 0's, synthetic beside real
(epileptic's classes differ in spread, not in mean; real 5.0 there), and each class's
synthetic spread against the real one's (``sd0``, ``sd1``: mean over features of the
synthetic class's standard deviation over the real class's; 1 = the right scale), and
where each synthetic class sits (``loc0``, ``loc1``: mean over features of |synthetic class
mean - real class mean| / real class sd; 0 = the right place) with the share of the real
test table's values inside the synthetic class's per-feature 1-99 % range (``in0``, ``in1``).
``enc``: the generated features' mean in the encoding (the real table's is beside it) and
their share below 0 (clipped to the lower bound on decoding).
``votes:`` the teachers' margin |n1 - n0| / k over every untied query of the run, and how often
the released label was the teachers' majority (1 with exact votes; at a private eps, what
the noise left of the votes: docs/learning.md, "Breast-cancer: the sign of the link").
A right scale at the wrong place (epileptic: loc0 24-30 real sds, in0 0-0.07) is what the spread alone hid.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python lab/probes/fixed_training_probe.py \\
        breast-cancer 1e6 iterations=1000 critic=joint teacher_lr=1e-5 lr=1e-3 [control=coin] \\
        [clf=rf] [fits=3]

No control and no test here: a screen before the utility command's paired test.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from raudit import classifiers, data, generators
from raudit.events import Votes
from raudit.generators.kwargs import parse_value


def spread(x: np.ndarray, y: np.ndarray) -> float:
    """Mean over features of sd(class 1) / sd(class 0) (a feature constant in class 0 skipped)."""
    s0, s1 = x[y == 0].std(axis=0), x[y == 1].std(axis=0)
    keep = s0 > 0
    return float(np.mean(s1[keep] / s0[keep])) if keep.any() else float("nan")


def scale(x: np.ndarray, real: np.ndarray) -> float:
    """Mean over features of the synthetic rows' sd over the real rows' (same class)."""
    s, r = x.std(axis=0), real.std(axis=0)
    keep = r > 0
    return float(np.mean(s[keep] / r[keep])) if len(x) > 1 and keep.any() else float("nan")


def place(x: np.ndarray, real: np.ndarray, test: np.ndarray) -> tuple[float, float]:
    """(mean over features of |mean(x) - mean(real)| / sd(real), share of ``test``'s values
    inside x's per-feature 1-99 % range) for one class."""
    r = real.std(axis=0)
    keep = r > 0
    if len(x) < 2 or not keep.any():
        return float("nan"), float("nan")
    loc = np.abs(x.mean(axis=0) - real.mean(axis=0))[keep] / r[keep]
    lo, hi = np.quantile(x, [0.01, 0.99], axis=0)
    return float(np.mean(loc)), float(np.mean((test >= lo) & (test <= hi)))


def main() -> int:
    torch.set_num_threads(1)
    name, eps = sys.argv[1], float(sys.argv[2])
    opts = {k: parse_value(v) for k, v in (a.split("=", 1) for a in sys.argv[3:])}
    control = opts.pop("control", None)
    clf = classifiers.get(opts.pop("clf", "lr"))
    fits = int(opts.pop("fits", 3))
    ds = data.load(name)
    stats = []  # (iteration, mean share of teachers voting "real", mean released label)

    margins = []  # per query: (|n1 - n0| / k, released label == the teachers' majority)

    def observe(ev):
        if isinstance(ev, Votes):
            stats.append((ev.iteration, (ev.n1 / ev.k).mean(), ev.labels.mean()))
            gap = 2 * ev.n1.astype(float) - ev.k
            keep = gap != 0  # a tie has no majority
            margins.append(np.stack([np.abs(gap[keep]) / ev.k,
                                     (ev.labels[keep] == (gap[keep] > 0)).astype(float)]))
    t = time.process_time()
    models = generators.get("fixed")(**opts).fit_many(
        [ds.train] * fits, epsilon=eps, delta=1e-5, seeds=list(range(1, fits + 1)),
        observer=observe,
        train_options={"control": control} if control else None)
    aucs, spreads, scales, places, encs = [], [], [], [], []
    xt = ds.test.iloc[:, :-1].to_numpy(float)
    xr, yr = ds.train.iloc[:, :-1].to_numpy(float), ds.train.iloc[:, -1].to_numpy()
    for j, m in enumerate(models):
        s = m.sample(len(ds.train), seed=100 + j)
        e = m._batch.sample_encoded([m._index], len(ds.train), [100 + j]).cpu().numpy()[0][:, :-1]
        encs.append((round(float(e.mean()), 3), round(float(np.mean(e < 0)), 2)))
        y = s.iloc[:, -1].to_numpy()
        if len(np.unique(y)) < 2:
            aucs.append(0.5)
            spreads.append(float("nan"))
            continue
        x = s.iloc[:, :-1].to_numpy(float)
        scores, _ = clf.fit_score(x, y, ds.test.iloc[:, :-1].to_numpy(float), seed=j)
        aucs.append(roc_auc_score(ds.test.iloc[:, -1].to_numpy(), scores))
        spreads.append(spread(x, y))
        scales.append([round(scale(x[y == c], xr[yr == c]), 2) for c in (0, 1)])
        places.append([round(v, 2) for c in (0, 1) for v in place(x[y == c], xr[yr == c], xt)])
    real = spread(xr, yr)
    real_enc = float(models[0]._batch.encoders[models[0]._index].transform(ds.train)[:, :-1].mean())
    st = np.array(stats)
    last = int(st[:, 0].max())
    points = " ".join(f"it{i}: vote {st[st[:, 0] == i, 1].mean():.2f} / label "
                      f"{st[st[:, 0] == i, 2].mean():.2f}"
                      for i in (0, last // 4, last // 2, 3 * last // 4, last))
    print(f"{name} eps={eps} {opts} control={control} {clf.name} AUROC "
          f"{np.round(aucs, 3).tolist()} mean {np.mean(aucs):.3f} spread "
          f"{np.round(spreads, 2).tolist()} (real {real:.2f}) sd0/sd1 {scales} loc0/in0/loc1/in1 {places} enc "
          f"{encs} (real {real_enc:.3f}) cpu "
          f"{time.process_time() - t:.0f} s | {points}")
    mg = np.concatenate(margins, axis=1)
    print(f"votes: mean margin |n1 - n0| / k {mg[0].mean():.3f} (share >= 1/2: "
          f"{np.mean(mg[0] >= 0.5):.3f}, unanimous: {np.mean(mg[0] == 1):.3f}); released label = "
          f"the teachers' majority on {mg[1].mean():.3f} of {mg.shape[1]:,} untied queries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
