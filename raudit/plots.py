"""Matplotlib helpers: the Agg backend (no display), atomic PNG writes, safe file names."""

from __future__ import annotations

import io
import numbers
import re
from pathlib import Path

from raudit.results.files import write_atomic

DPI = 110


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path, dpi: int = DPI) -> Path:
    """Write ``fig`` as PNG to ``path`` (atomically: no reader sees half a file) and close it."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=dpi)
    pyplot().close(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda fh: fh.write(buf.getvalue()))
    return path


def eps_axis(ax) -> None:
    """A log-scale epsilon x axis labelled in plain numbers (0.5, 1, 2, 10), ticked at the
    epsilons plotted: matplotlib's log labels read "2x10^0" for 2."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log")
    # the data lines carry markers; reference lines (axhline, axvline) do not
    xs = sorted({float(x) for line in ax.get_lines() if line.get_marker() not in (None, "None", "")
                 for x in line.get_xdata() if isinstance(x, numbers.Real) and float(x) > 0})
    if xs:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("epsilon")


def slug(*parts) -> str:
    """A file-name-safe name from parts (job names and impls may hold ':' or '/')."""
    text = "-".join(str(p) for p in parts if p not in (None, ""))
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"
