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

__all__ = ["generator_kwargs", "option_names", "parse_value"]


def parse_value(text: str) -> Any:
    """JSON-ish values for -o KEY=VALUE: numbers, true/false, null, else a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def option_names(cls: type) -> list[str]:
    return cls.describe().option_names()


def generator_kwargs(impl: str, *, preset: str | None, teachers: int | None, lam: float | None,
                     max_iter: int | None, device: str | None, options: list[str] | None) -> dict:
    """Keyword arguments for the generator, keeping only what it accepts."""
    cls = generators.get(impl)
    caps = cls.describe()
    given = {"preset": preset, "teachers": teachers, "lam": lam, "max_iter": max_iter, "device": device}
    kwargs = {k: v for k, v in given.items() if v is not None and caps.accepts(k)}
    for k, flag in (("teachers", "--teachers"), ("lam", "--lambda"), ("max_iter", "--max-iter")):
        if given[k] is not None and k not in kwargs:
            raise ConfigError(f"{impl} has no option {flag}; its options: {', '.join(option_names(cls)) or 'none'}")
    for item in options or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {item!r} must be KEY=VALUE")
        key = key.replace("-", "_")
        if not caps.accepts(key):
            raise ConfigError(f"{impl} has no option {key!r}; its options: {', '.join(option_names(cls))}")
        kwargs[key] = parse_value(value)
    return kwargs
