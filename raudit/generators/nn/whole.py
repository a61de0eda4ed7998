"""Element-wise functions computed on whole SIMD blocks, so that a model's bits do not
depend on the chunk it trains in.

ATen's vectorised element-wise kernels compute a contiguous tensor in blocks of
2 x SIMD width and the last ``numel % (2 x width)`` elements in a scalar loop, and for
some functions the scalar code rounds differently (measured under AVX-512 on 2^20 random
inputs, float32 and float64: ``sigmoid``, ``softplus`` and their backward kernels, also
elu/gelu/silu/selu/mish; not tanh, exp, log, log1p, sin, cos, sqrt, pow, ReLU, leaky
ReLU). Over a chunk's stacked (M, ...) tensors those last elements
belong to the last model, and whether a model is last, and how many of its elements the
remainder holds, depends on M: so the same model got other bits in a chunk of 3 than in
a chunk of 4 or alone (lab/performance.md, "Chunk invariance").

:func:`whole` runs ``fn`` on the largest prefix of whole blocks in place and on the rest
through one zero-padded block, so every element takes the vector path. Where the tensor
already is whole blocks (the default batch sizes) it is ``fn(x)`` itself: same bits, no
cost. The same device as the fused Adam's fix (nn/optim.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import torch
import torch.nn.functional as F

# 2 x AVX-512 width in float32 elements; a multiple of every block ATen uses on x86
# (AVX2 float32 16, AVX-512 float64 16, AVX2 float64 8)
BLOCK = 32
# per dtype: a per-model batch of this many rows makes every stacked (M, B, ...) tensor
# whole blocks for any M (what a generator not kept to whole() relies on)
BLOCK_OF = {torch.float32: 32, torch.float64: 16}


def whole(fn: Callable[..., torch.Tensor], *xs: torch.Tensor) -> torch.Tensor:
    """``fn(*xs)`` for an element-wise ``fn`` of tensors of one shape, every element
    computed by the vector code (differentiable: autograd sees a split, ``fn`` on each
    part and a concatenation)."""
    x = xs[0]
    n = x.numel()
    rest = n % BLOCK
    if rest == 0 or x.device.type != "cpu":
        return fn(*xs)
    flats = [t.reshape(-1) for t in xs]
    cut = n - rest
    tail = fn(*(F.pad(f[cut:], (0, BLOCK - rest)) for f in flats))[:rest]
    if cut == 0:
        return tail.view(x.shape)
    return torch.cat([fn(*(f[:cut] for f in flats)), tail]).view(x.shape)


def bce_with_logits(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Element-wise BCE with logits (reduction none); ``target`` broadcast to the logits."""
    return whole(lambda z, y: F.binary_cross_entropy_with_logits(z, y, reduction="none"),
                 logits, target.expand_as(logits))


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return whole(torch.sigmoid, x)


def softplus(x: torch.Tensor) -> torch.Tensor:
    return whole(F.softplus, x)


@lru_cache(maxsize=None)
def products_batch_invariant(dtype: torch.dtype) -> bool:
    """Whether this host's batched matrix products give a model's bits whatever its
    position in the batch at a small odd per-model row count, as the generators' layers
    take at a batch like 7. True on the AVX-512 hosts :attr:`whole_blocks` was measured
    on; an AVX2 EPYC host's MKL (2026-11-25) computed (3, 7, 29, 64) x (3, 29, 64) float32
    products other than each alone, so there a chunk's models depend on M unless the
    per-model batches are whole blocks (:func:`not_whole`). Probed once per dtype, on
    random operands (fixed seed), the layer shapes of tests/generators/test_chunk_invariance.py."""
    gen = torch.Generator().manual_seed(0)
    for k, n in ((29, 64), (64, 64), (64, 29), (30, 20), (20, 10)):
        x = torch.randn(3, 7, k, dtype=dtype, generator=gen)
        w = torch.randn(3, k, n, dtype=dtype, generator=gen)
        together = torch.bmm(x, w)
        if not all(torch.equal(together[i], torch.bmm(x[i:i + 1].clone(), w[i:i + 1].clone())[0])
                   for i in range(3)):
            return False
    return True


def not_whole(batches: dict[str, int], dtype: torch.dtype) -> str | None:
    """Which per-model batch (by name) is not of whole blocks, in a few words
    ("batch 16 is not a multiple of 32 (float32)"), or None."""
    width = BLOCK_OF[dtype]
    for name, value in batches.items():
        if value % width:
            return f"{name} {value} is not a multiple of {width} ({str(dtype).removeprefix('torch.')})"
    return None
