"""``raudit datasets``: list, inspect and import datasets.

Mounted by the main app with ``add_typer(app, name="datasets")``. Commands raise
:class:`raudit.errors.RauditError` subclasses; the main app turns them into one
line on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Mapping
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from raudit import data
from raudit.cli import options as opt
from raudit.cli import tables
from raudit.cli.errors import user_errors

app = typer.Typer(
    help="List the registered datasets, show one in detail, or import a downloaded file.",
    no_args_is_help=True,
)
_MAX_COLUMNS = 30  # rows of the column table shown unless --all-columns


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _here(info: Mapping[str, Any]) -> str:
    if not info["available"]:
        return f"no ({info['status']})"
    return "partial" if info["status"].startswith("partial") else f"yes ({info['status']})"


@app.command("list")
@user_errors
def list_datasets(fmt: tables.Format = "auto") -> None:
    """A table of the registered datasets and whether their files are on this machine."""
    tables.check_format(fmt)
    rows = []
    for name in data.names():
        i = data.info(name)
        rows.append([name, _count(i["rows"]), _count(i["columns"]), _count(i["positives"]),
                     i["label_rule"], i["title"], _here(i)])
    tables.show(["name", "rows", "cols", "positives", "label", "source", "available here?"],
                rows, fmt=fmt, right=("rows", "cols", "positives"),
                title="datasets (rows, columns and positives of the full cleaned table)")


def _measured(ds: data.Dataset) -> dict[str, Any]:
    binary = ds.classes == 2  # mnist10's digit has no "positives"
    return {
        "train_rows": len(ds.train), "test_rows": len(ds.test), "classes": ds.classes,
        "train_positives": int(ds.train.iloc[:, -1].sum()) if binary else None,
        "test_positives": int(ds.test.iloc[:, -1].sum()) if binary else None,
        "label": ds.label, "notes": ds.notes,
        "column_meta": [
            {"name": c.name, "kind": c.kind, "lower": c.lower, "upper": c.upper,
             "bounds": c.bounds, "categories": list(c.categories)} for c in ds.columns
        ],
    }


@app.command("info")
@user_errors
def info(
    name: Annotated[str, typer.Argument(help="A registered dataset name (see `raudit datasets list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    all_columns: Annotated[bool, typer.Option("--all-columns", help="Show every column's metadata.")] = False,
    seed: Annotated[int, typer.Option(parser=opt.parse_seed, metavar="INTEGER", help="Split seed used for the measured train/test sizes.")] = 13,
) -> None:
    """Provenance, files and, when the files are here, the measured split and column metadata.

    Never downloads: a dataset whose files are missing shows its provenance only.
    """
    details = data.info(name)
    if details["available"]:
        details |= _measured(data.load(name, seed=seed))
    if as_json:
        typer.echo(json.dumps(details, indent=2, default=str))
        return
    console = Console()
    head = Table(show_header=False, title=f"dataset {name}")
    for key in ("title", "label_rule", "rows", "columns", "positives", "licence", "homepage",
                "status", "split", "train_rows", "test_rows", "train_positives", "test_positives"):
        if key in details:
            value = details[key]
            head.add_row(key, _count(value) if isinstance(value, int) or value is None else str(value))
    for f in details["files"]:
        head.add_row(f"file ({f['role']})", f"{f['relpath']} -> {f['path'] or 'not here'}")
    console.print(head)
    if "column_meta" not in details:
        console.print("Files not here: `raudit datasets import PATH` or set RAUDIT_DATA_DIR; "
                      "loading it downloads the files where a URL is known.")
        return
    cols = Table(title="columns")
    for c in ("name", "kind", "lower", "upper", "bounds"):
        cols.add_column(c)
    meta = details["column_meta"]
    shown = meta if all_columns or len(meta) <= _MAX_COLUMNS else meta[: _MAX_COLUMNS - 1] + meta[-1:]
    for m in shown:
        cols.add_row(m["name"], m["kind"], f"{m['lower']:g}", f"{m['upper']:g}", m["bounds"])
    console.print(cols)
    if len(shown) < len(meta):
        console.print(f"{len(meta) - len(shown)} more columns not shown; use --all-columns")


@app.command("import")
@user_errors
def import_file(
    path: Annotated[Path, typer.Argument(help="A downloaded dataset file (e.g. creditcard.csv).")],
    name: Annotated[str | None, typer.Option(help="The dataset it belongs to; found by checksum if left out.")] = None,
) -> None:
    """Copy a file into the cache after checking its sha256, so loads find it offline."""
    dest = data.import_file(path, name)
    typer.echo(f"imported {path} -> {dest}")
