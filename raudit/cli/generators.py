"""`raudit generators`: what can be trained and audited, with each option's default;
`raudit generators NAME`: one generator's options in full (values and defaults)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from raudit import generators as registry
from raudit.cli import tables
from raudit.cli.errors import user_errors
from raudit.generators.capabilities import Capabilities, OptionSpec


def _caps(c: Capabilities) -> str:
    flags = [f for f, on in (("device", c.device), ("progress", c.progress),
                             ("teachers-on-ray", c.teachers_on_ray)) if on]
    if c.events:
        flags.append("events: " + "/".join(c.events))
    flags.extend(f"note: {n}" for n in getattr(c, "notes", ()))
    return ", ".join(flags)


def option_defaults(caps: Capabilities) -> str:
    """``name=default`` per option; a None default is decided by the preset (or, for
    device/dtype, at run time), so it reads ``name=(preset)`` / ``name=(auto)``."""
    def one(o: OptionSpec) -> str:
        if o.default is None:
            return f"{o.name}=({'auto' if o.name in ('device', 'dtype') else 'preset'})"
        return f"{o.name}={o.default:g}" if isinstance(o.default, float) else \
            f"{o.name}={o.default}"
    return ", ".join(one(o) for o in caps.options or ())


def _option_rows(name: str) -> list[list[str]]:
    """One generator's options as its class declares them (for the ports: the fields of
    its options object, with their closed value sets and the upstream defaults), each
    with its one-line description where the class gives one."""
    rows = []
    for o in registry.get(name).describe().options or ():
        values = " | ".join("null" if v is None else str(v) for v in o.choices) if o.choices \
            else o.type
        rows.append([o.name, values, "null" if o.default is None else str(o.default), o.help])
    return rows


@user_errors
def generators(name: Annotated[Optional[str], typer.Argument(
                   help="Show this generator's options in full: values and defaults.")] = None,
               fmt: tables.Format = "auto") -> None:
    """List the registered generators with their options (name=default; set them with
    -o NAME=VALUE) and capabilities; with NAME, that generator's options in full."""
    tables.check_format(fmt)
    if name is not None:
        tables.show(["option", "values", "default", "what"], _option_rows(name), fmt=fmt,
                    title=f"{name}: set with -o NAME=VALUE")
        return
    rows = []
    for name in registry.names():
        try:
            cls = registry.get(name)
        except Exception as exc:  # a broken plugin should not hide the others
            rows.append([name, f"cannot load: {exc}", "", ""])
            continue
        caps = cls.describe()
        rows.append([name, cls.description, option_defaults(caps), _caps(caps)])
    tables.show(["name", "description", "options (default)", "capabilities"], rows, fmt=fmt,
                notes=["(preset): set by --preset; (auto): chosen at run time."])
