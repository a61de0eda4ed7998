"""What the GAN baselines (``gan``, ``dpgan``) share: the paper's generator, batched
row sampling and the end of a run."""

from __future__ import annotations

from collections.abc import Callable

import torch

from raudit.generators.batch_types import Critic, Trained
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked


def paper_generator(d: int) -> MLP:
    """The PATE-GAN paper's generator: widths {d, d/2, d}, ReLU hidden, sigmoid output."""
    return MLP([d, d, max(1, d // 2), d], ["relu", "relu", "sigmoid"])


def paper_discriminator(d: int, output: str = "sigmoid") -> MLP:
    """The paper's student/discriminator: depth 3, widths {d, d, 1}."""
    return MLP([d, d, d, 1], ["relu", "relu", output])


def gather_rows(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Rows ``idx`` (M, B) of each model's table ``x`` (M, N, d) -> (M, B, d)."""
    return torch.gather(x, 1, idx[..., None].expand(-1, -1, x.shape[2]))


def uniform_rows(rng: CounterRNG, rows: torch.Tensor, b: int) -> torch.Tensor:
    """B row ids per model drawn uniformly with replacement from its valid rows."""
    return rng.integers(rows[:, None], b)


def poisson_rows(rng: CounterRNG, rows: torch.Tensor, n_max: int, rate: float):
    """Poisson sampling: every valid row enters independently with probability ``rate``.

    Returns row ids (M, B_max) and a mask (M, B_max) of the rows drawn (B_max: the
    largest batch of the M models; nothing is truncated, as the analysis requires).
    """
    valid = torch.arange(n_max, device=rows.device)[None, :] < rows[:, None]
    take = (rng.uniform(n_max) < rate) & valid
    count = take.sum(1)
    b_max = max(1, int(count.max()))
    order = torch.argsort((~take).to(torch.int8), dim=1, stable=True)[:, :b_max]
    mask = torch.arange(b_max, device=rows.device)[None, :] < count[:, None]
    return order, mask


def finish(gen: Stacked, net: MLP | Callable[[Stacked, torch.Tensor], torch.Tensor], z_dim: int,
           iters: list[int], eps_hat: list[float], critic: Critic | None = None) -> Trained:
    """Wrap a trained generator ``net(p, z)``; z ~ U[0, 1)^z_dim at sampling as in training.
    ``critic``: the trained discriminator (for the white-box threat model)."""
    def sample_fn(p: Stacked, rng: CounterRNG, n: int) -> torch.Tensor:
        return net(p, rng.uniform(n, z_dim))
    return Trained(gen, sample_fn, iters, eps_hat, critic=critic)


def critic_of(net: MLP, params: Stacked) -> Critic:
    """A discriminator ``net`` with its trained ``params`` as the white-box critic (logits)."""
    return Critic(params, lambda p, x: net(p, x, logits=True))

