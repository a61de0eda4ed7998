"""PATE vote aggregation: how teacher votes on generated samples become labels.

The paper analyses the noisy argmax over the two classes with one Laplace noise
per class; every public implementation instead adds ONE noise to n1 and
thresholds at k/2. Both are here, with the Laplace scale given explicitly so a
port can reproduce whether it used lambda or 1/lambda.
"""

from __future__ import annotations

from dataclasses import dataclass

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


# -- the data-free control -----------------------------------------------------------
# ``--control coin`` (raudit.utility) replaces every released label by a fair coin while
# the teachers still vote and the accountant is still charged with their votes: the
# iterations, the stopping time and every other draw stay those of the real run, and
# only the information the labels carry is removed. The coins take as many draws from
# the model's stream as the noise they replace, so a control fit keeps the real fit's
# initialisation and z draws (its seed pairs with the real fit's).

def coin_two(n1: torch.Tensor, k: int, rng: CounterRNG, scale: float):
    """Argmax rules (two noises): a fair label per query; no noise is recorded (zeros)."""
    u = rng.uniform(n1.shape[1], 2)
    return u[..., 0] < 0.5, torch.zeros(u.shape, dtype=torch.float64, device=u.device)


def coin_one(n1: torch.Tensor, k: int, rng: CounterRNG, scale: float):
    """Threshold rule (one noise): a fair label per query; no noise is recorded (zeros)."""
    u = rng.uniform(n1.shape[1])
    return u < 0.5, torch.zeros(u.shape, dtype=torch.float64, device=u.device)


COIN_AGGREGATIONS = {"argmax": coin_two, "threshold": coin_one}
CONTROLS = ("coin",)


def aggregator(noise: str, aggregation: str, control: str | None = None):
    """The function that turns votes into labels: the mechanism named by (noise,
    aggregation), or its coin-flip control."""
    if control is not None:
        if control not in CONTROLS:
            raise ValueError(f"unknown control {control!r}; known: {', '.join(CONTROLS)}")
        return COIN_AGGREGATIONS[aggregation]
    return (GAUSSIAN_AGGREGATIONS if noise == "gaussian" else AGGREGATIONS)[aggregation]


@dataclass(frozen=True)
class ConfidentVotes:
    """Confident-GNMax (Papernot et al. 2018), the vote mechanism of ``fixed``'s data-dependent
    runs: threshold T and the two noise scales."""

    threshold: float
    sigma1: float
    sigma2: float


def confident_votes(n1: torch.Tensor, k: int, rng: CounterRNG, spec: ConfidentVotes,
                    control: str | None = None):
    """(labels (M, B), GNMax noise (M, B, 2), threshold noise (M, B), answered (M, B)).

    ``control="coin"``: every query answered with a fair coin (no data-dependent choice of
    which fakes the student sees); the same number of draws as the real rule, so a control
    fit keeps its real fit's other draws."""
    thr_noise = rng.normal(n1.shape[1], std=spec.sigma1).to(torch.float64)
    if control is not None:
        labels, noise = coin_two(n1, k, rng, spec.sigma2)
        return labels, noise, thr_noise, torch.ones_like(labels)
    n1f = n1.to(torch.float64)
    answered = torch.maximum(n1f, k - n1f) + thr_noise >= spec.threshold
    noise = rng.normal(n1.shape[1], 2, std=spec.sigma2).to(torch.float64)
    labels = n1f + noise[..., 1] > (k - n1f) + noise[..., 0]
    return labels, noise, thr_noise, answered
