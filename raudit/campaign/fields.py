"""A campaign's values against the types of the request they fill, before any work.

The command line hands every request typed values (typer converts them); a YAML file can
put any value anywhere (``impl: [identity]``, ``seed: [1]``, ``epsilon: {a: 1}``), which a
request's own checks do not expect and which used to surface as a traceback, or later, after
``--out`` was written. :func:`check` compares each value with its field's annotation: one
``ConfigError`` naming the key and the type it needs.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from raudit.errors import ConfigError


def _fits(value: Any, kind: Any) -> bool:
    origin = typing.get_origin(kind)
    if kind is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, k) for k in typing.get_args(kind))
    if kind is type(None):
        return value is None
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:  # YAML reads 1 as an int: a whole number is a float too
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is str:
        return isinstance(value, str)
    if origin in (tuple, list) or kind in (tuple, list):
        if not isinstance(value, (tuple, list)):
            return False
        args = [a for a in typing.get_args(kind) if a is not Ellipsis]
        return all(_fits(v, args[0]) for v in value) if args else True
    if origin is dict or kind is dict:
        return isinstance(value, dict)
    return True  # a type this check does not know: the request's own checks decide


def _name(kind: Any) -> str:
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return " or ".join(_name(k) for k in typing.get_args(kind))
    if kind is type(None):
        return "null"
    if typing.get_origin(kind) in (tuple, list):
        args = [a for a in typing.get_args(kind) if a is not Ellipsis]
        return f"a list of {_name(args[0])}" if args else "a list"
    return {dict: "a mapping", str: "text", int: "an integer", float: "a number",
            bool: "true/false"}.get(kind, getattr(kind, "__name__", str(kind)))


def check(cls: type, values: dict[str, Any]) -> None:
    """ConfigError for the first value of ``values`` that its field of dataclass ``cls``
    cannot hold; keys ``cls`` lacks are left to the caller's unknown-key check."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in values and not _fits(values[f.name], hints[f.name]):
            raise ConfigError(f"{f.name} must be {_name(hints[f.name])}, got "
                              f"{values[f.name]!r:.80}")
