"""`synthcity`'s deviations from the paper, one frozen object; the defaults are synthcity's
PATE-GAN plugin's (spec section 6).

What each switch means: the module docstring of :mod:`~raudit.generators.pategan.ports.synthcity.port`
and docs/generators/pategan.md (checked against these defaults). ``accountant`` stays an
open string: its values are the accountant registry's variants (checked by the port).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from raudit.generators.capabilities import OptionsObject


@dataclass(frozen=True)
class SynthcityOptions(OptionsObject):
    teachers: int | None = None  # None: max(2, N // 1000)
    batch: int | None = None  # None: the preset's rule
    lam: float = 1e-3
    orders: int = 100
    max_iter: int | None = None  # None: the preset's cap
    lr: float = 1e-4
    epochs: int = 10
    weight_decay: float = 1e-3
    clip: float = 1.0
    gp: float = 10.0
    latent: int = 100
    accountant: str = "synthcity-index-bug"
    early_return: bool = True
    delta_rule: Literal["forced", "given"] = "forced"  # upstream forces 1/(N sqrt N)
    teacher_data: Literal["batch", "partition"] = "batch"
    integers: Literal["astype", "round"] = "astype"
