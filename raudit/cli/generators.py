"""`raudit generators`: what can be trained and audited."""

from __future__ import annotations

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


@user_errors
def generators() -> None:
    """List the registered generators with their options."""
    table = Table("name", "description", "options", "capabilities")
    for name in registry.names():
        try:
            cls = registry.get(name)
        except Exception as exc:  # a broken plugin should not hide the others
            table.add_row(name, f"[red]cannot load: {exc}[/red]", "", "")
            continue
        table.add_row(name, cls.description, ", ".join(option_names(cls)), _caps(cls.describe()))
    Console().print(table)
