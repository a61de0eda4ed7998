"""The one chunk function a schedule's pool runs: it calls the chunk's own function.

``run_spec({"job", "fn": "module:attr", "chunk": {...}, "device"})`` is a plain
module-level function of a plain dict, so the engine ships it to actors by reference;
the named function is imported on the worker (every chunk kind of raudit is one).
"""

from __future__ import annotations

import importlib
from typing import Any

from raudit.errors import ConfigError

# Chunk functions a campaign may name: nothing else is imported from a spec.
ALLOWED = {"raudit.audit.runner:run_chunk", "raudit.audit.selection:run_pool_chunk",
           "raudit.utility.chunk:run_chunk"}


def resolve(name: str):
    if name not in ALLOWED:
        raise ConfigError(f"campaign chunk function {name!r} is not one of {sorted(ALLOWED)}")
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def run_spec(spec: dict) -> Any:
    """Run one wrapped chunk on the slot's device."""
    return resolve(spec["fn"])({**spec["chunk"], "device": spec.get("device", "cpu")})
