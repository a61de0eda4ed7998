"""Parameters of G networks stacked along a leading model axis.

All parameters of one network family (say the k teachers of M models, G = M*k)
live in ONE leaf tensor ``flat`` of shape (G, P); named parameters are views
into it. Forward passes use batched matmuls over the model axis, and the
optimiser updates the whole family with a handful of tensor ops, so the cost of
a step hardly depends on G until the arithmetic itself dominates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
import torch.nn.functional as F

from raudit.generators.nn import whole
from raudit.generators.nn.rng import CounterRNG


class Stacked:
    """G stacked copies of a network's parameters (one flat leaf tensor)."""

    def __init__(self, flat: torch.Tensor, layout: Mapping[str, tuple[int, tuple[int, ...]]]):
        self.flat = flat
        self.layout = dict(layout)

    @classmethod
    def create(cls, shapes: Mapping[str, tuple[int, ...]], inits: Mapping[str, torch.Tensor],
               ) -> "Stacked":
        """Pack initial values ``inits[name]`` of shape (G, *shapes[name]) into one leaf."""
        layout, offset = {}, 0
        for name, shape in shapes.items():
            layout[name] = (offset, tuple(shape))
            offset += math.prod(shape)
        g = next(iter(inits.values())).shape[0]
        flat = torch.cat([inits[n].reshape(g, -1) for n in shapes], dim=1)
        return cls(flat.detach().clone().requires_grad_(True), layout)

    @property
    def groups(self) -> int:
        return self.flat.shape[0]

    def __getitem__(self, name: str) -> torch.Tensor:
        offset, shape = self.layout[name]
        return self.flat[:, offset:offset + math.prod(shape)].view(self.groups, *shape)

    def views(self) -> dict[str, torch.Tensor]:
        """All named parameters at once through ONE split, whose backward is one
        concatenation (per-name slicing would allocate a zero (G, P) gradient per name)."""
        sizes = [math.prod(shape) for _, shape in self.layout.values()]
        parts = self.flat.split(sizes, dim=1)
        return {name: part.view(self.groups, *shape)
                for (name, (_, shape)), part in zip(self.layout.items(), parts)}

    def select(self, index: torch.Tensor | slice) -> "Stacked":
        """A detached copy holding only the chosen groups (for sampling)."""
        return Stacked(self.flat.detach()[index].clone(), self.layout)

    def state(self) -> dict[str, torch.Tensor]:
        return {name: self[name].detach().cpu() for name in self.layout}


def xavier_uniform(rng: CounterRNG, fan_in: int, fan_out: int, copies: int = 1) -> torch.Tensor:
    """Glorot-uniform weights of shape (M*copies, fan_in, fan_out)."""
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    w = rng.uniform(copies, fan_in, fan_out) * (2 * bound) - bound
    return w.reshape(-1, fan_in, fan_out)


def he_normal(rng: CounterRNG, fan_in: int, fan_out: int, copies: int = 1) -> torch.Tensor:
    """Normal weights with std 1/sqrt(fan_in/2) (the TF1 ports' `xavier_init`)."""
    w = rng.normal(copies, fan_in, fan_out, std=1.0 / math.sqrt(fan_in / 2.0))
    return w.reshape(-1, fan_in, fan_out)


def constant(rng: CounterRNG, shape: tuple[int, ...], value: float, copies: int = 1) -> torch.Tensor:
    return torch.full((rng.models * copies, *shape), float(value), dtype=rng.dtype, device=rng.device)


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """x (G, B, i) @ w (G, i, o) + b (G, o)."""
    if w.shape[-1] == 1 and x.device.type == "cpu":
        # one output per row (a logistic teacher, a critic's last layer): batched GEMV
        # through bmm is 2-5x slower on CPU, in the forward and far more in the weight
        # gradient, than a product and a sum over the input axis
        out = (x * w.transpose(1, 2)).sum(-1, keepdim=True)
        return out if b is None else out + b.unsqueeze(1)
    if b is None:
        return torch.bmm(x, w)
    return torch.baddbmm(b.unsqueeze(1), x, w)


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last axis with per-model affine parameters (G, o).

    F.layer_norm's own epsilon is torch.nn.LayerNorm's default, the one the upstream
    code's LayerNorm layers use.
    """
    x = F.layer_norm(x, x.shape[-1:])
    return torch.addcmul(beta.unsqueeze(1), x, gamma.unsqueeze(1))  # one pass, not two


ACTIVATIONS = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "sigmoid": whole.sigmoid,  # whole SIMD blocks: the same bits in any chunk (nn/whole.py)
    "linear": lambda x: x,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
}


class MLP:
    """A plain stacked MLP: widths [in, h1, ..., out] and one activation per layer."""

    def __init__(self, widths: list[int], activations: list[str], *, bias: float = 0.0,
                 init: str = "xavier_uniform"):
        if len(activations) != len(widths) - 1:
            raise ValueError("need one activation per layer")
        self.widths, self.activations, self.bias, self.init = list(widths), list(activations), bias, init

    def shapes(self) -> dict[str, tuple[int, ...]]:
        out: dict[str, tuple[int, ...]] = {}
        for i, (a, b) in enumerate(zip(self.widths, self.widths[1:])):
            out[f"w{i}"], out[f"b{i}"] = (a, b), (b,)
        return out

    def create(self, rng: CounterRNG, copies: int = 1) -> Stacked:
        init = {"xavier_uniform": xavier_uniform, "he_normal": he_normal}[self.init]
        inits = {}
        for i, (a, b) in enumerate(zip(self.widths, self.widths[1:])):
            inits[f"w{i}"] = init(rng, a, b, copies)
            inits[f"b{i}"] = constant(rng, (b,), self.bias, copies)
        return Stacked.create(self.shapes(), inits)

    def __call__(self, p: Stacked, x: torch.Tensor, *, logits: bool = False,
                 shared: int = 1) -> torch.Tensor:
        """Forward pass; ``logits=True`` skips the last activation (for stable BCE).

        ``shared=k``: ``p`` holds k networks per input batch (G = M*k) and ``x``
        is (M, B, in), one batch fed to all k; the first layer then runs as one
        (M, B, in) @ (M, in, k*out) product instead of copying x k times.
        """
        v = p.views()
        last = len(self.activations) - 1
        for i, act in enumerate(self.activations):
            w, b = v[f"w{i}"], v[f"b{i}"]
            if i == 0 and shared > 1:
                g, n_in, n_out = w.shape
                m = g // shared
                w = w.view(m, shared, n_in, n_out).permute(0, 2, 1, 3).reshape(m, n_in, shared * n_out)
                x = linear(x, w, b.reshape(m, shared * n_out))  # b is a strided slice of flat
                # contiguous for every m: at m = 1 reshape would return a strided view
                # (m > 1 copies), and the sums over its rows in the backward then run
                # over other strides, rounding otherwise: a model alone got other bits
                x = x.view(m, x.shape[1], shared, n_out).permute(0, 2, 1, 3).contiguous() \
                    .view(g, -1, n_out)
            else:
                x = linear(x, w, b)
            if not (logits and i == last):
                x = ACTIVATIONS[act](x)
        return x
