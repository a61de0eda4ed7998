"""DP-SGD on stacked networks: per-sample gradients of M models at once, clipped and noised.

The stacked-weights trick: the critic's (M, P) parameters are repeated B times into an
(M*B, P) leaf, and every sample runs through its own copy (a batched matmul over M*B
groups of one row), so one backward pass leaves sample i's gradient in row i. Each
is clipped to L2 norm C, the clipped gradients of a model are summed, N(0, (z C)^2)
is added per coordinate and the sum divided by the EXPECTED batch size q N (the
Poisson-sampling estimator whose sensitivity is C / (q N) under add/remove).
"""

from __future__ import annotations

import torch

from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked


def per_sample_grads(net: MLP, params: Stacked, x: torch.Tensor, mask: torch.Tensor,
                     loss_of) -> torch.Tensor:
    """Gradients (M, B, P) of ``loss_of(net output)`` for each sample of ``x`` (M, B, d);
    rows where ``mask`` is False get a zero gradient."""
    m, b, d = x.shape
    rep = params.flat.detach().repeat_interleave(b, dim=0).requires_grad_(True)
    out = net(Stacked(rep, params.layout), x.reshape(m * b, 1, d), logits=True)  # (M*B, 1, 1)
    loss = (loss_of(out.reshape(m, b)) * mask.to(out.dtype)).sum()
    (grad,) = torch.autograd.grad(loss, rep)
    return grad.view(m, b, -1)


def privatise(grads: torch.Tensor, clip: float, noise_multiplier: float, expected_batch: float,
              rng: CounterRNG) -> tuple[torch.Tensor, torch.Tensor]:
    """(sum_i clip(g_i) + N(0, (z C)^2 I)) / (q N) per model, and the per-sample norms."""
    norms = grads.norm(dim=2)
    scale = torch.clamp(clip / (norms + 1e-12), max=1.0)
    total = (grads * scale[..., None]).sum(1)
    noise = rng.normal(total.shape[1], std=noise_multiplier * clip).to(total.dtype)
    return (total + noise) / expected_batch, norms
