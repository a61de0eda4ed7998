"""The CLI's error boundary: user errors become one line on stderr and exit code 2."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator

import typer

from raudit.errors import RauditError

USER_ERROR = 2


def fail(message: str, code: int = USER_ERROR) -> None:
    """Print ``error: message`` on one line and exit with ``code`` (2: bad input)."""
    print(f"error: {' '.join(str(message).split())}", file=sys.stderr)
    raise typer.Exit(code)


def script_error(script: str, message: object) -> int:
    """A benchmark script's bad input: ``script: message`` on stderr, and the exit code its
    ``main`` returns (2, as the CLI's user errors). For scripts outside the Typer app."""
    print(f"{script}: {message}", file=sys.stderr)
    return USER_ERROR


def _leave_now(message: str, code: int) -> None:
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


def user_errors(fn: Callable) -> Callable:
    """Turn raudit's user errors (and missing files) into `fail`; keep real bugs loud."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RauditError as exc:
            if getattr(exc, "abandon_ray", False):  # the Ray head/node is gone
                _leave_now(str(exc), exc.exit_code)
            fail(str(exc), getattr(exc, "exit_code", USER_ERROR))
        except FileNotFoundError as exc:
            fail(f"file not found: {exc.filename or exc}")
        except KeyboardInterrupt:
            print("interrupted: finished results are kept; rerun the same command to resume",
                  file=sys.stderr)
            raise typer.Exit(130) from None
    return wrapper
