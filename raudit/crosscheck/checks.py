"""The cross-check's named checks: pure functions of the two sides' runs.

Each returns a :class:`Check` (``passed`` None for a measurement that cannot fail).
Tolerances, stated once here:

* float32 in the released accountant (measured, then explained): smartnoise-synth's
  ``moments_acc`` computes the data-independent term ``2 * lap_scale**2 * l * (l + 1)``
  with ``l`` an element of an int64 tensor, so the product is a float32 tensor (three
  roundings, relative error <= 3 * 2^-24 = 1.8e-7); its first eps check also divides a
  float32 zero vector. raudit's accountant is float64 throughout.
* accountant moments: raudit's accountant on the released votes must agree with the
  released moments within FLOAT32_RTOL = 2e-7 (one missing query in 10,000 would show
  as 1e-4). The same votes also go through a float32 model of the released arithmetic;
  the check reports which of the two reproduces the released moments to 1e-12 (for
  smartnoise-synth 1.0.8 the float32 one: the rounding is the whole difference).
* trajectories: relative 1e-6 (the float32 terms above, well below any eps gap that
  could move the stopping iteration except at an exact tie).
* statistics: for each column, the per-model mean and standard deviation of the
  synthetic tables; a two-sample Kolmogorov-Smirnov test between the sides for each,
  Bonferroni-corrected across the 2 x columns tests at family-wise ``alpha``.
* utility: best-of-N AUROC per classifier; the difference of the two sides' maxima is
  compared with its permutation distribution (the 2N per-model AUROCs relabelled
  ``permutations`` times, a fixed seed); Bonferroni across classifiers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from raudit.accountants.pate import eps_from_moments, moments_missing_log

TRAJECTORY_RTOL, FLOAT32_RTOL, MOMENTS_RTOL = 1e-6, 2e-7, 1e-12


def float32_missing_log(n1, k: int, lam: float, L: int) -> np.ndarray:
    """The released ``moments_acc`` arithmetic: q and the log's argument t in float64, the
    bound ``2 * lam**2 * l * (l + 1)`` as torch computes it for an int64 ``l`` (float32:
    the Python float rounded, times l rounded, times (l + 1) rounded), min, summed."""
    l32 = np.arange(1, L + 1).astype(np.float32)
    bound = ((np.float32(2 * lam**2) * l32) * (l32 + np.float32(1))).astype(np.float64)
    gap = lam * np.abs(2 * np.asarray(n1, dtype=np.float64) - k)[..., None]
    q = (2 + gap) / (4 * np.exp(gap))
    l = np.arange(1, L + 1, dtype=np.float64)
    with np.errstate(all="ignore"):
        t = (1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** l + q * np.exp(2 * lam * l)
    return np.minimum(t, bound).sum(axis=-2)


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
    against the moments and eps checks the released code recorded (and the same votes
    through :func:`float32_missing_log`, which must match them to rounding)."""
    worst_m, worst_32, worst_e, queries = 0.0, 0.0, 0.0, 0
    for run in released:
        alpha, alpha32 = np.zeros(orders), np.zeros(orders)
        by_iter: dict[int, list[np.ndarray]] = {}
        for it, n1 in run.votes:
            by_iter.setdefault(it, []).append(n1)
        for t, recorded in enumerate(run.moments):
            if t > 0:
                for n1 in by_iter.get(t - 1, []):
                    alpha = alpha + moments_missing_log(n1, k, lam, orders)
                    alpha32 = alpha32 + float32_missing_log(n1, k, lam, orders)
                    queries += n1.size
            if np.any(recorded):
                worst_m = max(worst_m, _rel(alpha, recorded))
                worst_32 = max(worst_32, _rel(alpha32, recorded))
            else:  # before any query: both must be zero too
                worst_m = max(worst_m, float(np.any(alpha)))
                worst_32 = max(worst_32, float(np.any(alpha32)))
            worst_e = max(worst_e, _rel(eps_from_moments(alpha, delta), run.trajectory[t]))
    ok = worst_m <= FLOAT32_RTOL and worst_e <= TRAJECTORY_RTOL
    exact = ("float32 model" if worst_32 <= MOMENTS_RTOL else
             "float64 (raudit's)" if worst_m <= MOMENTS_RTOL else "neither")
    return Check("accountant-moments", ok,
                 f"{queries} released votes through raudit's accountant: moments max relative "
                 f"difference {worst_m:.2e} (tolerance {FLOAT32_RTOL:g}: the released bound is "
                 f"float32), through a float32 model of the released arithmetic {worst_32:.1e} "
                 f"(exact: {exact}); eps {worst_e:.2e}",
                 {"queries": queries, "moments_max_rel_diff": worst_m, "exact": exact,
                  "float32_model_max_rel_diff": worst_32, "eps_max_rel_diff": worst_e})


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
    n = min((len(v) for v in port_auc.values()), default=0)
    power = low_power(n, level)
    return Check("utility", not failed, f"best-of-N AUROC, port vs released: {text}"
                 + (f"; {power}" if power else ""),
                 {"classifiers": per, "level": level, "failed": failed,
                  "smallest_possible_p": smallest_p(n), "low_power": power})


def smallest_p(n: int) -> float:
    """The smallest p the utility permutation test can give with ``n`` models per side:
    only the 2 splits that put the n lowest AUROCs on one side reach the largest gap
    between the best-of-n values, out of C(2n, n) (distinct values)."""
    return 1.0 if n < 1 else min(1.0, 2 / math.comb(2 * n, n))


def low_power(n: int, level: float) -> str:
    """A warning when the utility test can barely (or not at all) fail with ``n`` models
    per side; '' when it has the models to detect more than a gross difference."""
    need = next(m for m in range(1, 60) if smallest_p(m) < level)
    if smallest_p(n) >= level:
        return (f"this check cannot fail with {n} model(s) per side (its smallest possible p "
                f"is {smallest_p(n):.2g}, not below the level {level:.2g}): its 'pass' means "
                f"nothing; use --seeds {max(need, 10)} or more")
    if n < 10:
        return (f"only {n} models per side: the check has little power (it passes unless "
                "the sides differ grossly); use --seeds 10 or more for a meaningful pass")
    return ""


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
