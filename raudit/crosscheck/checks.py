"""The cross-check's named checks: pure functions of the two sides' runs.

Each returns a :class:`Check` (``passed`` None for a measurement that cannot fail).
Tolerances, stated once here:

* trajectories: relative 1e-6. The released code's first check (before any query)
  divides a float32 zero vector, so its floor differs from float64 by ~1e-8; every
  later value is float64 on both sides.
* accountant moments: relative 1e-9 (the same formula evaluated in a different order).
* statistics: for each column, the per-model mean and standard deviation of the
  synthetic tables; a two-sample Kolmogorov-Smirnov test between the sides for each,
  Bonferroni-corrected across the 2 x columns tests at family-wise ``alpha``.
* utility: best-of-N AUROC per classifier; the difference of the two sides' maxima is
  compared with its permutation distribution (the 2N per-model AUROCs relabelled
  ``permutations`` times, a fixed seed); Bonferroni across classifiers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from raudit.accountants.pate import eps_from_moments, moments_missing_log

TRAJECTORY_RTOL, MOMENTS_RTOL = 1e-6, 1e-9


@dataclass
class Check:
    name: str
    passed: bool | None
    summary: str
    numbers: dict = field(default_factory=dict)


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300), initial=0.0))


def stopping(port, released) -> Check:
    p, r = sorted({x.iterations for x in port}), sorted({x.iterations for x in released})
    ok = p == r and len(p) == 1
    return Check("stopping-iteration", ok,
                 f"port stops after {p}, released code after {r} iterations",
                 {"port": p, "released": r})


def trajectory(port, released) -> Check:
    worst, lengths = 0.0, set()
    for a, b in zip(port, released):
        worst = max(worst, _rel(a.trajectory, b.trajectory))
        lengths.add((len(a.trajectory), len(b.trajectory)))
    ok = worst <= TRAJECTORY_RTOL
    return Check("eps-trajectory", ok,
                 f"eps_hat after every iteration, max relative difference {worst:.2e} "
                 f"(tolerance {TRAJECTORY_RTOL:g}) over {len(released)} model pairs",
                 {"max_rel_diff": worst, "lengths": sorted(lengths),
                  "released_final": [x.eps_hat for x in released[:3]],
                  "port_final": [x.eps_hat for x in port[:3]]})


def accountant(released, *, k: int, lam: float, orders: int, delta: float) -> Check:
    """raudit's missing-log accountant fed the released code's own votes, query by query,
    against the moments and eps checks the released code recorded."""
    worst_m, worst_e, queries = 0.0, 0.0, 0
    for run in released:
        alpha = np.zeros(orders)
        by_iter: dict[int, list[np.ndarray]] = {}
        for it, n1 in run.votes:
            by_iter.setdefault(it, []).append(n1)
        for t, recorded in enumerate(run.moments):
            if t > 0:
                for n1 in by_iter.get(t - 1, []):
                    alpha = alpha + moments_missing_log(n1, k, lam, orders)
                    queries += n1.size
            worst_m = max(worst_m, _rel(alpha, recorded) if np.any(recorded) else float(np.any(alpha)))
            worst_e = max(worst_e, _rel(eps_from_moments(alpha, delta), run.trajectory[t]))
    ok = worst_m <= MOMENTS_RTOL and worst_e <= TRAJECTORY_RTOL
    return Check("accountant-moments", ok,
                 f"{queries} released votes through raudit's accountant: moments max relative "
                 f"difference {worst_m:.2e} (tolerance {MOMENTS_RTOL:g}), eps {worst_e:.2e}",
                 {"queries": queries, "moments_max_rel_diff": worst_m, "eps_max_rel_diff": worst_e})


def schema(port, released, train: pd.DataFrame) -> Check:
    lo, hi = train.min(), train.max()
    problems = []
    for side, runs in (("port", port), ("released", released)):
        for i, run in enumerate(runs):
            s = run.synthetic
            if list(s.columns) != list(train.columns) or len(s) != len(train):
                problems.append(f"{side} model {i}: shape {s.shape} or columns differ")
                continue
            if (s.dtypes != train.dtypes).any():
                problems.append(f"{side} model {i}: dtypes differ")
            bad = [c for c in s.columns if s[c].isna().any() or s[c].min() < lo[c] or s[c].max() > hi[c]]
            if bad:
                problems.append(f"{side} model {i}: {bad[0]!r} outside the training range")
    label = train.columns[-1]
    labels = sorted({float(v) for r in (*port, *released) for v in r.synthetic[label].unique()})
    return Check("schema-ranges", not problems,
                 "columns, dtypes, row counts and training ranges hold on both sides"
                 if not problems else f"{len(problems)} problem(s), first: {problems[0]}",
                 {"problems": problems[:10], "label_values": labels})


def statistics(port, released, *, alpha: float) -> Check:
    cols = list(port[0].synthetic.columns)
    tests = []
    for stat in ("mean", "std"):
        for c in cols:
            a = np.array([getattr(r.synthetic[c].astype(float), stat)() for r in port])
            b = np.array([getattr(r.synthetic[c].astype(float), stat)() for r in released])
            p = 1.0 if np.ptp(np.r_[a, b]) == 0 else float(stats.ks_2samp(a, b).pvalue)
            tests.append((p, stat, c, float(a.mean()), float(b.mean())))
    level = alpha / len(tests)
    tests.sort()
    rejected = [t for t in tests if t[0] < level]
    p, stat, c, ma, mb = tests[0]
    return Check("statistics", not rejected,
                 f"KS on per-model column {{mean, std}} ({len(tests)} tests, Bonferroni level "
                 f"{level:.2e}): {len(rejected)} rejected; smallest p {p:.3g} ({stat} of {c!r}: "
                 f"port {ma:.4g}, released {mb:.4g})",
                 {"tests": len(tests), "level": level, "rejected": [t[1:3] for t in rejected],
                  "smallest": {"p": p, "stat": stat, "column": c, "port": ma, "released": mb}})


def utility(port_auc: dict[str, list[float]], released_auc: dict[str, list[float]], *,
            alpha: float, permutations: int = 2000, seed: int = 0) -> Check:
    rng = np.random.default_rng(seed)
    per, failed = {}, []
    level = alpha / max(len(port_auc), 1)
    for name in port_auc:
        a, b = np.asarray(port_auc[name], float), np.asarray(released_auc[name], float)
        observed = abs(np.nanmax(a) - np.nanmax(b))
        pool = np.r_[a, b]
        diffs = np.empty(permutations)
        for j in range(permutations):
            x = rng.permutation(pool)
            diffs[j] = abs(np.nanmax(x[:len(a)]) - np.nanmax(x[len(a):]))
        p = float((1 + np.sum(diffs >= observed - 1e-12)) / (1 + permutations))
        per[name] = {"port_best": float(np.nanmax(a)), "released_best": float(np.nanmax(b)),
                     "port_mean": float(np.nanmean(a)), "released_mean": float(np.nanmean(b)),
                     "p": p}
        if p < level:
            failed.append(name)
    text = "; ".join(f"{n}: best {v['port_best']:.4f} vs {v['released_best']:.4f} "
                     f"(means {v['port_mean']:.4f} vs {v['released_mean']:.4f}, p {v['p']:.3g})"
                     for n, v in per.items())
    return Check("utility", not failed, f"best-of-N AUROC, port vs released: {text}",
                 {"classifiers": per, "level": level, "failed": failed})


def speed(port, released, port_by_m: dict[int, float]) -> Check:
    best_m = min(port_by_m, key=port_by_m.get)
    rel_fit = float(np.mean([r.fit_s for r in released]))
    rel_inner = [r.inner_fit_s for r in released if r.inner_fit_s is not None]
    inner = float(np.mean(rel_inner)) if rel_inner else float("nan")
    ratio = rel_fit / port_by_m[best_m]
    return Check("speed", None,
                 f"training per model: port {port_by_m[best_m]:.3f} s at M = {best_m} "
                 f"(batched), released {rel_fit:.2f} s per process ({inner:.2f} s inside "
                 f"train()): {ratio:.1f}x; inside train() only: {inner / port_by_m[best_m]:.1f}x",
                 {"port_s_per_model_by_M": {str(m): v for m, v in port_by_m.items()},
                  "best_M": best_m, "released_fit_s": rel_fit, "released_train_s": inner,
                  "released_sample_s": float(np.mean([r.sample_s for r in released])),
                  "port_sample_s": float(np.mean([r.sample_s for r in port])),
                  "ratio": ratio, "ratio_train_only": inner / port_by_m[best_m]})
