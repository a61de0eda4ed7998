"""DPGradAgg: G-PATE's private aggregation of teacher gradients, batched over models.

For every generated record of every model, the k teachers' gradients (d values each)
are aggregated as in the reference code (``gradient_voting_rdp`` with a random
projection):

1. a FRESH Gaussian random projection per record, entries N(0, 1/k_proj) (what
   scikit-learn's ``GaussianRandomProjection`` draws), d -> k_proj dimensions;
2. each projected coordinate clipped to [-c, c];
3. discretised into B bins of width 2c/B (np.histogram's bins: the last one closed);
4. Confident-GNMax per coordinate on the B-bin vote histogram: if
   max(counts) + N(0, sigma1^2) >= T, answer the midpoint of argmax(counts + N(0, sigma2^2)),
   else 0;
5. back-projection of the k_proj answers with P^T.

``AggConfig(control="coin")`` is the utility benchmark's data-free control: step 4
answers a uniform random bin instead of the noisy argmax.

All noise comes from one counter-based stream per model, so model m aggregates the
same way alone or in a batch. The vote histograms and the answered flags are returned
for the accountant (the data-dependent bound needs the votes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from raudit.generators.nn.rng import CounterRNG


@dataclass(frozen=True)
class AggConfig:
    k_proj: int = 5
    clip: float = 1e-4  # c, the reference code's step_size
    bins: int = 10  # B
    threshold: float = 1.0  # T in votes
    sigma1: float = 1.0  # threshold noise
    sigma2: float = 1.0  # GNMax noise
    projection: str = "random"  # random (fresh per record) | none (aggregate the d coordinates)
    control: str | None = None  # "coin": each answered coordinate gets a uniform random bin


@dataclass
class Aggregated:
    grad: torch.Tensor  # (M, B, d) aggregated gradient per record
    counts: torch.Tensor  # (M, B, q, bins) int64 votes per coordinate
    answered: torch.Tensor  # (M, B, q) bool
    choice: torch.Tensor  # (M, B, q) int64 answered bin, -1 where not answered
    thresh_noise: torch.Tensor  # (M, B, q)
    values: torch.Tensor  # (M, k, B, q) each teacher's projected gradient, before clipping


def projection(rng: CounterRNG, records: int, d: int, k_proj: int) -> torch.Tensor:
    """(M, records, d, k_proj) Gaussian projections with entries N(0, 1/k_proj)."""
    return rng.normal(records, d, k_proj, std=1.0 / math.sqrt(k_proj))


def bin_edges(clip: float, bins: int) -> torch.Tensor:
    """The reference code's edges, np.arange(-c, c, 2c/B) then c, in float64."""
    edges = np.hstack([np.arange(-clip, clip, clip * 2 / bins), clip])
    if edges.size != bins + 1:  # np.arange's float rounding can add a sliver bin
        edges = np.linspace(-clip, clip, bins + 1)
    return torch.as_tensor(edges, dtype=torch.float64)


def vote_counts(values: torch.Tensor, clip: float, bins: int) -> torch.Tensor:
    """Histogram over the teacher axis: values (M, k, B, q) -> counts (M, B, q, bins).

    Values are clipped to [-c, c]; bin i is [edge_i, edge_i+1), the last one also takes c
    itself (np.histogram's rule, on the same floating-point edges).
    """
    v = values.to(torch.float64).clamp(-clip, clip).contiguous()
    edges = bin_edges(clip, bins).to(v.device)
    idx = (torch.bucketize(v, edges, right=True) - 1).clamp_(0, bins - 1)
    onehot = torch.nn.functional.one_hot(idx, bins)  # (M, k, B, q, bins)
    return onehot.sum(dim=1)


def aggregate(grads: torch.Tensor, cfg: AggConfig, rng: CounterRNG) -> Aggregated:
    """Aggregate teacher gradients ``grads`` (M, k, B, d) into one gradient per record.

    ``rng`` is the aggregation stream (float64); its draws per call are, in order, the
    projections (if any), the threshold noise and the GNMax noise.
    """
    m, _, b, d = grads.shape
    if cfg.projection == "random":
        proj = projection(rng, b, d, cfg.k_proj).to(grads.dtype)  # (M, B, d, q)
        values = torch.einsum("mkbd,mbdq->mkbq", grads, proj)
    else:
        proj, values = None, grads
    q = values.shape[-1]
    counts = vote_counts(values, cfg.clip, cfg.bins)
    top = counts.max(dim=-1).values.to(torch.float64)
    thresh_noise = rng.normal(b, q, std=cfg.sigma1).to(torch.float64)
    answered = top + thresh_noise >= cfg.threshold
    if cfg.control == "coin":
        # the data-free control: the answer is a uniform bin (the argmax of iid uniforms,
        # as many draws as the GNMax noise it replaces); which coordinates are answered,
        # and so what is charged, stays the real run's
        choice = rng.uniform(b, q, cfg.bins).argmax(dim=-1)
    else:
        noisy = counts.to(torch.float64) + rng.normal(b, q, cfg.bins, std=cfg.sigma2).to(torch.float64)
        choice = noisy.argmax(dim=-1)
    edges = bin_edges(cfg.clip, cfg.bins).to(choice.device)
    mid = (edges[choice] + edges[choice + 1]) / 2
    res = torch.where(answered, mid, torch.zeros_like(mid)).to(grads.dtype)  # (M, B, q)
    if proj is not None:
        grad = torch.einsum("mbq,mbdq->mbd", res, proj)
    else:
        grad = res
    return Aggregated(grad, counts, answered, torch.where(answered, choice, -1), thresh_noise,
                      values)
