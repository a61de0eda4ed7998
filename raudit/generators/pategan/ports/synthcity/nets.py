"""synthcity's GAN networks (``plugins/core/models/mlp.py``, ``layers.py``, v0.2.10), batched.

Generator (``residual=True``, 2 hidden layers of 100, ReLU): every hidden block
concatenates its input to its output (``SkipConnection``), so the widths grow:
in -> [100 | in] -> [100 + in | 100 + in] -> D. The output head is identity on the BGM
scalars and ``softmax`` on every one-hot block, which synthcity's activation factory
maps to ``GumbelSoftmax(tau=0.2, hard=False)``: a Gumbel-perturbed softmax at
temperature 0.2 (stochastic, also at sampling time), not a plain softmax.

Critic: in -> 100 (LeakyReLU, slope 0.01, torch's default) -> dropout 0.1 -> 100
(LeakyReLU) -> 1 (linear). The critic is never put in eval mode upstream, so dropout
is active in every forward pass (critic, gradient penalty and generator steps).

Init: torch's default ``nn.Linear`` init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
weights and biases. All parameters float32 (``X.float()`` upstream).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked, linear


def _torch_default(rng: CounterRNG, fan_in: int, shape: tuple[int, ...]) -> torch.Tensor:
    bound = 1.0 / math.sqrt(fan_in)
    return rng.uniform(*shape) * (2 * bound) - bound


def _create(rng: CounterRNG, widths: list[tuple[int, int]]) -> Stacked:
    shapes, inits = {}, {}
    for i, (a, b) in enumerate(widths):
        shapes[f"w{i}"], shapes[f"b{i}"] = (a, b), (b,)
        inits[f"w{i}"] = _torch_default(rng, a, (a, b))
        inits[f"b{i}"] = _torch_default(rng, a, (b,))
    return Stacked.create(shapes, inits)


class SkipGenerator:
    def __init__(self, n_in: int, n_out: int, softmax_blocks: list[tuple[int, int]],
                 hidden: int = 100, tau: float = 0.2):
        h1 = hidden + n_in
        self.widths = [(n_in, hidden), (h1, h1), (2 * h1, n_out)]
        self.blocks, self.tau, self.n_out = softmax_blocks, tau, n_out
        # The heads by width: one softmax over all blocks of a width (rows of w columns,
        # each the same arithmetic as its block's own softmax) instead of one per block,
        # whose slices each cost a full-width zero gradient in the backward (a cervical
        # table has 29 blocks of 6 widths). ``order`` puts the columns back in place.
        widths = sorted({w for _, w in softmax_blocks})
        in_block = {c for o, w in softmax_blocks for c in range(o, o + w)}
        self.plain = torch.tensor([c for c in range(n_out) if c not in in_block], dtype=torch.long)
        self.heads = [(w, torch.tensor([c for o, ww in softmax_blocks if ww == w for c in range(o, o + w)],
                                       dtype=torch.long)) for w in widths]
        gathered = torch.cat([self.plain, *(cols for _, cols in self.heads)])
        self.order = torch.argsort(gathered)

    def create(self, rng: CounterRNG) -> Stacked:
        return _create(rng, self.widths)

    def __call__(self, p: Stacked, x: torch.Tensor, rng: CounterRNG) -> torch.Tensor:
        v = p.views()
        h = torch.cat([torch.relu(linear(x, v["w0"], v["b0"])), x], dim=-1)
        h = torch.cat([torch.relu(linear(h, v["w1"], v["b1"])), h], dim=-1)
        out = linear(h, v["w2"], v["b2"])
        if not self.blocks:
            return out
        # torch's gumbel_softmax: g = -log(E), E ~ Exp(1) = -log(U)
        u = rng.open_uniform(x.shape[1], self.n_out, bits=32)  # latent noise: 32 bits, half the hashing
        gumbel = -torch.log(-torch.log(u)).to(out.dtype)
        dev = out.device
        logits = (out + gumbel) / self.tau  # element-wise: each column's own value
        parts = [out.index_select(-1, self.plain.to(dev))]
        for w, cols in self.heads:
            x = logits.index_select(-1, cols.to(dev))
            parts.append(F.softmax(x.view(*x.shape[:-1], -1, w), dim=-1).view(x.shape))
        return torch.cat(parts, dim=-1).index_select(-1, self.order.to(dev))


class DropoutCritic:
    def __init__(self, n_in: int, hidden: int = 100, dropout: float = 0.1, slope: float = 0.01):
        self.widths = [(n_in, hidden), (hidden, hidden), (hidden, 1)]
        self.hidden, self.dropout, self.slope = hidden, dropout, slope

    def create(self, rng: CounterRNG) -> Stacked:
        return _create(rng, self.widths)

    def __call__(self, p: Stacked, x: torch.Tensor, rng: CounterRNG) -> torch.Tensor:
        v = p.views()
        h = F.leaky_relu(linear(x, v["w0"], v["b0"]), self.slope)
        keep = (rng.uniform(x.shape[1], self.hidden) >= self.dropout).to(h.dtype)
        h = h * keep / (1.0 - self.dropout)
        h = F.leaky_relu(linear(h, v["w1"], v["b1"]), self.slope)
        return linear(h, v["w2"], v["b2"]).squeeze(-1)  # (M, B)
