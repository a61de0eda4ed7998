"""The one-line errors a test compares between the command and the Python API (issue 48:
the same message, exit code 2 for the command, a RauditError for the API)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from raudit.cli.app import app
from raudit.errors import RauditError


def cli_error(*args: str) -> str:
    """The command's error line, without its ``error: `` prefix (exit code 2)."""
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line, line
    return line[len("error: "):]


def api_error(fn, **kwargs) -> str:
    """The API's error message, whitespace folded as the terminal's one line shows it."""
    with pytest.raises(RauditError) as info:
        fn(**kwargs)
    return " ".join(str(info.value).split())
