"""Tables that survive pipes: a boxed rich table on a terminal, plain aligned columns with
every name in full when stdout is not one (``| cat``, ``| grep``, a log file), or CSV/JSON
on request (``--format``).

Rich sizes a table to the terminal and cuts cells with an ellipsis; off a terminal it
assumes 80 columns, so ``raudit datasets list | cat`` printed ``breast-c…``. Here nothing
is ever cut: on a terminal long cells wrap (``overflow="fold"``), and the first column
(the name) never wraps.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Sequence
from typing import Annotated, TextIO

import typer

from raudit.errors import ConfigError

FORMATS = ("auto", "table", "plain", "csv", "json")

Format = Annotated[str, typer.Option(
    "--format", help="auto (a table on a terminal, plain columns when piped), table, plain, "
                     "csv or json. Every format prints names in full.")]


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ConfigError(f"--format takes {', '.join(FORMATS)}, got {fmt!r}")
    return fmt


def resolve(fmt: str, stream: TextIO | None = None) -> str:
    """``auto`` -> ``table`` on a terminal, ``plain`` otherwise."""
    check_format(fmt)
    if fmt != "auto":
        return fmt
    stream = stream or sys.stdout
    return "table" if getattr(stream, "isatty", lambda: False)() else "plain"


def plain(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns two spaces apart, every cell in full (newlines become spaces),
    one line per row: what ``grep`` and ``cut`` expect."""
    cells = [[" ".join(str(c).split()) for c in r] for r in [list(columns), *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in cells)


def render(columns: Sequence[str], rows: Sequence[Sequence[str]], *, fmt: str = "auto",
           title: str = "", right: Sequence[str] = (), notes: Sequence[str] = ()) -> str:
    """The table as text in ``fmt`` (see the module docstring); ``right``: the columns to
    right-align on a terminal; ``title`` and ``notes`` frame the table and plain formats."""
    fmt = resolve(fmt)
    rows = [[("" if c is None else str(c)) for c in r] for r in rows]
    if fmt == "json":
        return json.dumps([dict(zip(columns, r)) for r in rows], indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    if fmt == "plain":
        parts = [title] if title else []
        return "\n".join(parts + [plain(columns, rows), *notes])
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title or None, title_justify="left")
    for i, c in enumerate(columns):
        t.add_column(c, justify="right" if c in right else "left", overflow="fold",
                     no_wrap=i == 0)
    for r in rows:
        t.add_row(*r)
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=Console().width)  # the terminal's
    console.print(t)
    for n in notes:
        console.print(n, highlight=False, markup=False)
    return buf.getvalue().rstrip("\n")


def show(columns: Sequence[str], rows: Sequence[Sequence[str]], *, fmt: str = "auto",
         title: str = "", right: Sequence[str] = (), notes: Sequence[str] = ()) -> None:
    """Print :func:`render` to stdout."""
    typer.echo(render(columns, rows, fmt=fmt, title=title, right=right, notes=notes))
