"""What a generator takes, as names: its options and presets, read for a built-in one
without importing it.

A built-in generator's module imports torch (~2 CPU-seconds; 95 s on a loaded machine)
before its class can say that ``-o nosuch=1`` names no option of it. ``options.json``
(beside this module) holds every built-in generator's option names and presets as its
class declares them (:meth:`raudit.generators.base.Generator.describe`, ``presets``),
so the command's checks refuse such input first; the class stays the source
(``tools/generator_options.py`` writes the file from it, and a test fails when they differ).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["Declared", "PATH", "built_in", "of_class", "table"]

PATH = Path(__file__).with_name("options.json")


@dataclass(frozen=True)
class Declared:
    """A generator's option names (None: its constructor takes any keyword) and presets."""

    options: tuple[str, ...] | None
    presets: tuple[str, ...]

    def accepts(self, key: str) -> bool:
        return self.options is None or key in self.options

    def known(self) -> str:
        """The option list as the messages show it."""
        return ", ".join(self.options or ()) or "none"


def of_class(cls: Any) -> Declared:
    """What the class ``cls`` declares (imports nothing)."""
    caps = cls.describe()
    return Declared(None if caps.options is None else tuple(caps.option_names()),
                    tuple(cls.presets))


@cache
def _file() -> dict[str, Declared]:
    entries = json.loads(PATH.read_text(encoding="utf-8"))["generators"]
    return {name: Declared(None if e["options"] is None else tuple(e["options"]),
                           tuple(e["presets"])) for name, e in entries.items()}


def built_in(name: str) -> Declared | None:
    """A built-in generator's declaration from the file; None for any other name (a
    plugin, ``module:Class``, ``exec:``, a built-in name registered anew), whose class
    is imported to ask it."""
    from raudit import generators

    return _file().get(name) if generators.is_built_in(name) else None


def table(classes: dict[str, Any]) -> dict[str, Any]:
    """The file's content for ``classes`` (name -> class), as tools/generator_options.py
    writes it and the test compares it."""
    return {"generators": {name: {"options": None if d.options is None else list(d.options),
                                  "presets": list(d.presets)}
                           for name, d in ((n, of_class(c)) for n, c in classes.items())}}
