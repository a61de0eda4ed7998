"""What a generator class can do, declared once instead of guessed at each call site.

Each generator class sets ``capabilities = Capabilities(...)``; callers ask
``cls.describe()`` (the declaration with the options filled in) rather than reading
signatures: the CLI (which options exist, with which types), the audit's chunks
(whether to pass the slot's device), ``raudit train`` (progress bars, ``--parallel
teachers``) and ``raudit generators``.

Options are the constructor's keyword-only parameters, read once per class in
:func:`options_of` (the constructor is where an option's name, type and default
are declared; a class whose constructor takes ``**options`` accepts any name).
A class that declares ``Options``, a frozen :class:`OptionsObject` (the faithful
ports: their deviations with the upstream defaults), lists its constructor's shared
keyword-only parameters and then that object's fields, with their Literal choices.
"""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Literal

from raudit.errors import ConfigError

__all__ = ["Capabilities", "OptionSpec", "OptionsObject", "option", "options_of"]


@dataclass(frozen=True)
class OptionSpec:
    """One constructor option: its name, its annotated type (as written) and default."""

    name: str
    type: str
    default: Any
    choices: tuple | None = None  # the closed value set of a Literal field (None: open)
    help: str = ""  # one line for ``raudit generators NAME`` (see :func:`option`)


# the constructor's shared keyword-only parameters, described once for every generator
SHARED_HELP = {"preset": "a named set of defaults (--preset; values: this generator's)",
               "device": "cpu or cuda (null: chosen at run time)",
               "dtype": "float32 or float64 (null: the generator's own)"}


def option(default: Any, what: str) -> Any:
    """A field of an :class:`OptionsObject` with its one-line description, which
    ``raudit generators NAME`` shows beside the option's values and default."""
    return field(default=default, metadata={"help": what})


def literal_choices(hint: Any) -> tuple | None:
    """The values a ``Literal[...]`` (or ``Literal[...] | None``) hint allows, else None."""
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        out: list = []
        for arg in typing.get_args(hint):
            if arg is type(None):
                out.append(None)
            elif typing.get_origin(arg) is Literal:
                out.extend(typing.get_args(arg))
            else:
                return None
        return tuple(out) if any(v is not None for v in out) else None
    return None


_CHOICES: dict[type, dict[str, tuple]] = {}


@dataclass(frozen=True)
class OptionsObject:
    """Base of a generator's options object: a frozen dataclass whose defaults are the
    upstream behaviour. Literal fields are closed sets, checked on construction with the
    same one-line error as :func:`raudit.generators.pategan.core.options.choice`."""

    truthy: ClassVar[tuple[str, ...]] = ()  # switches a port has always taken as bool(value)

    def __post_init__(self) -> None:
        for name in self.truthy:
            object.__setattr__(self, name, bool(getattr(self, name)))
        for name, allowed in type(self).choices().items():
            value = getattr(self, name)
            if value not in allowed:
                shown = ", ".join("null" if v is None else str(v) for v in allowed)
                raise ConfigError(f"{name} must be one of {shown}; got {value!r}")

    @classmethod
    def choices(cls) -> dict[str, tuple]:
        # read once per class: get_type_hints evaluates every annotation, and a chunk of M
        # models builds M options objects (it was ~2 % of a 128-model `paper` fit)
        known = _CHOICES.get(cls)
        if known is None:
            hints = typing.get_type_hints(cls)
            found = {f.name: literal_choices(hints[f.name]) for f in fields(cls)}
            known = _CHOICES[cls] = {k: v for k, v in found.items() if v is not None}
        return dict(known)

    @classmethod
    def build(cls, given: "OptionsObject | None", overrides: dict[str, Any], owner: str):
        """``given`` (default: the upstream defaults) with ``overrides`` (-o KEY=VALUE) set;
        an unknown name is a one-line error naming the known ones."""
        if given is not None and not isinstance(given, cls):
            raise ConfigError(f"{owner} takes {cls.__name__}, got {type(given).__name__}")
        names = [f.name for f in fields(cls)]
        for key in overrides:
            if key not in names:
                raise ConfigError(f"{owner} has no option {key!r}; its options: {', '.join(names)}")
        return replace(given if given is not None else cls(), **overrides)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def specs(cls) -> tuple[OptionSpec, ...]:
        choices = cls.choices()
        return tuple(OptionSpec(f.name, f.type if isinstance(f.type, str) else str(f.type),
                                f.default, choices.get(f.name), f.metadata.get("help", ""))
                     for f in fields(cls))


@dataclass(frozen=True)
class Capabilities:
    """``device``: the constructor takes ``device=`` (cpu/cuda); ``progress``: ``fit_many``
    takes ``progress=``; ``teachers_on_ray``: ``train`` takes ``make_teachers=`` (teacher
    shards on Ray); ``events``: the observer events it emits (``teacher_batch``,
    ``votes``, ``accountant_step``, ``label_noise``); ``privacy_events``: the privacy
    events its accountant consumes (``PateVote``, ...); ``controls``: the data-free
    controls its ``train`` takes as ``control=`` (``coin``: every released answer replaced
    by a uniform draw, the accounting unchanged; :mod:`raudit.utility` runs them beside
    the real fits); ``critic``: its training loop keeps the trained student/discriminator
    (``Trained.critic``) for the white-box threat model; ``options``: None until :meth:`Generator.describe` fills them, None
    afterwards too if it takes any keyword."""

    device: bool = False
    progress: bool = False
    teachers_on_ray: bool = False
    events: tuple[str, ...] = ()
    privacy_events: tuple[str, ...] = ()
    options: tuple[OptionSpec, ...] | None = None
    notes: tuple[str, ...] = ()  # known issues a reader of its eps must know (shown by inspect)
    controls: tuple[str, ...] = ()  # data-free controls ``train`` takes as ``control=`` (coin)
    critic: bool = False  # the trained student/discriminator is reachable (white-box audits)
    # The noise its privacy mechanism releases ("laplace", "gaussian",
    # "randomized-response"; () where none or unknown): an estimate that assumes a Gaussian
    # trade-off curve (GDP) is known false for a Laplace or randomized-response mechanism,
    # so the audit's table does not show it there (raudit.audit.estimators.shown).
    releases: tuple[str, ...] = ()
    # ``-M auto``'s chunk size where a set-up is not chunk-invariant
    # (:meth:`Generator.chunk_dependence`): fixed, so no machine-dependent choice changes a
    # result; the default chunk size, or a generator's best where batching does not pay
    canonical_chunk: int = 100

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
        declared = getattr(cls, "Options", None)
        if isinstance(declared, type) and issubclass(declared, OptionsObject):
            shared = tuple(OptionSpec(n, str(p.annotation), p.default, _shared_choices(cls, n),
                                      SHARED_HELP.get(n, ""))
                           for n, p in params.items() if p.kind is p.KEYWORD_ONLY)
            _OPTIONS[cls] = shared + declared.specs()
        elif any(p.kind is p.VAR_KEYWORD for p in params.values()):
            _OPTIONS[cls] = None
        else:
            _OPTIONS[cls] = tuple(
                OptionSpec(n, p.annotation if isinstance(p.annotation, str) else
                           getattr(p.annotation, "__name__", str(p.annotation)), p.default,
                           _shared_choices(cls, n))
                for n, p in params.items() if n != "self" and p.kind is p.KEYWORD_ONLY)
    return _OPTIONS[cls]


def _shared_choices(cls: type, name: str) -> tuple | None:
    """The closed value set of a shared option: ``preset`` takes the class's ``presets``."""
    presets = getattr(cls, "presets", None)
    return tuple(presets) if name == "preset" and presets else None
