"""`turing`'s deviations from the paper, one frozen object; the defaults are reprosyn's.

What each switch means: the table on :class:`~raudit.generators.wgan.turing.port.
TuringPateGan` and docs/generators/pategan.md (checked against these defaults).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from raudit.generators.capabilities import OptionsObject


@dataclass(frozen=True)
class TuringOptions(OptionsObject):
    truthy: ClassVar[tuple[str, ...]] = ("encoding_bug", "shuffle", "one_hot", "extra_column")

    teachers: int | None = None  # critic steps per iteration; None: max(2, N // 1000)
    batch: int | None = None  # None: the preset's rule
    max_iter: int | None = None  # None: the class's default_max_iter (100)
    lr: float = 1e-4
    gp_coef: float | None = None  # None: the number of critic steps, as reprosyn
    noise: Literal["gaussian", "laplace"] = "gaussian"
    delta_bug: Literal["power", "correct"] = "power"  # sigma with 1.25 * 10**delta
    partition: Literal["none", "disjoint"] = "none"
    bounds: Literal["data", "metadata"] = "data"
    encoding_bug: bool = True  # scaling divides by max, not max - min
    integers: Literal["round", "truncate", "none"] = "truncate"
    shuffle: bool = True
    one_hot: bool = False
    extra_column: bool = False
    generator_widths: Literal["d,d,d", "d,d/2,d"] | None = None  # None: the preset's
