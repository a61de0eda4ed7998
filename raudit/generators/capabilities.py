"""What a generator class can do, declared once instead of guessed at each call site.

Each generator class sets ``capabilities = Capabilities(...)``; callers ask
``cls.describe()`` (the declaration with the options filled in) rather than reading
signatures: the CLI (which options exist, with which types), the audit's chunks
(whether to pass the slot's device), ``raudit train`` (progress bars, ``--parallel
teachers``) and ``raudit generators``.

Options are the constructor's keyword-only parameters, read once per class in
:func:`options_of` (the constructor is where an option's name, type and default
are declared; a class whose constructor takes ``**options`` accepts any name).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["Capabilities", "OptionSpec", "options_of"]


@dataclass(frozen=True)
class OptionSpec:
    """One constructor option: its name, its annotated type (as written) and default."""

    name: str
    type: str
    default: Any


@dataclass(frozen=True)
class Capabilities:
    """``device``: the constructor takes ``device=`` (cpu/cuda); ``progress``: ``fit_many``
    takes ``progress=``; ``teachers_on_ray``: ``train`` takes ``make_teachers=`` (teacher
    shards on Ray); ``events``: the observer events it emits (``teacher_batch``,
    ``votes``, ``accountant_step``, ``label_noise``); ``privacy_events``: the privacy
    events its accountant consumes (``PateVote``, ...); ``controls``: the data-free
    controls its ``train`` takes as ``control=`` (``coin``: every released answer replaced
    by a uniform draw, the accounting unchanged; :mod:`raudit.utility` runs them beside
    the real fits); ``options``: None until :meth:`Generator.describe` fills them, None
    afterwards too if it takes any keyword."""

    device: bool = False
    progress: bool = False
    teachers_on_ray: bool = False
    events: tuple[str, ...] = ()
    privacy_events: tuple[str, ...] = ()
    options: tuple[OptionSpec, ...] | None = None
    notes: tuple[str, ...] = ()  # known issues a reader of its eps must know (shown by inspect)
    controls: tuple[str, ...] = ()  # data-free controls ``train`` takes as ``control=`` (coin)

    def accepts(self, option: str) -> bool:
        return self.options is None or any(o.name == option for o in self.options)

    def option_names(self) -> list[str]:
        return [o.name for o in self.options or ()]

    def with_options(self, options: tuple[OptionSpec, ...] | None) -> "Capabilities":
        return replace(self, options=options)


_OPTIONS: dict[type, tuple[OptionSpec, ...] | None] = {}


def options_of(cls: type) -> tuple[OptionSpec, ...] | None:
    """The keyword-only constructor options of ``cls`` (None if it takes ``**options``)."""
    if cls not in _OPTIONS:
        params = inspect.signature(cls.__init__).parameters
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            _OPTIONS[cls] = None
        else:
            _OPTIONS[cls] = tuple(
                OptionSpec(n, p.annotation if isinstance(p.annotation, str) else
                           getattr(p.annotation, "__name__", str(p.annotation)), p.default)
                for n, p in params.items() if n != "self" and p.kind is p.KEYWORD_ONLY)
    return _OPTIONS[cls]
