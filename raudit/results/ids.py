"""Content hashes of specs: trial ids and audit-spec hashes.

A trial's id is a hash of everything that determines its result, so a resumed
run recognises finished trials by recomputing ids (no counters, no state).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import numpy as np


def _plain(obj: Any) -> Any:
    """Convert values json cannot write to plain equivalents (or raise TypeError)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, PurePath):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=canonical_json)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    raise TypeError(f"cannot hash a {type(obj).__name__} in a spec: {obj!r}")


def _check_floats(obj: Any) -> Any:
    """Map -0.0 to 0.0 so two equal specs hash equal; reject non-finite floats."""
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError(f"cannot hash the non-finite number {obj!r} in a spec")
        return obj + 0.0
    if isinstance(obj, Mapping):
        return {str(k): _check_floats(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_check_floats(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal specs give equal strings.

    Tuples and lists write the same; numpy scalars, paths, sets and dataclasses
    are converted; NaN and infinities are refused (they have no canonical form).
    """
    plain = json.loads(json.dumps(obj, default=_plain))  # resolve numpy & co first
    return json.dumps(_check_floats(plain), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=False)


def spec_hash(spec: Any) -> str:
    """The full sha256 (64 hex digits) of the canonical JSON of ``spec``."""
    return hashlib.sha256(canonical_json(spec).encode("ascii")).hexdigest()


def trial_id(spec: Any) -> str:
    """A 16-hex-digit id of ``spec`` (sha256 of its canonical JSON, truncated).

    Stable across runs, machines and key order. 64 bits make a collision among a
    million trials about a 1 in 3*10^7 event.
    """
    return spec_hash(spec)[:16]
