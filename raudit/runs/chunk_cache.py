"""Measured chunk-size rates kept on disk, so a set-up is calibrated once per machine.

``chunk-rates.json`` in ``$RAUDIT_CACHE_DIR`` (default ``~/.cache/raudit``) maps a key
(generator, options, dataset, privacy parameters, device, and the machine: CPU model,
core count, torch version) to the model-iterations per second measured at each
candidate M. The chunk size never changes a result (every model draws its own random
stream), so a stale entry can only cost speed; delete the file to re-measure. A file
that does not parse is set aside as ``chunk-rates.json.damaged`` and started afresh;
writes go to a temporary file renamed over the old one, so no reader sees half a file.
"""

from __future__ import annotations

import json
import os
import platform
from functools import lru_cache
from pathlib import Path

NAME = "chunk-rates.json"


def cache_dir() -> Path:
    return Path(os.environ.get("RAUDIT_CACHE_DIR") or Path.home() / ".cache" / "raudit")


@lru_cache(maxsize=1)
def machine() -> str:
    """What the rates depend on besides the set-up: the processor, cores and torch."""
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{cpu} x{os.cpu_count()} torch {torch.__version__}"


def key(fit: tuple, device: str) -> str:
    impl, opts, dataset, eps, delta, label, bounds = fit
    return json.dumps([impl, sorted((str(k), repr(v)) for k, v in opts.items()), str(dataset),
                       eps, delta, label, bounds, device, machine()])


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return data
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        try:
            path.replace(path.with_name(path.name + ".damaged"))
        except OSError:
            pass
        return {}


def lookup(k: str) -> dict[int, float] | None:
    """The cached rates {M: model-iterations/s} of a key, or None."""
    got = _read(cache_dir() / NAME).get(k)
    if not isinstance(got, dict):
        return None
    try:
        return {int(m): float(r) for m, r in got.items()}
    except (TypeError, ValueError):
        return None


def store(k: str, rates: dict[int, float]) -> None:
    """Add one key's rates (best effort: a read-only home just means no cache)."""
    path = cache_dir() / NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _read(path)
        data[k] = {str(m): r for m, r in rates.items()}
        tmp = path.with_name(f"{NAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError:
        pass
