"""The label noise of `original` and `turing` (their only privacy mechanism; spec
sections 1, 4): the noise scale each port computes from (eps, delta), bugs included, and
the noisy real/fake labels the critic trains on (:mod:`.gp`, :mod:`.step`).
"""

from __future__ import annotations

import math

import torch

from raudit.errors import ConfigError
from raudit.generators.nn.rng import CounterRNG


def label_noise_sigma(epsilon: float, delta: float, rule: str) -> float:
    """Standard deviation of the label noise.

    ``"xor"`` (original): sqrt(2 ln(1.25 * (10 ^ d))) / eps where ``^`` is Python's
    bitwise XOR and d = int(-log10(delta)) is the integer the study's harness
    passes (delta = 10^-5 -> 10 ^ 5 = 15 -> 2.421/eps).
    ``"power"`` (turing): sqrt(2 ln(1.25 * 10**delta)) / eps, a power where a
    division was meant (delta = 10^-5 -> 0.668/eps).
    ``"correct"``: the Gaussian mechanism's sqrt(2 ln(1.25 / delta)) / eps (4.845/eps).
    """
    if rule == "xor":
        arg = 1.25 * (10 ^ int(-math.log10(delta)))
    elif rule == "power":
        arg = 1.25 * 10 ** delta
    elif rule == "correct":
        arg = 1.25 / delta
    else:
        raise ConfigError(f"unknown sigma rule {rule!r}; use xor, power or correct")
    inner = 2.0 * math.log(arg) if arg > 0 else -math.inf
    if not inner > 0:  # e.g. xor with delta = 1e-10: 10 ^ 10 = 0 and the log is -inf
        raise ConfigError(f"the {rule!r} sigma rule gives no usable noise for delta={delta} "
                          f"(sqrt(2 ln {arg:g})); pick another delta or delta_bug='correct'")
    return math.sqrt(inner) / epsilon


def noisy_labels(rng: CounterRNG, batch: int, sigma: float, noise: str = "gaussian", *,
                 with_noise: bool = False):
    """(M, 2B) 0/1 labels: B real then B fake, each flipped by noise and the 0.5 threshold
    (and the (M, 2B) noise drawn, for the LabelNoise event, when ``with_noise``)."""
    base = torch.cat([torch.ones(batch), torch.zeros(batch)]).to(rng.device, torch.float64)
    if noise == "gaussian":
        z = rng.normal(2 * batch, std=sigma).to(torch.float64)
    else:  # "laplace": the same scale as a Laplace noise (what reprosyn's property name claims)
        z = rng.laplace(2 * batch, scale=sigma)
    labels = ((base + z) > 0.5).to(rng.dtype)
    return (labels, z) if with_noise else labels
