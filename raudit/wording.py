"""How raudit's text names the settings a user turns: as the command's flags
(``--shadow-models``) or as the Python API's keywords (``shadow_models=``): a notebook user
has no ``--shadow-models`` to raise and no command to rerun.

A sentence is written with a :class:`Wording`: :data:`FLAGS` (the command's; the default,
and always what a results folder stores) or :data:`KEYWORDS` (``raudit.api``'s). Pure
functions take it as an argument (:func:`raudit.audit.verdict.verdict`); text written deep
in a run (an estimate line, the engine's "rerun ... to resume") reads :func:`current`,
which ``raudit.api`` sets for the length of each call with :func:`speaking`. Error
messages stay the command's everywhere: the API raises the command's one-line error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["FLAGS", "KEYWORDS", "Wording", "current", "speaking"]

# a flag whose name is not its field's (-o is repeated: one KEY=VALUE each)
_FLAG = {"lam": "--lambda", "options": "-o"}


@dataclass(frozen=True)
class Wording:
    """One interface's names for the settings (``keywords``: the Python API's) and what
    resuming means there (``rerun``: "rerun the same command")."""

    keywords: bool
    rerun: str

    def setting(self, name: str) -> str:
        """The setting ``name`` (an argument of ``raudit.api``: ``max_iter``) as this
        interface spells it: ``--max-iter`` or ``max_iter=``."""
        return f"{name}=" if self.keywords else _FLAG.get(name, "--" + name.replace("_", "-"))

    @property
    def models(self) -> str:
        """The models (or trials) per world."""
        return self.setting("shadow_models")

    @property
    def files(self) -> str:
        """A data-only audit's two folders of synthetic files."""
        return f"{self.setting('synthetic_in')}/{self.setting('synthetic_out')}"


FLAGS = Wording(False, "rerun the same command")
KEYWORDS = Wording(True, "call the same raudit.api function again with the same arguments")

_CURRENT: ContextVar[Wording] = ContextVar("raudit_wording", default=FLAGS)


def current() -> Wording:
    """The wording of the interface this call came through (:data:`FLAGS` unless
    ``raudit.api`` is running it)."""
    return _CURRENT.get()


@contextlib.contextmanager
def speaking(wording: Wording) -> Iterator[None]:
    """Text written inside the block names settings in ``wording``'s words."""
    token = _CURRENT.set(wording)
    try:
        yield
    finally:
        _CURRENT.reset(token)
