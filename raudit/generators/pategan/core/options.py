"""Option checks and preset rules shared by the PATE-GAN ports."""

from __future__ import annotations

from dataclasses import dataclass

from raudit.errors import ConfigError

PRESETS = ("default", "paper")


def check_preset(preset: str) -> str:
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return preset


def teachers_for(n_rows: int, teachers: int | None, *, ratio: int = 1000, minimum: int = 2) -> int:
    """The study's harness: k = max(2, N // ratio) unless given; 1 <= k <= N."""
    k = max(minimum, n_rows // ratio) if teachers is None else int(teachers)
    if k < 1:
        raise ConfigError(f"teachers must be at least 1, got {k}")
    if k > n_rows:
        raise ConfigError(f"{k} teachers for {n_rows} training rows: each teacher needs a row; "
                          f"use --teachers {max(1, n_rows // 2)} or fewer")
    return k


def check_pate_options(preset: str, lam, orders, batch, max_iter) -> None:
    """The checks every PATE-GAN constructor starts with, in this order."""
    check_preset(preset)
    positive("lambda", lam)
    positive("orders", orders, integer=True)
    positive("batch", batch, integer=True, allow_none=True)
    positive("max_iter", max_iter, integer=True, allow_none=True)


def positive(name: str, value, *, integer: bool = False, allow_none: bool = False):
    """Check a positive option (a one-line error naming it otherwise)."""
    if value is None and allow_none:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    if integer:
        ok = ok and float(value).is_integer()
    if not ok:
        kind = "a positive integer" if integer else "a positive number"
        raise ConfigError(f"{name} must be {kind}, got {value!r}")
    return int(value) if integer else float(value)


def choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def pate_schedule(preset: str, n_rows: int, *, teachers: int | None, batch: int | None,
                  max_iter: int | None, batch_cap: int = 64, iteration_cap: int = 10_000
                  ) -> tuple[int, int, int | None]:
    """(k, batch, max_iter) of a PATE port under a preset.

    ``default`` is the study's harness: k = max(2, N // 1000), batch min(cap, N // k),
    at most 10,000 iterations. ``paper`` is the paper's batch and no iteration cap.
    Explicit values always win.
    """
    k = teachers_for(n_rows, teachers)
    if preset == "paper":
        return k, batch or batch_cap, max_iter
    return k, batch or max(1, min(batch_cap, n_rows // k)), max_iter or iteration_cap


@dataclass(frozen=True)
class PateHP:
    """Hyperparameters of the PATE-GAN family resolved for one table size (paper and
    the ports alike); tables whose values agree train together in one batched call."""

    teachers: int
    batch: int
    lam: float
    orders: int
    max_iter: int | None
    lr: float
    teacher_steps: int
    student_steps: int
    noise_scale: str = "inverse"  # Lap(1/lambda) (every port) | "direct" Lap(lambda)
    aggregation: str = "argmax"
    generator_loss: str = "saturating"
