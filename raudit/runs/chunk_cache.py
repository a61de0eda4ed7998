"""Measured chunk-size rates kept on disk, so a set-up is calibrated once per machine.

``chunk-rates.json`` in ``$RAUDIT_CACHE_DIR`` (default ``~/.cache/raudit``) maps a key
(generator, options, dataset, privacy parameters, device, the machine: CPU model, core
count, torch version, and the arithmetic mode where not the default eager one) to an entry:
the model-iterations per CPU-second measured at each candidate M (``clock: "cpu"``), the
machine's 1-minute load average and the torch threads when they were measured, and when.
CPU time, not wall time: a rate taken on a loaded machine would otherwise be kept and
steer every later run.

The chunk size changes no result at the generators' default batch sizes (every model
draws its own random stream; lab/performance.md names batches whose last bits do depend
on it), so a stale entry can only cost speed. Entries written before rates were per CPU-second
(a bare ``{M: rate}``) read as absent and are measured again; a run whose observed
rate disagrees with its entry drops it (:func:`drop`, see
:func:`raudit.runs.chunk_size.observe`). A file that does not parse is set aside
as ``chunk-rates.json.damaged`` and started afresh; writes go to a temporary file
renamed over the old one, so no reader sees half a file.
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass
from datetime import datetime, timezone
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

NAME = "chunk-rates.json"

#: (impl, options, dataset, eps, delta, label, bounds) of the generator a set-up fits, as
#: raudit.runs.calibrate's game_fit / job_fit build it: the cache's key
Fit = tuple[str, dict[str, Any], str, float, float, Any, Any]


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


def key(fit: Fit, device: str) -> str:
    """The entry of set-up ``fit`` on ``device`` on this machine, under this process's
    arithmetic mode (``RAUDIT_COMPILE=step`` trains at other rates, and best at another M,
    than eager: neither's rates may steer the other's runs). The default eager mode adds
    nothing, so its entries keep the keys they had before the mode was part of the key."""
    from raudit.generators.nn.compiled import arithmetic_key

    impl, opts, dataset, eps, delta, label, bounds = fit
    mode = arithmetic_key()
    return json.dumps([impl, sorted((str(k), repr(v)) for k, v in opts.items()), str(dataset),
                       eps, delta, label, bounds, device, machine()] + ([mode] if mode else []))


def _read(path: Path) -> dict[str, Any]:
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


@dataclass(frozen=True)
class Entry:
    """One set-up's cached calibration."""

    rates: dict[int, float]  # M -> model-iterations per CPU-second
    load: float | None  # 1-minute load average when measured
    threads: int | None  # torch threads of the measuring process
    measured_at: str | None  # ISO time (UTC)


def lookup_entry(k: str) -> Entry | None:
    """The cached entry of a key, or None (absent, unreadable, or not per CPU-second)."""
    got = _read(cache_dir() / NAME).get(k)
    if not isinstance(got, dict) or got.get("clock") != "cpu":
        return None  # absent, or a wall-clock entry from before rates were per CPU-second
    try:
        rates = {int(m): float(r) for m, r in got["rates"].items()}
        load = None if got.get("load") is None else float(got["load"])
        threads = None if got.get("threads") is None else int(got["threads"])
    except (KeyError, AttributeError, TypeError, ValueError):
        return None
    return Entry(rates, load, threads, got.get("measured_at")) if rates else None


def lookup(k: str) -> dict[int, float] | None:
    """The cached rates {M: model-iterations per CPU-second} of a key, or None."""
    entry = lookup_entry(k)
    return None if entry is None else entry.rates


def store(k: str, rates: dict[int, float], *, load: float | None = None,
          threads: int | None = None) -> None:
    """Add one key's rates per CPU-second (best effort: a read-only home means no cache)."""
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    _update(k, {"clock": "cpu", "rates": {str(m): r for m, r in rates.items()},
                "load": load, "threads": threads, "measured_at": when})


def lookup_value(k: str) -> dict[str, Any] | None:
    """Another measurement kept beside the rates (an audit's part costs,
    :mod:`raudit.runs.costs`): its dict, or None."""
    got = _read(cache_dir() / NAME).get(k)
    if not isinstance(got, dict) or got.get("clock") != "cpu":
        return None
    value = got.get("value")
    return value if isinstance(value, dict) else None


def store_value(k: str, value: Mapping[str, Any]) -> None:
    """Keep one measurement in CPU seconds under ``k`` (best effort, as :func:`store`)."""
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    _update(k, {"clock": "cpu", "value": dict(value), "load": load_average(), "measured_at": when})


def drop(k: str) -> None:
    """Forget one key, so its next use measures again."""
    _update(k, None)


def _update(k: str, value: Mapping[str, Any] | None) -> None:
    path = cache_dir() / NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _read(path)
        if value is None:
            if data.pop(k, None) is None:
                return
        else:
            data[k] = value
        tmp = path.with_name(f"{NAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError:
        pass


def load_average() -> float | None:
    """The machine's 1-minute load average (None where the OS does not say)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None
