"""The `raudit` command: one Typer app per command group, joined here."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

import typer

from raudit import __version__
from raudit.errors import RauditError

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
                                       help="Show the version and exit."),
          allow_unpinned: bool = typer.Option(
              False, "--allow-unpinned", help="Accept downloads of dataset files that have no "
              "pinned sha256 (credit, the full isolet); their sha256 is recorded in the cache "
              "and checked on every later load. Same as RAUDIT_ALLOW_UNPINNED=1.")) -> None:
    """raudit: the PATE-GAN family and friends, audited by measurement."""
    import os

    if os.environ.get("RAUDIT_COMPILE", "").strip():  # a bad value: one line before any work
        from raudit.errors import ConfigError
        from raudit.generators.nn import compiled

        try:
            compiled.mode()
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
    if allow_unpinned:
        from raudit.data.cache import ALLOW_UNPINNED
        os.environ[ALLOW_UNPINNED] = "1"


def _mount() -> None:
    # Every command is imported here, unguarded: a broken import fails `raudit` loudly
    # instead of silently dropping the command that needed it.
    from raudit.cli.audit import audit
    from raudit.cli.campaign import campaign
    from raudit.cli.crosscheck import crosscheck
    from raudit.cli.datasets import app as datasets_app
    from raudit.cli.generators import generators
    from raudit.cli.inspect import inspect
    from raudit.cli.report import report
    from raudit.cli.train import train
    from raudit.cli.upstream import app as upstream_app
    from raudit.cli.utility import utility

    app.command(help=train.__doc__)(train)
    app.command(help=utility.__doc__)(utility)
    app.command(name="generators", help=generators.__doc__)(generators)
    for command in (report, inspect):
        app.command(help=command.__doc__)(command)
    app.add_typer(datasets_app, name="datasets", help="List, describe and import datasets.")
    app.command(help=crosscheck.__doc__)(crosscheck)
    app.add_typer(upstream_app, name="upstream")
    app.command(help=audit.__doc__)(audit)
    app.command(help=campaign.__doc__)(campaign)


_mount()


def _click_exceptions() -> ModuleType:
    """Typer 0.2x vendors click as ``typer._click``; older releases use click itself."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:  # pragma: no cover - depends on the installed typer
        return importlib.import_module("click.exceptions")


def main(argv: list[str] | None = None) -> None:
    """Entry point: usage errors (a bad number, an unknown flag) become one line on stderr
    and exit 2, like raudit's own errors, instead of a usage box."""
    import signal

    from raudit.cli.errors import interrupted
    from raudit.cli.helptext import tidy
    from raudit.errors import on_sigterm

    if hasattr(signal, "SIGTERM"):  # a stop request ends a run as Ctrl-C does (errors.Terminated)
        signal.signal(signal.SIGTERM, on_sigterm)
    exc_mod = _click_exceptions()
    command = typer.main.get_command(app)
    tidy(command)  # plain metavars on the help screens (no `<bool>` after a flag)
    try:
        code = command(args=argv, standalone_mode=False)
    except exc_mod.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help())
        sys.exit(0)
    except exc_mod.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "raudit"
        print(f"error: {' '.join(exc.format_message().split())} (see `{where} --help`)",
              file=sys.stderr)
        sys.exit(2)
    except typer.Abort as exc:  # click's wrapping of a KeyboardInterrupt (or Terminated)
        sys.exit(interrupted(exc.__cause__ or exc.__context__))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except RauditError as exc:  # a command without its own boundary: still one line
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2))
    except FileNotFoundError as exc:
        print(f"error: file not found: {exc.filename or exc}", file=sys.stderr)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
