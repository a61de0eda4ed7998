"""`updated`'s deviations from the paper, one frozen object; the defaults are the authors'
updated release's (spec section 2).

What each switch means: the module docstring of :mod:`~raudit.generators.pategan.ports.updated.port`
and docs/generators/pategan.md (checked against these defaults). ``accountant`` stays an
open string: its values are the accountant registry's variants (checked by the port).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from raudit.generators.capabilities import OptionsObject


@dataclass(frozen=True)
class UpdatedOptions(OptionsObject):
    teachers: int | None = None  # None: max(2, N // 1000)
    batch: int | None = None  # None: the preset's rule
    lam: float = 1e-3
    orders: int = 20
    max_iter: int | None = None  # None: the preset's cap
    lr: float = 1e-4
    student_steps: int | None = None  # None: 1 (default preset) or 5 (paper)
    clip: float = 0.01
    partition: Literal["stale", "disjoint"] = "stale"
    noise_scale: Literal["direct", "inverse"] = "direct"  # Lap(lambda), as released
    accountant: str = "updated"
    bounds: Literal["data", "metadata"] = "data"
    integers: Literal["round", "none"] = "round"
