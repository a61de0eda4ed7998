"""`borealis`'s deviations from the paper, one frozen object; the defaults are the
private-data-generation repository's (spec section 3).

What each switch means: the module docstring of :mod:`~raudit.generators.pategan.ports.borealis.port`
and docs/generators/pategan.md (checked against these defaults). ``accountant`` stays an
open string: its values are the accountant registry's variants (checked by PortPateGan).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from raudit.generators.capabilities import OptionsObject


@dataclass(frozen=True)
class BorealisOptions(OptionsObject):
    teachers: int | None = None  # None: max(2, N // 1000)
    batch: int | None = None  # None: the preset's rule
    lam: float = 1e-4
    orders: int = 100
    max_iter: int | None = None  # None: the preset's cap
    lr: float = 1e-4
    teacher_steps: int = 5
    student_steps: int = 5
    accountant: str = "missing-log"
    check: Literal["after", "top"] = "after"
    generation_noise: Literal["normal", "uniform"] = "normal"
    partition: Literal["contiguous", "shuffled"] = "contiguous"
    aggregation: Literal["threshold", "argmax"] = "threshold"
    generator_loss: Literal["non-saturating", "saturating"] = "non-saturating"
    teacher_fakes: Literal["per-teacher", "shared"] = "per-teacher"
    teacher_update: Literal["joint", "split"] = "joint"
    bounds: Literal["data", "metadata"] = "data"
    integers: Literal["round", "none"] = "round"
