"""Help screens that read cleanly: Typer 0.29 labels every option with its Python type,
so a flag reads ``--json <bool>`` (a flag takes no value), a repeatable option
``<list[str]>``, and an argument's usage ``{results}``. :func:`tidy` walks the built click
command once and sets plain metavars: nothing after a flag, ``<str>...`` for a repeatable
option, the argument's name in capitals (``raudit report RESULTS``), as
click itself writes it."""

from __future__ import annotations

from collections.abc import Callable

# click's objects are read and set by attribute (getattr/setattr): Typer vendors its own
# click (typer._click) in some releases and not in others, so no one class names them.


def tidy(command: object) -> None:
    """Set the metavars of every parameter of ``command`` and its subcommands in place."""
    for param in getattr(command, "params", ()):
        if param.param_type_name == "argument":
            if param.metavar is None:
                param.metavar = param.name.upper()
            if hasattr(param, "_usage_display_name"):  # Typer writes a required one {name}
                shown = param.metavar if param.required else f"[{param.metavar}]"
                param._usage_display_name = lambda shown=shown: shown
        elif getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif param.metavar is None and _is_list(param):
            bare = param.bare_type()  # e.g. "list[str]"
            param.metavar = f"<{bare[5:-1] if bare.startswith('list[') else bare}>..."
    _tidy_help_option(command)
    for sub in getattr(command, "commands", {}).values():
        tidy(sub)


class _HelpOption:
    """click's --help factory with a plain metavar (``tidy`` marks it so it wraps once)."""

    def __init__(self, make: Callable[[object], object]) -> None:
        self.make = make

    def __call__(self, ctx: object) -> object:
        opt = self.make(ctx)
        if opt is not None:
            setattr(opt, "metavar", "")  # noqa: B010 - click's Option, by attribute
        return opt


def _tidy_help_option(command: object) -> None:
    """--help is made per context, not held in ``params``: wrap its factory."""
    make = getattr(command, "get_help_option", None)
    if make is None or isinstance(make, _HelpOption):
        return
    setattr(command, "get_help_option", _HelpOption(make))  # noqa: B010 - as above


def _is_list(param: object) -> bool:
    desc = getattr(param, "type_descriptor", None)
    return bool(getattr(desc, "is_list", False) or getattr(param, "multiple", False))
