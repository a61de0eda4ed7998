"""`raudit generators`: what can be trained and audited, with each option's default."""

from __future__ import annotations

from raudit import generators as registry
from raudit.cli import tables
from raudit.cli.errors import user_errors


def _caps(c) -> str:
    flags = [f for f, on in (("device", c.device), ("progress", c.progress),
                             ("teachers-on-ray", c.teachers_on_ray)) if on]
    if c.events:
        flags.append("events: " + "/".join(c.events))
    flags.extend(f"note: {n}" for n in getattr(c, "notes", ()))
    return ", ".join(flags)


def option_defaults(caps) -> str:
    """``name=default`` per option; a None default is decided by the preset (or, for
    device/dtype, at run time), so it reads ``name=(preset)`` / ``name=(auto)``."""
    def one(o) -> str:
        if o.default is None:
            return f"{o.name}=({'auto' if o.name in ('device', 'dtype') else 'preset'})"
        return f"{o.name}={o.default:g}" if isinstance(o.default, float) else \
            f"{o.name}={o.default}"
    return ", ".join(one(o) for o in caps.options or ())


@user_errors
def generators(fmt: tables.Format = "auto") -> None:
    """List the registered generators with their options (name=default; set them with
    -o NAME=VALUE) and capabilities."""
    tables.check_format(fmt)
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
