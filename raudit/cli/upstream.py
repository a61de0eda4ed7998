"""`raudit upstream`: install released implementations in their own environments.

    raudit upstream list
    raudit upstream setup smartnoise [--dir DIR] [--python PATH] [--force]
    raudit audit --impl exec:$(raudit upstream path smartnoise) ...
"""

from __future__ import annotations

import sys
import time
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from raudit.cli.errors import user_errors

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Install released implementations (e.g. smartnoise-synth) in isolated "
                       "environments and print their exec: configs.")

DIR_HELP = "root of the environments (default $RAUDIT_UPSTREAM_DIR or ~/.cache/raudit/upstream)"


@app.command("list")
@user_errors
def list_() -> None:
    """The released implementations: which can be set up here, which cannot and why."""
    from raudit.upstream import catalog, envs

    table = Table("name", "port", "released code", "set-up", "notes")
    for u in catalog.all_upstreams():
        state = envs.status(u) if u.installable else "not installable"
        table.add_row(u.name, u.impl, u.summary, state, u.notes)
    Console(width=160).print(table)


@app.command("setup")
@user_errors
def setup(name: str = typer.Argument(..., help="an installable name of `raudit upstream list`"),
          directory: Optional[str] = typer.Option(None, "--dir", help=DIR_HELP),
          python: Optional[str] = typer.Option(None, "--python",
                                               help="interpreter for the environment "
                                                    "(default: the catalog's version, found on "
                                                    "PATH, /usr/bin or pyenv)"),
          force: bool = typer.Option(False, "--force", help="rebuild even if complete"),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress lines")) -> None:
    """Create NAME's virtual environment, install its pinned requirements from the package
    index, and write the exec: config (a no-op when the environment is already complete)."""
    from raudit.upstream import catalog, envs

    u = catalog.get(name)
    started = time.monotonic()
    console = Console(stderr=True)
    if quiet or not sys.stderr.isatty():
        from raudit.cli.progress import every
        last = [started]

        def shown(line: str) -> None:
            # step lines always; the installer's own output (indented) as a heartbeat
            # every RAUDIT_PROGRESS_EVERY seconds, so a long install is never silent
            now = time.monotonic()
            if not line.startswith(" "):
                print(line, file=sys.stderr, flush=True)
            elif now - last[0] >= every():
                print(f"raudit: {u.name}: still installing, {now - started:.0f} s elapsed "
                      f"({line.strip()[:100]})", file=sys.stderr, flush=True)
            else:
                return
            last[0] = now
        result = envs.setup(u, directory=directory, python=python, force=force,
                            log=(lambda line: None) if quiet else shown)
    else:
        with console.status(f"setting up {u.name}") as spinner:
            def shown(line: str) -> None:
                spinner.update(f"[{time.monotonic() - started:5.0f} s] {line.strip()[:110]}")
            result = envs.setup(u, directory=directory, python=python, force=force, log=shown)
    took = time.monotonic() - started
    console.print(f"{u.name}: {result['action']} in {took:.0f} s; environment {result['env']}", soft_wrap=True)
    print(result["config"])


@app.command("path")
@user_errors
def path(name: str = typer.Argument(..., help="a name of `raudit upstream list`"),
         directory: Optional[str] = typer.Option(None, "--dir", help=DIR_HELP)) -> None:
    """Print the exec: config of a set-up environment (for --impl exec:PATH)."""
    from raudit.upstream import catalog, envs

    print(envs.config_path(catalog.get(name), directory))
