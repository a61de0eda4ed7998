"""The API's keyword arguments checked against their annotations, before anything runs.

The command's parser (Typer) turns every flag into its declared type, so the run layer
checks values, not types; from Python, ``fits=1.5`` or ``epsilon="x"`` reached it as they
were and failed inside the work (a TypeError after the results folder was written, or a
float count truncated). This is the API's parser: a value of the wrong type is a one-line
:class:`~raudit.errors.ConfigError`; the run layer then checks the value as for the CLI.
"""

from __future__ import annotations

import numbers
import os
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from raudit.errors import ConfigError

__all__ = ["check_arguments"]


def _what(hint: Any) -> str:
    """The annotation in words, for the error message."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_what(a) for a in args)
    if hint is type(None):
        return "None"
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return "a mapping"
    if origin is not None and isinstance(origin, type) and issubclass(origin, Sequence):
        return f"a list ({_what(args[0])} each)" if args else "a list"
    names = {bool: "True or False", int: "an integer", float: "a number", str: "a string"}
    if hint in names:
        return names[hint]
    if hint is os.PathLike or getattr(hint, "__name__", "") == "Path":
        return "a path"
    return str(getattr(hint, "__name__", hint))  # a class: AuditResult


def _fits(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return isinstance(value, Mapping)
    if origin is not None and isinstance(origin, type) and issubclass(origin, Sequence):
        # a string is a sequence of characters, never a list of values here
        return isinstance(value, (list, tuple)) and (not args or all(_fits(v, args[0])
                                                                     for v in value))
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:  # numpy integers too; True is no count
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if getattr(hint, "__name__", "") == "Path":
        return isinstance(value, os.PathLike)
    return isinstance(value, hint) if isinstance(hint, type) else True


def check_arguments(fn: Callable[..., Any], given: Mapping[str, Any]) -> None:
    """Raise a one-line ConfigError for the first argument of ``fn`` whose value does not
    fit its annotation (``given``: the call's ``locals()`` at its first line)."""
    hints = typing.get_type_hints(fn)
    for name, value in given.items():
        hint = hints.get(name)
        if hint is not None and not _fits(value, hint):
            raise ConfigError(f"{name} must be {_what(hint)}, got {value!r}")
