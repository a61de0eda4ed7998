"""One registry kind for every named thing: generators, datasets, attacks, feature sets,
estimators, accountants, classifiers.

::

    CLASSIFIERS = Registry("classifier")
    CLASSIFIERS.register("rf", "raudit.classifiers:RandomForest")   # imported on first get
    CLASSIFIERS.register("lr", make_lr)                              # or the object itself
    CLASSIFIERS.get("rf"); CLASSIFIERS.names(); "rf" in CLASSIFIERS

Entries may be given as ``"module:attr"`` strings so that commands which never use
them (``raudit datasets list``) do not import torch or scikit-learn. An unknown name
raises :class:`raudit.errors.UnknownNameError` listing the known ones; registering a
taken name raises :class:`raudit.errors.ConfigError` unless ``replace=True``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from raudit.errors import ConfigError, UnknownNameError

T = TypeVar("T")


def import_path(spec: str) -> Any:
    """The object named ``module:attr`` (ConfigError if it cannot be imported)."""
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ConfigError(f"{spec!r} must be written module:attr")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load {spec!r}: {exc}") from exc
    return obj


class Registry(Generic[T]):
    """Names to objects of one ``kind`` (the word used in error messages).

    ``entry_point_group``: also offer the installed entry points of that group
    (plugins). ``check``: called on every object when it is first resolved; raise
    ConfigError there to reject objects of the wrong kind.
    """

    def __init__(self, kind: str, *, entry_point_group: str | None = None,
                 check: Callable[[Any, str], None] | None = None):
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._check = check
        self._entries: dict[str, T | str] = {}
        self._loaded: dict[str, T] = {}

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"

    def register(self, name: str, obj: T | str, *, replace: bool = False) -> T | str:
        """Add ``obj`` (or a lazy ``"module:attr"``) under ``name``; returns ``obj``."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"a {self.kind} needs a non-empty name, got {name!r}")
        if name in self._entries and not replace:
            raise ConfigError(f"a {self.kind} named {name!r} is already registered")
        self._entries[name] = obj
        self._loaded.pop(name, None)
        return obj

    def entry(self, name: str) -> T | str | None:
        """What ``name`` was registered as (a ``"module:attr"`` string stays one after its
        first ``get``); None for a name not registered here (a plugin's included)."""
        return self._entries.get(name)

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)
        self._loaded.pop(name, None)

    def _plugins(self) -> dict[str, Any]:
        if self.entry_point_group is None:
            return {}
        return {ep.name: ep for ep in entry_points(group=self.entry_point_group)}

    def names(self) -> list[str]:
        """Every registered name (plugins included), sorted."""
        return sorted(set(self._entries) | set(self._plugins()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._entries or name in self._plugins())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """The object registered as ``name`` (imported on first use)."""
        if name in self._loaded:
            return self._loaded[name]
        if name in self._entries:
            entry = self._entries[name]
            obj = import_path(entry) if isinstance(entry, str) else entry
        else:
            plugins = self._plugins()
            if name not in plugins:
                raise UnknownNameError(self.kind, name, self.names())
            obj = plugins[name].load()
        if self._check is not None:
            self._check(obj, name)
        self._loaded[name] = obj
        return obj

    def items(self) -> list[tuple[str, T]]:
        """(name, object) for every name, importing each."""
        return [(n, self.get(n)) for n in self.names()]


__all__ = ["Registry", "import_path"]
