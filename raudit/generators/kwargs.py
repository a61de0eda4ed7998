"""A generator's keyword arguments from what a user typed: the shared flags and -o KEY=VALUE.

Used by every command and by campaigns and inspection jobs alike, so it lives here,
below all of them; each generator's :class:`~raudit.generators.capabilities.Capabilities`
says which keys it accepts.
"""

from __future__ import annotations

import json
from typing import Any

from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.declared import Declared, built_in, of_class

__all__ = ["check_generator_args", "check_shared", "declared", "generator_kwargs",
           "option_names", "parse_value"]


def parse_value(text: str) -> Any:
    """JSON-ish values for -o KEY=VALUE: numbers, true/false, null, else a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def option_names(cls: type) -> list[str]:
    return cls.describe().option_names()


def declared(impl: str) -> Declared:
    """What ``impl`` takes: a built-in generator's names from the file (imports nothing),
    any other's from its class."""
    return built_in(impl) or of_class(generators.get(impl))


def check_shared(impl: str, *, preset: object = None, teachers: object = None,
                 lam: object = None, max_iter: object = None, as_option: bool = False,
                 takes: Declared | None = None) -> None:
    """Refuse the shared flags' values that no generator can use (None: not given), the
    same line for every generator and command: a count below 1, a lambda not above 0, a
    preset ``impl`` does not have (``takes``: its declaration, default :func:`declared`).
    Before the constructor runs, which checks the types and would otherwise let a
    generator that ignores the option take any value. ``as_option``: the values came as
    -o KEY=VALUE (the message names them so)."""
    def named(key: str, flag: str) -> str:
        return f"-o {key}" if as_option else flag

    for value, key, flag in ((teachers, "teachers", "--teachers"),
                             (max_iter, "max_iter", "--max-iter")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 1:
            raise ConfigError(f"{named(key, flag)} must be at least 1, got {value}")
    if isinstance(lam, (int, float)) and not isinstance(lam, bool) and not lam > 0:
        raise ConfigError(f"{named('lam', '--lambda')} must be positive, got {lam}")
    if preset is not None:
        presets = (takes or declared(impl)).presets
        if preset not in presets:
            raise ConfigError(f"{impl} has no preset {preset!r}; its presets: {', '.join(presets)}")


def _kwargs(impl: str, takes: Declared, *, preset: str | None, teachers: int | None,
            lam: float | None, max_iter: int | None, device: str | None,
            options: list[str] | None) -> dict:
    """Every refusal, in order, then the kwargs: only what ``takes`` accepts."""
    check_shared(impl, preset=preset, teachers=teachers, lam=lam, max_iter=max_iter,
                 takes=takes)
    given = {"preset": preset, "teachers": teachers, "lam": lam, "max_iter": max_iter, "device": device}
    kwargs = {k: v for k, v in given.items() if v is not None and takes.accepts(k)}
    for k, flag in (("teachers", "--teachers"), ("lam", "--lambda"), ("max_iter", "--max-iter")):
        if given[k] is not None and k not in kwargs:
            raise ConfigError(f"{impl} has no option {flag}; its options: {takes.known()}")
    for item in options or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {item!r} must be KEY=VALUE")
        key = key.replace("-", "_")
        if not takes.accepts(key):
            raise ConfigError(f"{impl} has no option {key!r}; its options: {takes.known()}")
        kwargs[key] = parse_value(value)
    # the same values given as -o (-o teachers=0): the same refusal
    check_shared(impl, preset=kwargs.get("preset"), teachers=kwargs.get("teachers"),
                 lam=kwargs.get("lam"), max_iter=kwargs.get("max_iter"), as_option=True,
                 takes=takes)
    return kwargs


def check_generator_args(impl: str, *, preset: str | None, teachers: int | None,
                         lam: float | None, max_iter: int | None,
                         options: list[str] | None) -> None:
    """:func:`generator_kwargs`'s refusals, with the same lines, without importing a
    built-in generator (its names come from :mod:`raudit.generators.declared`): a
    command calls it first, so a mistyped option is refused before torch loads. Other
    generators are checked by generator_kwargs, with their class."""
    takes = built_in(impl)
    if takes is not None:
        _kwargs(impl, takes, preset=preset, teachers=teachers, lam=lam, max_iter=max_iter,
                device=None, options=options)


def generator_kwargs(impl: str, *, preset: str | None, teachers: int | None, lam: float | None,
                     max_iter: int | None, device: str | None, options: list[str] | None) -> dict:
    """Keyword arguments for the generator, keeping only what it accepts; an option it
    does not take, given as a flag or as -o, is refused as -o nosuch=1 is."""
    return _kwargs(impl, of_class(generators.get(impl)), preset=preset, teachers=teachers,
                   lam=lam, max_iter=max_iter, device=device, options=options)
