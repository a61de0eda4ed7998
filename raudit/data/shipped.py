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

# what this process loaded from files (the driver's side), each key with where to read it
# again: a user file's path made absolute when it was loaded. The key stays as the chunks
# name it (a game spec's dataset, as given), but a relative path read again later, from
# another working directory (a notebook's os.chdir), named another file or none.
_loaded: dict[Key, Key] = {}
_installed: dict[Key, Dataset] = {}  # what a driver shipped here (a worker's side)


def key(name_or_path: str | Path, label: str | None, bounds: str | Path | None,
        seed: int) -> Key:
    return (str(name_or_path), label, None if bounds is None else str(bounds), int(seed))


def record(k: Key, source: Key | None = None) -> None:
    """``k`` was loaded from ``source`` (``k`` itself by default; a user file: its key
    with the absolute paths it was read from)."""
    _loaded[k] = k if source is None else source


def lookup(k: Key) -> Dataset | None:
    """A fresh copy of a shipped dataset (callers may modify their frames), or None."""
    ds = _installed.get(k)
    return None if ds is None else copy.deepcopy(ds)


def export(load: Callable[..., Dataset]) -> dict[Key, Dataset]:
    """Every dataset this process loaded and every one shipped to it (to pass on).

    Loaded ones are loaded again with ``load`` (:func:`raudit.data.load`; parsing is
    cached): callers may have modified the frames they were given, and the workers must
    get the table as read."""
    return {**_installed, **{k: load(s[0], label=s[1], bounds=s[2], seed=s[3])
                             for k, s in sorted(_loaded.items(), key=str)
                             if k not in _installed}}


def install(tables: dict[Key, Any]) -> None:
    """On a worker: make ``tables`` (from :func:`export`) what ``load`` returns."""
    _installed.update(tables)


def clear() -> None:
    _loaded.clear()
    _installed.clear()
