"""`raudit report`: the study's tables and figures from a results folder, as HTML or Markdown."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from raudit.cli import options as opt
from raudit.cli.errors import user_errors


@user_errors
def report(
    results: Annotated[Path, typer.Argument(help="A results folder: the --out of raudit audit, utility, inspect or campaign.")],
    out: Annotated[Path, typer.Option("--out", parser=opt.out_folder, help="Report folder: index.html (or report.md), figures/*.png, tables/*.csv.")] = Path("report"),
    fmt: Annotated[str, typer.Option("--format", help="html (a static page, images beside it) or md (Markdown).")] = "html",
    embed: Annotated[bool, typer.Option("--embed", help="html: inline the images in the page (one file to send).")] = False,
) -> None:
    """Write a report of a results folder: verdicts, eps_emp figure, ROC curves, utility tables, violations, provenance.

    Reads one audit, one utility run, one inspect run or a campaign (tables partitioned by job). Figures are PNGs (matplotlib), tables CSVs; the page needs no server and no JavaScript.
    """
    from raudit.report.build import build

    r = build(results, out, fmt=fmt, embed=embed,
              notice=lambda m: print(f"warning: {m}", file=sys.stderr))
    typer.echo(f"report: {r['page']} ({', '.join(r['sections'])}; {len(r['figures'])} "
               f"figures, {len(r['tables'])} tables)")
