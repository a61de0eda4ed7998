"""A generator given as a Python object: a :class:`~raudit.generators.base.Generator`
subclass or an instance of one, passed to :func:`raudit.api.audit` (and train, utility,
inspect) in place of a name.

The run layer names generators by strings (a trial's spec is plain data, hashed into its
id), so the object becomes a name:

- a class importable by ``module:Class`` (defined in a module on Python's path) becomes
  that string: Ray's workers import it as they import any plugin;
- a class that is not importable (defined in a notebook cell, a script's ``__main__`` or a
  function) is registered in this process under ``module:Class`` and runs only with
  ``backend="local"`` (the chunks then run in this process); with Ray the workers could not
  find it, so that is refused, before any work, saying what to do;
- an instance gives its class and its constructor options (``Generator.options``).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

from raudit.errors import ConfigError

__all__ = ["resolved"]


def _importable(cls: type) -> str | None:
    """``module:Class`` when importing it gives back ``cls`` itself, else None."""
    module, qualname = cls.__module__, cls.__qualname__
    if module == "__main__" or "." in qualname or "<" in qualname:
        return None
    try:
        found = getattr(importlib.import_module(module), qualname, None)
    except ImportError:
        return None
    return f"{module}:{qualname}" if found is cls else None


@contextlib.contextmanager
def resolved(impl: Any, backend: str, options: Any = None) -> Iterator[tuple[str, Any]]:
    """The generator name to run and its options (``options`` given win over an
    instance's own), valid inside the block; raises ConfigError for an object that is no
    generator. A class registered for the block is unregistered after it, so it never
    shows among the registry's names (``inspect --all``, ``raudit generators``)."""
    from raudit import generators
    from raudit.generators.base import Generator

    if isinstance(impl, str):
        yield impl, options
        return
    if isinstance(impl, Generator):
        cls, own = type(impl), dict(impl.options)
    elif isinstance(impl, type) and issubclass(impl, Generator):
        cls, own = impl, {}
    else:
        raise ConfigError(f"impl must be a generator name, a subclass of raudit.generators.base."
                          f"Generator or an instance of one; got {impl!r} (see "
                          "docs/generators/plugins.md for the protocol)")
    if own:
        if options is None or isinstance(options, dict):
            options = {**own, **(options or {})}
        else:
            raise ConfigError("options: give a mapping when impl is a generator instance "
                              "(its own options are merged with it)")
    name = _importable(cls)
    if name is not None:
        yield name, options
        return
    name = f"{cls.__module__}:{cls.__qualname__}"
    if backend != "local":
        raise ConfigError(f"generator class {cls.__qualname__} is defined in {cls.__module__} "
                          f"(not importable by module:Class), so the worker processes of backend "
                          f"{backend!r} cannot load it: pass backend='local' (chunks run in this "
                          "process), or move the class into a module on the path (pip install "
                          "-e your package, or PYTHONPATH)")
    # registered here, in the driver: the local backend runs every chunk in this process
    taken = name in generators.GENERATORS
    if taken and generators.GENERATORS.get(name) is not cls:
        # a notebook cell run again defines a new class object under the same name
        generators.GENERATORS.unregister(name)
        taken = False
    if not taken:
        generators.GENERATORS.register(name, cls)
    try:
        yield name, options
    finally:
        if not taken:
            generators.GENERATORS.unregister(name)
