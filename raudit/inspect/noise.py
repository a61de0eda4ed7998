"""The noise actually drawn: its shape (Laplace or Gaussian) and scale, against what
the accountant assumes (Laplace of scale 1/lambda) or what the Gaussian mechanism
needs for (eps, delta).
"""

from __future__ import annotations

import math

import numpy as np

from raudit.inspect.cells import Cell, cell
from raudit.inspect.context import Context
from raudit.inspect.partition import NO_EVENTS

__all__ = ["check_delta_scale", "check_laplace", "fit_noise", "gaussian_sigma"]

#: relative error allowed between the drawn scale and the assumed one (thousands of
#: draws give an estimate within a few percent)
SCALE_TOL = 0.1


def fit_noise(x: np.ndarray) -> dict[str, float]:
    """Zero-mean maximum-likelihood fits of Laplace and Gaussian, their mean
    log-likelihoods per draw, and the excess kurtosis (Laplace 3, Gaussian 0)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    b = float(np.mean(np.abs(x)))
    s = float(np.sqrt(np.mean(x**2)))
    ll_lap = -math.log(2 * b) - 1.0 if b > 0 else float("nan")
    ll_gauss = -0.5 * math.log(2 * math.pi * s * s) - 0.5 if s > 0 else float("nan")
    kurt = float(np.mean(x**4) / s**4 - 3.0) if s > 0 else float("nan")
    return {"n": x.size, "laplace_b": b, "gauss_sigma": s, "ll_laplace": ll_lap,
            "ll_gauss": ll_gauss, "excess_kurtosis": kurt,
            "shape": "laplace" if ll_lap > ll_gauss else "gaussian"}


def gaussian_sigma(epsilon: float, delta: float) -> float:
    """The Gaussian mechanism's sigma for sensitivity 1: sqrt(2 ln(1.25/delta))/eps."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def _shape_text(f: dict) -> str:
    return (f"{f['n']} draws fit {f['shape']} (log-likelihood per draw: Laplace "
            f"{f['ll_laplace']:.3f}, Gaussian {f['ll_gauss']:.3f}; excess kurtosis "
            f"{f['excess_kurtosis']:.2f})")


def check_laplace(ctx: Context) -> Cell:
    """Violated when the vote noise is not Laplace of scale 1/lambda (the accountant's
    assumption), or when the labels are perturbed by Gaussian noise instead."""
    tr = ctx.trace
    if tr is None:
        return Cell("laplace_noise", "not_checked", NO_EVENTS)
    gauss = _gaussian_votes(tr)
    if gauss is not None:
        return gauss
    if tr.votes:
        draws = np.concatenate([v[2] for v in tr.votes])
        f = fit_noise(draws)
        if ctx.lam is None:
            return Cell("laplace_noise", "not_checked", f"{_shape_text(f)}; lambda unknown")
        ratio = f["laplace_b"] * ctx.lam
        bad = f["shape"] != "laplace" or abs(ratio - 1.0) > SCALE_TOL
        ev = (f"vote noise: {_shape_text(f)}; Laplace scale {f['laplace_b']:.4g} vs the "
              f"accountant's 1/lambda = {1 / ctx.lam:.4g} (ratio {ratio:.3g})")
        if abs(f["laplace_b"] / ctx.lam - 1) < SCALE_TOL:
            ev += f": the scale is lambda = {ctx.lam:g}, not 1/lambda"
        return cell("laplace_noise", bad, ev)
    drawn = [d for _, _, d in tr.label_noise if d is not None]
    if drawn:
        f = fit_noise(np.concatenate(drawn))
        return cell("laplace_noise", f["shape"] != "laplace",
                    f"label noise (no PATE votes): {_shape_text(f)}, scale: Laplace b "
                    f"{f['laplace_b']:.4g}, sigma {f['gauss_sigma']:.4g}")
    if tr.label_noise:
        return Cell("laplace_noise", "not_checked", "label noise recorded without its draws")
    return Cell("laplace_noise", "not_checked", "no noise was recorded (no Votes or LabelNoise events)")


def _gaussian_votes(tr) -> Cell | None:
    """The noise cell of generators whose votes declare Gaussian noise (GNMax, G-PATE's
    Confident-GNMax): the draws must be Gaussian of the declared sigma, the scale their
    RDP accountant is charged with. None for Laplace votes (the study's PATE-GAN case)."""
    if tr.votes and all(v[5] == "gaussian" for v in tr.votes):
        draws, declared, what = (np.concatenate([v[2] for v in tr.votes]), tr.votes[0][6],
                                 "GNMax vote noise")
    elif tr.gradient_votes and not tr.votes:
        draws, declared, what = (np.concatenate([v[4] for v in tr.gradient_votes]),
                                 tr.gradient_votes[0][5], "Confident-GNMax threshold noise")
    else:
        return None
    if not draws.size:
        return Cell("laplace_noise", "not_checked", f"{what}: no draws recorded")
    f = fit_noise(draws)
    ratio = f["gauss_sigma"] / declared
    bad = f["shape"] != "gaussian" or abs(ratio - 1.0) > SCALE_TOL
    return cell("laplace_noise", bad, f"{what}: {_shape_text(f)}; sigma {f['gauss_sigma']:.4g} "
                f"vs the {declared:.4g} its RDP accountant is charged with (ratio {ratio:.3g})")


def check_delta_scale(ctx: Context) -> Cell:
    """Violated when Gaussian noise is smaller than the Gaussian mechanism needs for (eps, delta)."""
    tr = ctx.trace
    if tr is None:
        return Cell("delta_scale", "not_checked", NO_EVENTS)
    drawn = [d for _, _, d in tr.label_noise if d is not None]
    if not drawn and (tr.gradient_votes or any(v[5] == "gaussian" for v in tr.votes)):
        return Cell("delta_scale", "not_applicable", "Gaussian votes accounted by RDP: delta "
                    "enters the eps conversion (the accountant cell), not a per-query scale")
    if not drawn:
        if tr.votes:
            return Cell("delta_scale", "not_applicable",
                        "Laplace vote noise: its scale does not involve delta")
        return Cell("delta_scale", "not_checked", "no Gaussian noise draws recorded")
    f = fit_noise(np.concatenate(drawn))
    need = gaussian_sigma(ctx.epsilon, ctx.delta)
    ratio = f["gauss_sigma"] / need
    return cell("delta_scale", ratio < 1.0 - SCALE_TOL,
                f"drawn sigma {f['gauss_sigma']:.4g} (declared {tr.label_noise[0][1]:.4g}) vs "
                f"sqrt(2 ln(1.25/delta))/eps = {need:.4g} for eps {ctx.epsilon:g}, delta "
                f"{ctx.delta:g}: ratio {ratio:.3f}")
