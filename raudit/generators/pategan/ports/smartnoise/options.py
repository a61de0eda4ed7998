"""`smartnoise`'s deviations from the paper, one frozen object; the defaults are OpenDP
SmartNoise synth's PATEGAN (spec section 4).

What each switch means: the module docstring of :mod:`~raudit.generators.pategan.ports.smartnoise.port`
and docs/generators/pategan.md (checked against these defaults). ``accountant`` stays an
open string: its values are the accountant registry's variants (checked by PortPateGan).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from raudit.errors import ConfigError
from raudit.generators.capabilities import OptionsObject
from raudit.generators.pategan.core.options import positive


@dataclass(frozen=True)
class SmartNoiseOptions(OptionsObject):
    teachers: int | None = None  # None: max(2, N // 1000)
    batch: int | None = None  # None: the preset's rule
    lam: float = 1e-3
    orders: int = 100
    max_iter: int | None = None  # None: the preset's cap
    lr: float = 1e-4
    teacher_steps: int = 5
    student_steps: int = 5
    latent_dim: int = 64
    binary: bool = False
    accountant: str = "missing-log"
    check: Literal["after", "top"] = "top"
    generation_noise: Literal["normal", "uniform"] = "normal"
    partition: Literal["contiguous", "shuffled"] = "contiguous"
    aggregation: Literal["threshold", "argmax"] = "threshold"
    generator_loss: Literal["non-saturating", "saturating"] = "non-saturating"
    teacher_fakes: Literal["per-teacher", "shared"] = "per-teacher"
    teacher_update: Literal["joint", "split"] = "joint"
    encoding: Literal["study", "library"] = "study"
    bounds: Literal["data", "metadata", "dp"] = "data"
    preprocessor_eps: float = 0.0  # the library's DP bounds budget, spent before training
    integers: Literal["round", "none"] = "round"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "latent_dim", positive("latent_dim", self.latent_dim, integer=True))
        if not isinstance(self.binary, bool):  # strict: upstream's flag is a real bool
            raise ConfigError(f"binary must be true or false, got {self.binary!r}")
        eps = self.preprocessor_eps
        if not (isinstance(eps, (int, float)) and not isinstance(eps, bool) and eps >= 0):
            raise ConfigError(f"preprocessor_eps must be a number >= 0, got {eps!r}")
        object.__setattr__(self, "preprocessor_eps", float(eps))
