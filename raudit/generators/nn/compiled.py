"""Compiled kernels for the training step's hot element-wise work (``RAUDIT_COMPILE``).

What is compiled is only what compiles to the same bits: the random streams' hashing
(splitmix64 on int64, wrapping multiplication, shifts and masks) and its conversion to
uniforms (an integer below 2^53 to float, times a power of two). Eager torch runs the
dozen integer passes of a hash one tensor at a time; inductor fuses them into one loop,
5-10x faster per draw. Floating-point network arithmetic is left eager: fusing it
reorders sums and would move the pinned regression runs (see lab/performance.md).

``RAUDIT_COMPILE=fused`` also compiles the teachers' step (real-batch gather, forward,
loss and its backward, :mod:`raudit.generators.pategan.core.teachers`), which fuses and reorders
floating-point sums: its gradients agree with eager to about 1e-6 relative (float32), not
bit for bit, so votes and stopping points may differ from the pinned runs.

``RAUDIT_COMPILE=step`` compiles instead the whole training iteration of the PATE-GAN loop
(`paper`, `borealis`, `smartnoise`: :mod:`raudit.generators.pategan.core.loop` with plain MLP teachers
and student) and of the WGAN-GP loop
(`original`, `turing`) as one graph per process and set-up: generator, teachers or critic,
votes and their noise, student, Adam and both random streams
(:mod:`raudit.generators.pategan.core.fused_step`, :mod:`raudit.generators.wgan.step`); the
accountant and the observer get the step's votes, noise and rows after the call. The draws are
the eager streams' (the hash is integer arithmetic), but sums are reordered: parameters drift from
eager by float rounding (e.g. 1e-4 relative after 20 float32 iterations of `paper`, 1e-16 in
float64), so a vote on a knife edge may flip. The rest of the process (set-up, sampling) is
eager, as under "0". Measured against eager, per CPU-second: `paper` 1.79x, `original` 1.68x,
`borealis` 1.38x at M = 128 (medians of four side-by-side rounds); 2.63x, 1.91x, 1.40x at
M = 32, with 45-60 CPU-seconds
to compile a set-up the first time and about 6 to load it from the cache (lab/performance.md,
"A fused training step").

``RAUDIT_COMPILE=1`` compiles the bit-exact kernels; ``0`` or unset is the eager reference, the default by
measurement: the compiled hash gives `paper` 1.15-1.45x and `original` about 1.2x the
model-iterations per CPU-second at M = 128 and nothing for `smartnoise`, while each process
pays about 5 CPU-seconds to load the kernels from the cache (18 to compile them the first
time), which an audit's chunks win back only over several chunks
(lab/performance-2026-11.md, section 5). Those ratios are against torch's eager hash; eager
CPU draws now hash in numpy (:mod:`raudit.generators.nn.hash_np`, ~3x less CPU per hash, the
same bits), which takes most of what compiling the hash gave (lab/performance.md).
``1`` needs a C++ compiler (inductor's CPU code generation); without one, eager. Compiled
kernels are used on CPU only. A kernel that fails to compile falls back to eager for the
rest of the process, with one warning. Inductor's cache lives under raudit's cache
(``<cache>/inductor``) unless ``TORCHINDUCTOR_CACHE_DIR`` is set, so processes after the
first (Ray actors, later runs) load the compiled code instead of compiling it again. Ray's
chunk actors run the driver's ``RAUDIT_COMPILE`` (and the other :data:`ARITHMETIC` switches),
whatever their own environment says.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Callable
from functools import lru_cache

import torch

_KERNELS: dict[str, Callable] = {}
_BROKEN: set[str] = set()


@lru_cache(maxsize=1)
def _has_compiler() -> bool:
    return any(shutil.which(c) for c in (os.environ.get("CXX", ""), "g++", "c++", "clang++") if c)


MODES = ("0", "1", "fused", "step")


def mode() -> str:
    """``RAUDIT_COMPILE``: "0" (or unset) eager, "1" bit-exact kernels, "fused" those and the
    teachers' step, "step" the whole PATE-GAN iteration (see the module docstring)."""
    value = os.environ.get("RAUDIT_COMPILE", "").strip() or "0"
    if value not in MODES:
        from raudit.errors import ConfigError

        raise ConfigError(f"RAUDIT_COMPILE must be one of {', '.join(MODES)}, got {value!r}")
    return value if value == "0" or (hasattr(torch, "compile") and _has_compiler()) else "0"


# The environment switches that change a training run's arithmetic, not only its speed:
# this module's mode, the teachers' hand-written gradient (pategan/core/teachers.py) and torch's
# fused Adam kernel (nn/optim.py), the last two read at import. Ray actors get the driver's
# values (engine/actors.py), and cached calibration rates are keyed on them (runs/chunk_cache.py).
ARITHMETIC = ("RAUDIT_COMPILE", "RAUDIT_HAND_GRAD", "RAUDIT_FUSED_ADAM")


def switches() -> dict[str, str | None]:
    """This process's :data:`ARITHMETIC` switches as set (None where unset)."""
    return {name: os.environ.get(name) for name in ARITHMETIC}


def arithmetic_key() -> list[str]:
    """The switches that move this process off the default eager arithmetic, as
    ``NAME=value`` (the effective compile mode; the others where set to "0"): [] for the
    default, so that what was keyed before the mode counted keeps its key."""
    out = [] if mode() == "0" else [f"RAUDIT_COMPILE={mode()}"]
    return out + [f"{n}=0" for n in ARITHMETIC[1:] if os.environ.get(n, "1") == "0"]


def enabled(exact: bool = True) -> bool:
    """Whether compiled kernels of this kind are used: bit-exact ones under "1" and "fused",
    the ones that reorder floating point (``exact=False``) under "fused" only."""
    return mode() in (("1", "fused") if exact else ("fused",))


def _cache_dir() -> None:
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        from raudit.data.cache import cache_dir  # <cache>/data: its parent is raudit's cache
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir().parent / "inductor")


def kernel(fn: Callable, *, exact: bool = True) -> Callable:
    """``fn`` (a pure function of tensors and constants) compiled once per process, used for
    CPU tensors when :func:`enabled` (``exact``: whether compiling keeps its bits);
    otherwise, and for other devices, ``fn`` itself."""
    name = f"{fn.__module__}.{fn.__qualname__}"

    def run(*args):
        if name in _BROKEN or args[0].device.type != "cpu" or not enabled(exact):
            return fn(*args)
        compiled = _KERNELS.get(name)
        if compiled is None:
            _cache_dir()
            compiled = _KERNELS[name] = torch.compile(fn, dynamic=True if exact else False,
                                                      fullgraph=True)
        try:
            return compiled(*args)
        except Exception as exc:  # no working compiler after all: eager from now on
            _BROKEN.add(name)
            warnings.warn(f"raudit: compiling {name} failed ({type(exc).__name__}); "
                          f"using eager torch (RAUDIT_COMPILE=0 silences this)", stacklevel=2)
            return fn(*args)

    run.eager = fn
    return run
