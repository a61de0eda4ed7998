"""`raudit generators`: what can be trained and audited."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from raudit import generators as registry
from raudit.cli.errors import user_errors
from raudit.generators.kwargs import option_names


def _caps(c) -> str:
    flags = [f for f, on in (("device", c.device), ("progress", c.progress),
                             ("teachers-on-ray", c.teachers_on_ray)) if on]
    if c.events:
        flags.append("events: " + "/".join(c.events))
    flags.extend(f"note: {n}" for n in getattr(c, "notes", ()))
    return ", ".join(flags)


def _option_table(name: str) -> Table:
    """One generator's options as its class declares them (for the ports: the fields of
    its options object, with their closed value sets and the upstream defaults)."""
    table = Table("option", "values", "default", title=f"{name}: -o KEY=VALUE")
    for o in registry.get(name).describe().options or ():
        values = " | ".join("null" if v is None else str(v) for v in o.choices) if o.choices else o.type
        table.add_row(o.name, values, "null" if o.default is None else str(o.default))
    return table


@user_errors
def generators(name: Annotated[Optional[str], typer.Argument(
        help="Show this generator's options: values and defaults.")] = None) -> None:
    """List the registered generators with their options (NAME: one generator's options in full)."""
    if name is not None:
        Console().print(_option_table(name))
        return
    table = Table("name", "description", "options", "capabilities")
    for name in registry.names():
        try:
            cls = registry.get(name)
        except Exception as exc:  # a broken plugin should not hide the others
            table.add_row(name, f"[red]cannot load: {exc}[/red]", "", "")
            continue
        table.add_row(name, cls.description, ", ".join(option_names(cls)), _caps(cls.describe()))
    Console().print(table)
