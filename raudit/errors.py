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


class DataUnavailable(DataError):
    """A known dataset whose files are not on this machine and cannot be fetched now (no
    download URL, no network, or an unpinned file the user has not accepted). A campaign
    skips the jobs of such a dataset, named in one line, instead of failing all of them."""


class RunInterrupted(RauditError):
    """A run stopped by its surroundings, not by its input: the Ray head or every worker
    node was lost, or the result folder could not be written. Finished chunks are kept;
    the message says how to resume. Exit code 3 (documented in docs/cluster.md)."""

    exit_code = 3
    # Ray's own shutdown blocks for about a minute on a dead head; the CLI then exits at once.
    abandon_ray = False


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread (:func:`on_sigterm`), so that a run told to stop
    ends as Ctrl-C ends it: through every ``finally`` (Ray shut down, the lock released),
    past every ``except Exception`` (a chunk is not recorded as failed), and with the line
    that says how to resume. Python's default for SIGTERM ended the process without a word;
    under Ray, whose handler called ``sys.exit``, it ended in a C++ crash dump (exit 134)."""

    signum = 15


_terminated: list[bool] = []  # set by on_sigterm: Ray's ray.get re-raises a plain KeyboardInterrupt


def on_sigterm(signum: int, frame: object) -> None:
    """The SIGTERM handler the CLI and Ray's start-up install: raise :class:`Terminated`."""
    _terminated.append(True)
    raise Terminated()


def was_terminated(exc: BaseException | None) -> bool:
    """Whether ``exc`` (a KeyboardInterrupt) came from SIGTERM: a :class:`Terminated`, or
    an interrupt after :func:`on_sigterm` ran (Ray turns any interrupt inside ``ray.get``
    into a new, plain KeyboardInterrupt)."""
    return isinstance(exc, Terminated) or bool(_terminated)


# ---------------------------------------------------------- an error as a stored row keeps it

STORED_ERROR = 2000  # characters of a failed row's error kept in a table


def headline(error: str) -> str:
    """The line of a recorded error that says what happened: a traceback's exception line
    (the first line after its last frame, so a message of several lines is read from its
    start, and a chained traceback from its last exception); otherwise the first line."""
    lines = [ln.rstrip() for ln in str(error).strip().splitlines() if ln.strip()]
    if not lines:
        return "unknown error"
    if not lines[0].startswith("Traceback"):
        return lines[0].strip()[:300]
    frames = [i for i, ln in enumerate(lines) if ln.startswith("  File ")]
    after = lines[frames[-1] + 1:] if frames else lines[1:]
    return next((ln for ln in after if not ln.startswith(" ")), lines[-1]).strip()[:300]


def clip_error(error: str, limit: int = STORED_ERROR) -> str:
    """``error`` cut to ``limit`` characters for a table, its :func:`headline` first: the
    last ``limit`` characters of a long traceback began in its middle, and the summary's
    ``first_error`` showed a line of code instead of the exception (or the plugin's
    message)."""
    text = str(error)
    if len(text) <= limit:
        return text
    head = headline(text)
    return f"{head}\n...\n{text[-max(0, limit - len(head) - 5):]}"
