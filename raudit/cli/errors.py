"""The CLI's error boundary: user errors become one line on stderr and exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

import typer

from raudit.errors import RauditError

USER_ERROR = 2


def fail(message: str) -> None:
    """Print ``error: message`` on one line and exit 2."""
    print(f"error: {' '.join(str(message).split())}", file=sys.stderr)
    raise typer.Exit(USER_ERROR)


def user_errors(fn: Callable) -> Callable:
    """Turn raudit's user errors (and missing files) into `fail`; keep real bugs loud."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RauditError as exc:
            fail(str(exc))
        except FileNotFoundError as exc:
            fail(f"file not found: {exc.filename or exc}")
        except KeyboardInterrupt:
            print("interrupted: finished results are kept; rerun the same command to resume",
                  file=sys.stderr)
            raise typer.Exit(130)
    return wrapper
