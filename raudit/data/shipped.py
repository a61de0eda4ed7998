"""Datasets travel with the work, not with the file system.

A Ray worker on another machine has neither the driver's ``RAUDIT_DATA_DIR`` nor a
user's CSV file, so what the driver loaded is shipped to the workers (once, through
Ray's object store) and installed there; :func:`raudit.data.load` then returns the
shipped table before it looks for files. Chunks still check the table's digest
against the audit's (:func:`raudit.audit.chunk.load_train`), so a worker can never
run on other data than the driver planned with.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from raudit.data.dataset import Dataset

Key = tuple[str, "str | None", "str | None", int]

_loaded: set[Key] = set()  # what this process loaded from files (the driver's side)
_installed: dict[Key, Dataset] = {}  # what a driver shipped here (a worker's side)


def key(name_or_path: str | Path, label: str | None, bounds: str | Path | None,
        seed: int) -> Key:
    return (str(name_or_path), label, None if bounds is None else str(bounds), int(seed))


def record(k: Key) -> None:
    _loaded.add(k)


def lookup(k: Key) -> Dataset | None:
    """A fresh copy of a shipped dataset (callers may modify their frames), or None."""
    ds = _installed.get(k)
    return None if ds is None else copy.deepcopy(ds)


def export(load: Callable[..., Dataset]) -> dict[Key, Dataset]:
    """Every dataset this process loaded and every one shipped to it (to pass on).

    Loaded ones are loaded again with ``load`` (:func:`raudit.data.load`; parsing is
    cached): callers may have modified the frames they were given, and the workers must
    get the table as read."""
    return {**_installed, **{k: load(k[0], label=k[1], bounds=k[2], seed=k[3])
                             for k in sorted(_loaded - set(_installed), key=str)}}


def install(tables: dict[Key, Any]) -> None:
    """On a worker: make ``tables`` (from :func:`export`) what ``load`` returns."""
    _installed.update(tables)


def clear() -> None:
    _loaded.clear()
    _installed.clear()
