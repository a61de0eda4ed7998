"""The random streams' splitmix64 hash and its uniforms in numpy, for eager CPU draws.

The same bits as the torch functions of :mod:`raudit.generators.nn.rng` (tests/generators/
test_rng.py compares them draw by draw), in fewer passes over memory: numpy has unsigned 64-bit
integers, so a logical right shift is one pass (torch's int64 ``>>`` is arithmetic and needs a
mask after it), and every pass after the first writes into the same two buffers instead of
allocating a new (M, n) tensor. At M = 128 that is 3x less CPU per hash, and the hash was the
largest single cost of `paper`'s eager step (lab/performance.md). Wrapping uint64 arithmetic
is the uint64 arithmetic splitmix64 is written in; the float conversions are of integers below
2^53 and scalings by powers of two, exact in both libraries.

Little-endian machines only (the 32-bit halves are read through a uint32 view); elsewhere,
and for tensors off the CPU, :mod:`raudit.generators.nn.rng` uses torch.
"""

from __future__ import annotations

import sys

import numpy as np
import torch

USABLE = sys.byteorder == "little"

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)


def hash64(keys: torch.Tensor, pos: torch.Tensor) -> np.ndarray:
    """(M,) int64 stream keys x (n,) int64 positions -> (M, n) uint64 splitmix64 outputs."""
    k = keys.numpy().view(np.uint64)
    p = pos.numpy().view(np.uint64)
    # key + pos*golden, then the mixer's own +golden: folded into the n offsets (mod 2^64)
    x = k[:, None] + (p * _GOLDEN + _GOLDEN)[None, :]
    t = np.empty_like(x)
    for shift, mul in ((30, _MUL1), (27, _MUL2), (31, None)):
        np.right_shift(x, np.uint64(shift), out=t)
        np.bitwise_xor(x, t, out=x)
        if mul is not None:
            np.multiply(x, mul, out=x)
    return x


def bits(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """The hash as int64 (the same bits), like rng._hash."""
    return torch.from_numpy(hash64(keys, pos).view(np.int64))


def unit53(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """U[0, 1), 53 bits, float64 (rng._unit53)."""
    x = hash64(keys, pos)
    np.right_shift(x, np.uint64(11), out=x)
    return torch.from_numpy(np.multiply(x, 2.0**-53, dtype=np.float64))


def open53(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """U(0, 1), 53 bits, float64 (rng._open53): (x + 0.5) rounded in float64, then scaled."""
    x = hash64(keys, pos)
    np.right_shift(x, np.uint64(11), out=x)
    u = np.add(x, 0.5, dtype=np.float64)
    u *= 2.0**-53
    return torch.from_numpy(u)


def _pairs(keys: torch.Tensor, pos: torch.Tensor, shift: int, dtype, scale: float) -> torch.Tensor:
    """(M, 2n): per hash its high 32-bit half then its low half, each shifted right by
    ``shift`` (logically), as ``dtype`` times ``scale``."""
    x = hash64(keys, pos)
    m, n = x.shape
    halves = x.view(np.uint32).reshape(m, n, 2)  # little-endian: [..., 0] low, [..., 1] high
    if shift:
        np.right_shift(halves, np.uint32(shift), out=halves)
    out = np.empty((m, n, 2), dtype=dtype)
    s = dtype(scale)
    np.multiply(halves[..., 1], s, out=out[..., 0], dtype=dtype, casting="unsafe")
    np.multiply(halves[..., 0], s, out=out[..., 1], dtype=dtype, casting="unsafe")
    return torch.from_numpy(out.reshape(m, 2 * n))


def unit32x2(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Two float64 U[0, 1) of 32 bits per hash (rng._unit32x2): bits >> 32, bits & (2^32-1)."""
    return _pairs(keys, pos, 0, np.float64, 2.0**-32)


def unit24x2(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Two float32 U[0, 1) of 24 bits per hash (rng._unit24x2): bits >> 40, (bits >> 8) & (2^24-1)."""
    return _pairs(keys, pos, 8, np.float32, 2.0**-24)
