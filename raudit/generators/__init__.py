"""Generator registry.

A :class:`raudit.registry.Registry` of ``"module:Class"`` entries; classes are imported on first
use so that commands that do not train (``raudit datasets list``) stay fast.
User generators plug in three ways: ``register(cls)`` in code, ``module:Class``
given where a name is expected, or the entry-point group ``raudit.generators``.
"""

from __future__ import annotations

import importlib

from raudit.errors import ConfigError, UnknownNameError
from raudit.generators.base import Generator
from raudit.registry import Registry

ENTRY_POINT_GROUP = "raudit.generators"


def _is_generator(obj, name: str) -> None:
    if not (isinstance(obj, type) and issubclass(obj, Generator)):
        raise ConfigError(f"generator {name!r} does not name a subclass of "
                          "raudit.generators.base.Generator")


GENERATORS: Registry[type[Generator]] = Registry("generator", entry_point_group=ENTRY_POINT_GROUP,
                                                 check=_is_generator)
# the generators raudit ships (their option names: raudit.generators.declared)
BUILT_IN: dict[str, str] = dict((
    ("paper", "raudit.generators.pategan.paper:PaperPateGan"),
    ("borealis", "raudit.generators.pategan.ports.borealis.port:BorealisPateGan"),
    ("smartnoise", "raudit.generators.pategan.ports.smartnoise.port:SmartNoisePateGan"),
    ("original", "raudit.generators.wgan.original.port:OriginalPateGan"),
    ("turing", "raudit.generators.wgan.turing.port:TuringPateGan"),
    ("updated", "raudit.generators.pategan.ports.updated.port:UpdatedPateGan"),
    ("synthcity", "raudit.generators.pategan.ports.synthcity.port:SynthcityPateGan"),
    ("gpate", "raudit.generators.gpate.generator:GPate"),
    ("fixed", "raudit.generators.pategan.fixed.generator:FixedPateGan"),
    ("gan", "raudit.generators.gan.vanilla:VanillaGan"),
    ("dpgan", "raudit.generators.gan.dpgan:DpGan"),
    ("identity", "raudit.generators.debug:IdentityGenerator"),
    ("independent", "raudit.generators.debug:IndependentGenerator"),
    ("randomized-response", "raudit.generators.debug:RandomizedResponseGenerator"),
))
for _name, _path in BUILT_IN.items():
    GENERATORS.register(_name, _path)


def is_built_in(name: str) -> bool:
    """Whether ``name`` is still the generator raudit ships under it (not replaced)."""
    return name in BUILT_IN and GENERATORS.entry(name) == BUILT_IN[name]


def register(cls: type[Generator], *, name: str | None = None) -> type[Generator]:
    """Register a generator class under ``name`` (default ``cls.name``)."""
    key = name or cls.name
    if not key:
        raise ConfigError(f"{cls.__name__} has no name; set the class attribute `name`")
    _is_generator(cls, key)
    if key in GENERATORS:
        raise ConfigError(f"a generator named {key!r} is already registered")
    GENERATORS.register(key, cls)
    return cls


def names() -> list[str]:
    """Every generator name that ``get`` accepts (plus any ``module:Class``)."""
    return GENERATORS.names()


def load_class(spec: str) -> type[Generator]:
    """Import ``module:Class`` and check it is a Generator."""
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ConfigError(f"plugin {spec!r} must be written module:Class")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load generator plugin {spec!r}: {exc}"
                          + _not_on_path(module, exc)) from exc
    if not (isinstance(cls, type) and issubclass(cls, Generator)):
        raise ConfigError(f"{spec!r} is not a subclass of raudit.generators.base.Generator")
    return cls


def _not_on_path(module: str, exc: BaseException) -> str:
    """The way out when the plugin's package lies in the current folder, which Python does
    not search for a command (`raudit` is a script, not `python -m`)."""
    import sys
    from pathlib import Path

    top = module.split(".")[0]
    here = Path.cwd()
    if (not isinstance(exc, ModuleNotFoundError) or exc.name != top
            or str(here) in sys.path or not ((here / top).is_dir() or (here / f"{top}.py").is_file())):
        return ""
    return (f"; {top} is in the current folder, which is not on Python's path: run with "
            "PYTHONPATH=$PWD (Ray's workers inherit it), or pip install -e your package")


def get(name: str) -> type[Generator]:
    """The generator class registered as ``name`` (or the plugin ``module:Class``)."""
    if name in GENERATORS:
        return GENERATORS.get(name)
    if name.startswith("exec:"):  # an out-of-process generator (its own environment)
        from raudit.generators.exec_adapter import exec_class
        return exec_class(name[len("exec:"):])
    if ":" in name:
        return load_class(name)
    raise UnknownNameError("generator", name, names())


__all__ = ["GENERATORS", "Generator", "get", "names", "register", "load_class", "ENTRY_POINT_GROUP"]
