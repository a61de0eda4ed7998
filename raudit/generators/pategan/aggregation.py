"""PATE vote aggregation: how teacher votes on generated samples become labels.

The paper analyses the noisy argmax over the two classes with one Laplace noise
per class; every public implementation instead adds ONE noise to n1 and
thresholds at k/2. Both are here, with the Laplace scale given explicitly so a
port can reproduce whether it used lambda or 1/lambda.
"""

from __future__ import annotations

import torch

from raudit.generators.nn.rng import CounterRNG


def laplace_scale(lam: float, convention: str) -> float:
    """The Laplace scale b for noise parameter lambda: "inverse" -> 1/lambda, "direct" -> lambda."""
    if convention == "inverse":
        return 1.0 / lam
    if convention == "direct":
        return lam
    raise ValueError(f"unknown noise-scale convention {convention!r}; use inverse or direct")


def noisy_argmax(n1: torch.Tensor, k: int, rng: CounterRNG, scale: float):
    """r = argmax_j (n_j + Y_j), Y_j iid Lap(scale): labels (M, B) and noise (M, B, 2)."""
    noise = rng.laplace(n1.shape[1], 2, scale=scale)
    n1f = n1.to(noise.dtype)
    labels = (n1f + noise[..., 1] > (k - n1f) + noise[..., 0])
    return labels, noise


def noisy_threshold(n1: torch.Tensor, k: int, rng: CounterRNG, scale: float):
    """r = [n1 + Y > k/2], one Y ~ Lap(scale): labels (M, B) and noise (M, B)."""
    noise = rng.laplace(n1.shape[1], scale=scale)
    labels = n1.to(noise.dtype) + noise > k / 2.0
    return labels, noise


def gaussian_argmax(n1: torch.Tensor, k: int, rng: CounterRNG, scale: float):
    """GNMax: r = argmax_j (n_j + N(0, scale^2)), one noise per class (``fixed``): labels and noise (M, B, 2)."""
    noise = rng.normal(n1.shape[1], 2, std=scale).to(torch.float64)
    n1f = n1.to(noise.dtype)
    labels = (n1f + noise[..., 1] > (k - n1f) + noise[..., 0])
    return labels, noise


AGGREGATIONS = {"argmax": noisy_argmax, "threshold": noisy_threshold}
GAUSSIAN_AGGREGATIONS = {"argmax": gaussian_argmax}
