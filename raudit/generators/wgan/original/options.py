"""`original`'s deviations from the paper, one frozen object; the defaults are the release's.

The table of what each switch means is on :class:`~raudit.generators.wgan.original.port.
OriginalPateGan` and in docs/generators/pategan.md (checked against these defaults).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from raudit.generators.capabilities import OptionsObject


@dataclass(frozen=True)
class OriginalOptions(OptionsObject):
    truthy: ClassVar[tuple[str, ...]] = ("conditional",)

    teachers: int | None = None  # critic steps per iteration; None: max(2, N // 1000)
    batch: int | None = None  # None: the preset's rule
    max_iter: int | None = None  # None: the class's default_max_iter (10,000)
    lr: float = 1e-4
    gp_coef: float = 10.0
    noise: Literal["gaussian", "laplace"] = "gaussian"
    delta_bug: Literal["xor", "correct"] = "xor"  # sigma with 10 XOR 5 = 15, as released
    partition: Literal["none", "disjoint"] = "none"  # every critic step reads all the data
    bounds: Literal["data", "metadata"] = "data"
    integers: Literal["round", "truncate", "none"] = "round"
    conditional: bool = False  # the 2019 conditional mode
    generator_widths: Literal["d,d,d", "d,d/2,d"] | None = None  # None: the preset's
