"""User-facing errors.

Every mistake a user can make (a bad name, a bad number, a bad file) raises a
subclass of :class:`RauditError` whose message says what was wrong and how to
fix it. The CLI turns these into one line on stderr and exit code 2.
"""

from __future__ import annotations

from collections.abc import Iterable


class RauditError(ValueError):
    """Base class for errors caused by user input."""


class UnknownNameError(RauditError, KeyError):
    """A registry lookup for a name that is not registered."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        self.kind, self.name, self.known = kind, name, sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class ConfigError(RauditError):
    """An option value that is out of range or inconsistent."""


class NoStep(ConfigError):
    """A run that cannot take one training step at its eps, whatever the data. A sweep
    skips such a point (named, with the eps at which it could step) instead of failing."""


class DataError(RauditError):
    """A dataset that cannot be read or cannot be used as given."""


class ChecksumError(DataError):
    """A downloaded or imported file whose sha256 differs from the expected one."""


class RunInterrupted(RauditError):
    """A run stopped by its surroundings, not by its input: the Ray head or every worker
    node was lost, or the result folder could not be written. Finished chunks are kept;
    the message says how to resume. Exit code 3 (documented in docs/cluster.md)."""

    exit_code = 3
    # Ray's own shutdown blocks for about a minute on a dead head; the CLI then exits at once.
    abandon_ray = False
