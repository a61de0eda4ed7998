"""Counter-based random streams, one per model, computed in one vectorised call.

The batched engine trains M models at once, and model m must get the same
random numbers whether it trains alone or beside 127 others. A stateful
``torch.Generator`` per model would need M calls per draw (slow, and worse on
GPU). Instead every number is a hash of (model key, draw counter, element
index): element i of draw c for model m is splitmix64 at position
``c * 2**32 + i`` of the stream seeded by ``key[m]``. Splitmix64 is the
generator Java's SplittableRandom uses; it passes BigCrush.

All models make the same sequence of draws (the batched loops are in lockstep),
so the counter is shared; models that stopped still draw but ignore the values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MUL1 = 0xBF58476D1CE4E5B9
_MUL2 = 0x94D049BB133111EB


def _signed(x: int) -> int:
    """A uint64 as the int64 with the same bits (torch has no uint64 arithmetic)."""
    x &= _MASK64
    return x - (1 << 64) if x >= 1 << 63 else x


def splitmix64(x: int) -> int:
    """Reference scalar splitmix64 finaliser on Python ints (used for keys and tests)."""
    z = (x + _GOLDEN) & _MASK64
    z = ((z ^ (z >> 30)) * _MUL1) & _MASK64
    z = ((z ^ (z >> 27)) * _MUL2) & _MASK64
    return z ^ (z >> 31)


def stream_key(seed: int, purpose: str = "fit") -> int:
    """A 64-bit stream key from a user seed and what the stream is for."""
    salt = sum((i + 1) * b for i, b in enumerate(purpose.encode())) * _GOLDEN
    return splitmix64((int(seed) * _GOLDEN + salt) & _MASK64)


def _srl(x: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 bits (torch's >> is arithmetic)."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    # int64 multiplication wraps modulo 2**64 on CPU and CUDA, as uint64 would
    x = x + _signed(_GOLDEN)
    x = (x ^ _srl(x, 30)) * _signed(_MUL1)
    x = (x ^ _srl(x, 27)) * _signed(_MUL2)
    return x ^ _srl(x, 31)


class CounterRNG:
    """Independent random streams for M models; every method returns (M, *shape)."""

    def __init__(self, seeds: Sequence[int], *, purpose: str = "fit",
                 device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32):
        self.device = torch.device(device)
        self.dtype = dtype
        keys = [_signed(stream_key(s, purpose)) for s in seeds]
        self.keys = torch.tensor(keys, dtype=torch.int64, device=self.device)
        self.counter = 0

    @property
    def models(self) -> int:
        return self.keys.shape[0]

    def _bits(self, shape: tuple[int, ...]) -> torch.Tensor:
        n = math.prod(shape)
        if n >= 1 << 32:
            raise ValueError("one draw is limited to 2**32 values per model")
        base = _signed(self.counter << 32)
        self.counter += 1
        pos = torch.arange(n, dtype=torch.int64, device=self.device) + base
        x = _mix(self.keys[:, None] + pos[None, :] * _signed(_GOLDEN))
        return x.view(self.models, *shape)

    def uniform(self, *shape: int) -> torch.Tensor:
        """U[0, 1): 53 random bits in float64 streams; in float32 streams each 64-bit
        hash gives two 24-bit uniforms (halves the hashing on the hot path)."""
        if self.dtype == torch.float64:
            return _srl(self._bits(shape), 11).to(torch.float64) * 2.0**-53
        n = math.prod(shape)
        bits = self._bits(((n + 1) // 2,))
        hi, lo = _srl(bits, 40), (bits >> 8) & 0xFFFFFF
        u = torch.stack([hi, lo], dim=-1).view(self.models, -1)[:, :n]
        return (u.to(torch.float32) * 2.0**-24).view(self.models, *shape)

    def open_uniform(self, *shape: int) -> torch.Tensor:
        """U(0, 1), never 0 or 1 (for logarithms), in float64."""
        return (_srl(self._bits(shape), 11).to(torch.float64) + 0.5) * 2.0**-53

    def uniform_range(self, low: float, high: float, *shape: int) -> torch.Tensor:
        return (low + (high - low) * self.open_uniform(*shape)).to(self.dtype)

    def normal(self, *shape: int, std: float = 1.0) -> torch.Tensor:
        """N(0, std^2) by Box-Muller."""
        u1, u2 = self.open_uniform(*shape), self.open_uniform(*shape)
        z = torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(2.0 * math.pi * u2)
        return (std * z).to(self.dtype)

    def laplace(self, *shape: int, scale: float = 1.0) -> torch.Tensor:
        """Lap(0, scale) by inverting the CDF (float64: scales here reach 1e4)."""
        v = self.open_uniform(*shape) - 0.5
        return -scale * torch.sign(v) * torch.log1p(-2.0 * v.abs())

    def integers(self, high: torch.Tensor, *shape: int) -> torch.Tensor:
        """Uniform integers in [0, high) where ``high`` broadcasts against (M, *shape)."""
        u = _srl(self._bits(shape), 11).to(torch.float64) * 2.0**-53
        return torch.floor(u * high.to(torch.float64)).to(torch.int64)

    def permutation(self, n: int, valid: torch.Tensor | None = None) -> torch.Tensor:
        """A random permutation of range(n) per model; rows >= valid[m] sort last."""
        keys = self.open_uniform(n)
        if valid is not None:
            rows = torch.arange(n, device=self.device)[None, :]
            keys = torch.where(rows < valid[:, None], keys, keys + 2.0)
        return torch.argsort(keys, dim=1, stable=True)
