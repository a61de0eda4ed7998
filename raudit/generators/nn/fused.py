"""What every compiled training step (``RAUDIT_COMPILE=step``) shares: one compiled graph per
set-up and process, and the traceable random streams it draws from.

The PATE-GAN step (:mod:`raudit.generators.pategan.core.fused_step`) and the WGAN-GP step
(:mod:`raudit.generators.wgan.step`) each compile their own iteration through
:func:`run_compiled` and draw through :class:`StepRNG`; neither family's module imports
the other's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch

from raudit.generators.nn import compiled
from raudit.generators.nn import rng as rng_mod
from raudit.generators.nn.rng import CounterRNG

__all__ = ["StepRNG", "run_compiled"]

_COMPILED: dict[tuple, Callable[[tuple, tuple], Any]] = {}
_BROKEN: set[tuple] = set()


def _compile(fn):
    """How the iteration is compiled (tests replace it by the identity to check the traced
    program eagerly, without paying for a compile). Every set-up's graph hangs off the same
    code object, and dynamo stops compiling a code object after ``recompile_limit`` graphs (8):
    a campaign's process may see more set-ups than that, so the limit is raised."""
    import torch._dynamo.config as dynamo_config
    dynamo_config.recompile_limit = max(dynamo_config.recompile_limit, 64)
    return torch.compile(fn, fullgraph=True, dynamic=False)


def run_compiled(key: tuple, iteration, plan, state: tuple, data: tuple):
    """``iteration(plan, state, data)`` through the graph compiled for set-up ``key`` (compiled
    on first use, shared by every run with that key), or None once compiling it has failed:
    that set-up runs eagerly for the rest of the process, after one warning."""
    if key in _BROKEN:
        return None
    fn = _COMPILED.get(key)
    if fn is None:
        compiled._cache_dir()
        fn = _COMPILED[key] = _compile(lambda state, data: iteration(plan, state, data))
    try:
        return fn(state, data)
    except Exception as exc:  # no working compiler: eager from now on
        _BROKEN.add(key)
        warnings.warn(f"raudit: compiling the fused step failed ({type(exc).__name__}: {exc}); "
                      "using eager torch", stacklevel=3)
        return None


class StepRNG(CounterRNG):
    """A :class:`CounterRNG` whose counter is a tensor, drawing through the torch reference
    kernels (traceable): the numbers of the eager streams at the same counter."""

    # ``compiled.kernel`` wraps each in a function that keeps the plain torch one as ``eager``
    _unit53, _open53, _unit32x2, _unit24x2, _hash_kernel = (
        staticmethod(f.eager)  # type: ignore[union-attr]
        for f in (rng_mod._unit53, rng_mod._open53, rng_mod._unit32x2, rng_mod._unit24x2,
                  rng_mod._hash_kernel))

    def __init__(self, keys: torch.Tensor, base: torch.Tensor, dtype: torch.dtype):
        self.keys, self.base, self.dtype, self.device = keys, base, dtype, keys.device
        self.counter = 0  # draws made in this step, added to ``base``

    def _positions(self, n: int) -> torch.Tensor:
        start = (self.base + self.counter) * (1 << 32)
        self.counter += 1
        return torch.arange(n, dtype=torch.int64, device=self.device) + start
