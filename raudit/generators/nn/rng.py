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

Cost: each number is a dozen element-wise integer passes in eager torch, which made
the RNG the largest single cost of the float64 ports (smartnoise draws 20,480
normals per model per teacher round). Two things keep it cheap: normals use BOTH
Box-Muller outputs (one 53-bit uniform per normal, not two), float32 uniforms take
two 24-bit numbers from each 64-bit hash, and the position arithmetic is done once
per draw on n numbers, not on M x n. The hash and the uniforms are compiled into one loop
each where a C++ compiler is present and RAUDIT_COMPILE asks for it (bit-exact: see
:mod:`raudit.generators.nn.compiled`); eager on CPU they run in one C loop where raudit's
native kernels are built (:mod:`raudit.generators.nn.native`), else in numpy's uint64
arithmetic (:mod:`raudit.generators.nn.hash_np`), the same bits in fewer passes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import torch

from raudit.generators.nn import hash_np, native
from raudit.generators.nn.compiled import enabled, kernel

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


def _hash(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """(M,) stream keys x (n,) stream positions -> (M, n) splitmix64 outputs."""
    return _mix(keys[:, None] + pos[None, :] * _signed(_GOLDEN))


def _unit53(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """U[0, 1) with 53 random bits (float64)."""
    return _srl(_hash(keys, pos), 11).to(torch.float64) * 2.0**-53


def _open53(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """U(0, 1) with 53 random bits, never 0 or 1 (float64)."""
    return (_srl(_hash(keys, pos), 11).to(torch.float64) + 0.5) * 2.0**-53


def _unit32x2(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Two float64 U[0, 1) with 32 bits each per hash: (M, n) hashes -> (M, 2n), pairs adjacent."""
    bits = _hash(keys, pos)
    u = torch.stack([_srl(bits, 32), bits & 0xFFFFFFFF], dim=-1)
    return u.reshape(keys.shape[0], -1).to(torch.float64) * 2.0**-32


def _unit24x2(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Two float32 U[0, 1) with 24 bits each per hash: (M, n) hashes -> (M, 2n), pairs adjacent."""
    bits = _hash(keys, pos)
    u = torch.stack([_srl(bits, 40), (bits >> 8) & 0xFFFFFF], dim=-1)
    return u.reshape(keys.shape[0], -1).to(torch.float32) * 2.0**-24


def _fastest(fn, numpy_fn):
    """``fn`` compiled where RAUDIT_COMPILE allows (raudit.generators.nn.compiled): integer
    arithmetic, and integers below 2^53 scaled by powers of two, give the same bits. Eager on
    CPU, raudit's C kernel (:mod:`raudit.generators.nn.native`, one pass) where it is built,
    else the numpy version of :mod:`raudit.generators.nn.hash_np` (the same bits, ~3x less CPU
    than torch); ``.eager`` is the torch reference."""
    compiled = kernel(fn)

    def run(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        if keys.device.type == "cpu" and hash_np.USABLE and not enabled():
            return (_native_kernel(fn.__name__) or numpy_fn)(keys, pos)
        return compiled(keys, pos)

    run.eager = fn
    return run


@lru_cache(maxsize=None)
def _native_kernel(torch_name: str):
    """The C version of the torch kernel named so (raudit.generators.nn.native: one pass), or
    None where it is not built."""
    name, dtype, pairs = {"_hash": ("bits", torch.int64, False),
                          "_unit53": ("unit53", torch.float64, False),
                          "_open53": ("open53", torch.float64, False),
                          "_unit32x2": ("unit32x2", torch.float64, True),
                          "_unit24x2": ("unit24x2", torch.float32, True)}[torch_name]
    return native.hash_kernel(name, dtype, pairs)


_unit53, _open53, _unit32x2, _unit24x2, _hash_kernel = (
    _fastest(f, g) for f, g in ((_unit53, hash_np.unit53), (_open53, hash_np.open53),
                                (_unit32x2, hash_np.unit32x2), (_unit24x2, hash_np.unit24x2),
                                (_hash, hash_np.bits)))


def _box_muller(u: torch.Tensor) -> torch.Tensor:
    """(M, 2h) open uniforms -> (M, 2h) N(0, 1), both outputs of each pair used: the first
    h columns give the radii, the last h the angles; z = (r cos, r sin). Eager on purpose:
    compiled transcendental functions need not round like ATen's."""
    h = u.shape[1] // 2
    r = torch.sqrt(-2.0 * torch.log(u[:, :h]))
    theta = (2.0 * math.pi) * u[:, h:]
    return torch.cat([r * torch.cos(theta), r * torch.sin(theta)], dim=1)


class CounterRNG:
    """Independent random streams for M models; every method returns (M, *shape).

    The hashing kernels are class attributes so that a subclass can draw the same numbers
    through other code (the fused training step traces the torch reference ones)."""

    _unit53, _open53, _unit32x2, _unit24x2, _hash_kernel = (
        staticmethod(f) for f in (_unit53, _open53, _unit32x2, _unit24x2, _hash_kernel))

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

    def part(self, lo: int, hi: int) -> "CounterRNG":
        """The streams of models lo..hi-1 at this counter: each draws from it what it would
        draw from the whole. The caller moves this counter on (``counter = part.counter``)."""
        sub = object.__new__(CounterRNG)
        sub.device, sub.dtype, sub.counter = self.device, self.dtype, self.counter
        sub.keys = self.keys[lo:hi]
        return sub

    def keep(self, index: torch.Tensor) -> None:
        """Keep only the streams of models ``index`` (in place; the counter is shared, so
        each kept model goes on drawing what it would have drawn beside the others)."""
        self.keys = self.keys[index]

    def _positions(self, n: int) -> torch.Tensor:
        """The stream positions of the next draw of n numbers (then the counter moves on)."""
        if n >= 1 << 32:
            raise ValueError("one draw is limited to 2**32 values per model")
        base = _signed(self.counter << 32)
        self.counter += 1
        return torch.arange(n, dtype=torch.int64, device=self.device) + base

    def _bits(self, shape: tuple[int, ...]) -> torch.Tensor:
        return self._hash_kernel(self.keys, self._positions(math.prod(shape))).view(self.models, *shape)

    def _paired(self, unit_pairs, n: int) -> torch.Tensor:
        """(M, n) numbers from a kernel giving two per hash (ceil(n/2) hashes, the last
        second half dropped when n is odd)."""
        return unit_pairs(self.keys, self._positions((n + 1) // 2))[:, :n]

    def uniform(self, *shape: int, bits: int = 53) -> torch.Tensor:
        """U[0, 1) in the stream's dtype: 53 random bits in float64 streams; in float32
        streams each 64-bit hash gives two 24-bit uniforms (halves the hashing on the hot
        path). ``bits=32`` (latent noise, never privacy noise) also gives float64 streams
        two 32-bit uniforms per hash."""
        n = math.prod(shape)
        if self.dtype == torch.float64 and bits == 32:
            return self._paired(self._unit32x2, n).reshape(self.models, *shape)
        if self.dtype == torch.float64:
            return self._unit53(self.keys, self._positions(n)).view(self.models, *shape)
        return self._paired(self._unit24x2, n).reshape(self.models, *shape)

    def open_uniform(self, *shape: int, bits: int = 53) -> torch.Tensor:
        """U(0, 1), never 0 or 1 (for logarithms), in float64. ``bits=32`` (latent noise such
        as Gumbel draws, never privacy noise): two per hash, on the grid (i + 0.5) 2^-32."""
        n = math.prod(shape)
        if bits == 32:
            return (self._paired(self._unit32x2, n) + 2.0**-33).reshape(self.models, *shape)
        return self._open53(self.keys, self._positions(n)).view(self.models, *shape)

    def uniform_range(self, low: float, high: float, *shape: int) -> torch.Tensor:
        return (low + (high - low) * self.open_uniform(*shape)).to(self.dtype)

    def normal(self, *shape: int, std: float = 1.0) -> torch.Tensor:
        """N(0, std^2) by Box-Muller in float64, using both outputs of each pair."""
        n = math.prod(shape)
        z = _box_muller(self._open53(self.keys, self._positions(2 * ((n + 1) // 2))))
        return (std * z[:, :n]).reshape(self.models, *shape).to(self.dtype)

    def laplace(self, *shape: int, scale: float = 1.0) -> torch.Tensor:
        """Lap(0, scale) by inverting the CDF (float64: scales here reach 1e4)."""
        v = self.open_uniform(*shape) - 0.5
        return -scale * torch.sign(v) * torch.log1p(-2.0 * v.abs())

    def integers(self, high: torch.Tensor, *shape: int) -> torch.Tensor:
        """Uniform integers in [0, high) where ``high`` broadcasts against (M, *shape)."""
        u = self._unit53(self.keys, self._positions(math.prod(shape))).view(self.models, *shape)
        return torch.floor(u * high.to(torch.float64)).to(torch.int64)

    def permutation(self, n: int, valid: torch.Tensor | None = None) -> torch.Tensor:
        """A random permutation of range(n) per model; rows >= valid[m] sort last."""
        keys = self.open_uniform(n)
        if valid is not None:
            rows = torch.arange(n, device=self.device)[None, :]
            keys = torch.where(rows < valid[:, None], keys, keys + 2.0)
        return torch.argsort(keys, dim=1, stable=True)
