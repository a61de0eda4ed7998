"""The `raudit` command: one Typer app per command group, joined here."""

from __future__ import annotations

import typer

from raudit import __version__

app = typer.Typer(
    name="raudit",
    help="Audit differentially private synthetic-data generators: train them, attack them, "
         "and measure how much they really leak.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"raudit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Show the version and exit.")) -> None:
    """raudit: the PATE-GAN family and friends, audited by measurement."""


def _mount() -> None:
    from raudit.cli.datasets import app as datasets_app
    from raudit.cli.generators import generators
    from raudit.cli.train import train
    from raudit.cli.utility import utility

    app.command(help=train.__doc__)(train)
    app.command(help=utility.__doc__)(utility)
    app.command(name="generators", help=generators.__doc__)(generators)
    app.add_typer(datasets_app, name="datasets", help="List, describe and import datasets.")
    try:
        from raudit.cli.audit import audit
    except ImportError:  # the audit command arrives with the audit package
        return
    app.command(help=audit.__doc__)(audit)


_mount()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
