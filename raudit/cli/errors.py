"""The CLI's error boundary: user errors become one line on stderr and exit code 2."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from typing import NoReturn, ParamSpec, TypeVar

import typer

from raudit.errors import RauditError, Terminated, was_terminated

USER_ERROR = 2

P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str, code: int = USER_ERROR) -> NoReturn:
    """Print ``error: message`` on one line and exit with ``code`` (2: bad input)."""
    print(f"error: {' '.join(str(message).split())}", file=sys.stderr)
    raise typer.Exit(code)


def _leave_now(message: str, code: int) -> NoReturn:
    """Say ``message`` and exit without Python's shutdown: Ray's exit hook would wait a
    minute for a head that is gone, or Ray would end the process without a word."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(code)


@contextlib.contextmanager
def results_only_stdout() -> Iterator[None]:
    """Send everything written to stdout meanwhile to stderr, at the descriptor level.

    Ray's driver, raylet and workers print to file descriptor 1 ("(raylet) A worker
    died ..."), and child processes inherit it; `--json` output must stay parseable.
    The result is printed after the block, on the real stdout.
    """
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no real descriptor (a test runner)
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        os.dup2(sys.stderr.fileno(), fd)
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, fd)
        os.close(saved)


def interrupted(exc: BaseException | None) -> int:
    """Say that the run stopped and how to resume; the exit code (128 + the signal)."""
    term = was_terminated(exc)
    print(f"{'terminated (SIGTERM)' if term else 'interrupted'}: finished results are kept; "
          "rerun the same command to resume", file=sys.stderr, flush=True)
    return 128 + (Terminated.signum if term else 2)


def user_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn raudit's user errors (and missing files) into `fail`; keep real bugs loud."""
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except RauditError as exc:
            code = getattr(exc, "exit_code", USER_ERROR)  # the errors that have their own
            if getattr(exc, "abandon_ray", False):  # the Ray head/node is gone
                _leave_now(str(exc), code)
            fail(str(exc), code)
        except FileNotFoundError as exc:
            fail(f"file not found: {exc.filename or exc}")
        except KeyboardInterrupt as exc:
            raise typer.Exit(interrupted(exc)) from None
    return wrapper
