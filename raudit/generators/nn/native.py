"""raudit's native kernels (``native.c``): compiled once per machine, loaded with ctypes.

Why: after the GEMMs, smartnoise's eager step spent its time in two kinds of element-wise
work torch runs as several passes over memory: the random streams' hash (numpy's nine
passes per draw, :mod:`raudit.generators.nn.hash_np`) and its generator blocks' layer norm,
affine, LeakyReLU and residual sum (four ATen calls, the layer norm alone ~2.6 ns per
float64 element). Each runs here as one loop that gives torch's bits:

* the hash is integer arithmetic and exact conversions, the same bits under any compiler;
* the layer norm repeats ATen's CPU kernel operation by operation (see native.c). That
  depends on how ATen was built (its vector width, which products its compiler fused), so
  it is used for a row width only after :func:`layer_norm_ok` has checked it against
  ``torch.layer_norm`` on a probe, bit for bit; any difference and torch keeps that width.

The library is built with the system C compiler (``cc``, or ``$CC``) into
``<cache>/native/`` under a name that hashes the source, the flags and the CPU, so
processes after the first (Ray actors, later runs) load it in milliseconds. No compiler,
a failed build, a big-endian machine or ``RAUDIT_NATIVE=0``: :func:`lib` is None and the
callers keep their torch/numpy code (the same bits, slower).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("native.c")
# no fused multiply-adds but those written as fma() (ATen's); -march=native for the vector
# units (fma() is one instruction there); nothing that reorders floating point
FLAGS = ["-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC"]
_P, _I, _D = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
_SIGNATURES = {
    **{name: [_P, _I, _P, _I, _P] for name in
       ("rd_bits", "rd_unit53", "rd_open53", "rd_unit32x2", "rd_unit24x2")},
    "ln_leaky_block": [_P, _P, _P, _P, _I, _I, _I, _I, _D, _D, ctypes.c_int, ctypes.c_int],
}


def _compiler() -> str | None:
    return next((shutil.which(c) for c in (os.environ.get("CC", ""), "cc", "gcc", "clang")
                 if c and shutil.which(c)), None)


def _cpu() -> str:
    """What -march=native compiles for: the CPU's model and feature flags."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor()
    return "\n".join(sorted({ln for ln in lines if ln.startswith(("model name", "flags"))}))


def _build(cc: str) -> Path:
    from raudit.data.cache import cache_dir  # <cache>/data: its parent is raudit's cache
    src = SOURCE.read_bytes()
    key = hashlib.sha256(b"\0".join([src, " ".join(FLAGS).encode(), cc.encode(),
                                     _cpu().encode()])).hexdigest()[:16]
    out = cache_dir().parent / "native" / f"raudit-native-{key}.so"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:  # then one atomic rename:
            part = Path(tmp) / out.name                           # concurrent builders are fine
            subprocess.run([cc, *FLAGS, "-o", str(part), str(SOURCE), "-lm"], check=True,
                           capture_output=True, timeout=120)
            os.replace(part, out)
    return out


@lru_cache(maxsize=1)
def lib() -> ctypes.CDLL | None:
    """The loaded library, or None where it is switched off or cannot be built."""
    if os.environ.get("RAUDIT_NATIVE", "1") == "0" or sys.byteorder != "little":
        return None
    cc = _compiler()
    if cc is None:
        return None
    try:
        handle = ctypes.CDLL(str(_build(cc)))
    except (OSError, subprocess.SubprocessError) as exc:
        warnings.warn(f"raudit: building native kernels failed ({type(exc).__name__}); using "
                      "torch (RAUDIT_NATIVE=0 silences this)", stacklevel=2)
        return None
    for name, args in _SIGNATURES.items():
        fn = getattr(handle, name)
        fn.argtypes, fn.restype = args, None
    return handle


def _ptr(t: torch.Tensor) -> int:
    return t.data_ptr()


