"""Matplotlib helpers: the Agg backend (no display), atomic PNG writes, safe file names."""

from __future__ import annotations

import io
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


def slug(*parts) -> str:
    """A file-name-safe name from parts (job names and impls may hold ':' or '/')."""
    text = "-".join(str(p) for p in parts if p not in (None, ""))
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"
