"""Device choice: CUDA when present (or asked for), else CPU."""

from __future__ import annotations

import torch

from raudit.errors import ConfigError


def pick_device(name: str | None = None) -> torch.device:
    """``None``/``"auto"`` picks CUDA when available; ``"cpu"``/``"cuda[:i]"`` force one."""
    if name in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(name)
    except RuntimeError as exc:
        raise ConfigError(f"unknown device {name!r}; use auto, cpu or cuda") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device cuda was asked for but CUDA is not available; use --device cpu")
    return dev