def hash_kernel(name: str, dtype: torch.dtype, pairs: bool):
    """A draw ``(keys (M,) int64, pos (n,) int64) -> (M, n or 2n)`` through ``rd_<name>``, or
    None without the library. Same contract as the torch and numpy kernels of rng.py."""
    handle = lib()
    if handle is None:
        return None
    fn = getattr(handle, f"rd_{name}")

    def run(keys: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        keys, pos = keys.contiguous(), pos.contiguous()
        m, n = keys.shape[0], pos.shape[0]
        out = torch.empty((m, 2 * n if pairs else n), dtype=dtype)
        fn(_ptr(keys), m, _ptr(pos), n, _ptr(out))
        return out

    return run


# ATen's Vectorized<double> lane counts to try (AVX2: 4, AVX-512: 8), and whether its addcmul
# rounded beta + h * gamma once (an FMA) or twice
_LANES = (4, 8)
_AFFINE = (1, 0)
_PROBE = (8, 64)  # groups x rows of the probe


def reference_block(h: torch.Tensor, res: torch.Tensor | None, gamma: torch.Tensor,
                    beta: torch.Tensor, act_, eps: float = 1e-5) -> torch.Tensor:
    """smartnoise's no-gradient block in torch, in place on ``h``: layer norm, per-model
    affine, the in-place activation ``act_``, residual sum. With LeakyReLU it is what
    :func:`ln_leaky_block` computes in one pass; smartnoise's generator runs it where that
    pass is not used."""
    y = torch.nn.functional.layer_norm(h, h.shape[-1:], eps=eps)
    torch.addcmul(beta.unsqueeze(1), y, gamma.unsqueeze(1), out=h)
    act_(h)
    if res is not None:
        h += res
    return h


def leaky_(slope: float):
    """LeakyReLU with this slope, in place."""
    return lambda x: torch.nn.functional.leaky_relu_(x, slope)


@lru_cache(maxsize=None)
def block_ok(cols: int, slope: float, eps: float = 1e-5) -> tuple[int, int] | None:
    """(lanes, affine) with which :func:`ln_leaky_block` gives :func:`reference_block`'s bits
    for rows of ``cols`` float64 values, checked on a probe (rows of scales 1e-6 to 1e6,
    random gamma and beta, with and without the residual), or None: then the caller keeps
    torch. Rows wider than one ATen chunk (16 lanes) are never handled."""
    handle = lib()
    if handle is None:
        return None
    g = torch.Generator().manual_seed(cols)
    groups, rows = _PROBE
    scale = torch.logspace(-6, 6, groups * rows, dtype=torch.float64).view(groups, rows, 1)
    h = torch.randn(groups, rows, cols, dtype=torch.float64, generator=g) * scale + scale.sqrt()
    res = torch.randn(groups, rows, cols, dtype=torch.float64, generator=g)
    params = torch.randn(groups, 3 * cols, dtype=torch.float64, generator=g)
    gamma, beta = params[:, :cols], params[:, cols:2 * cols]  # strided, as views of a flat
    want = [reference_block(h.clone(), r, gamma, beta, leaky_(slope), eps) for r in (res, None)]
    for vw in _LANES:
        if cols // vw > 16:
            continue
        for affine in _AFFINE:
            got = [h.clone(), h.clone()]
            for out, r in zip(got, (res, None)):
                _call(handle, out, r, gamma, beta, slope, eps, (vw, affine))
            if all(torch.equal(a, b) for a, b in zip(got, want)):
                return vw, affine
    return None


def _call(handle, h, res, gamma, beta, slope, eps, how) -> None:
    groups, rows, cols = h.shape
    handle.ln_leaky_block(_ptr(h), 0 if res is None else _ptr(res), _ptr(gamma), _ptr(beta),
                          gamma.stride(0), groups, rows, cols, eps, slope, *how)


def ln_leaky_block(h: torch.Tensor, res: torch.Tensor | None, gamma: torch.Tensor,
                   beta: torch.Tensor, slope: float, how: tuple[int, int], eps: float = 1e-5) -> None:
    """:func:`reference_block` in one pass, in place on ``h`` (G, B, c), float64, CPU,
    contiguous (``res`` too); ``gamma``, ``beta`` (G, c) with unit column stride; ``how``
    from :func:`block_ok`."""
    _call(lib(), h, res, gamma, beta, slope, eps, how)
