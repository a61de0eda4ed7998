"""Everything a check may read: the run's settings, its trace, and the black-box probes.

The runner fills a :class:`Context` once; the checks are pure functions of it, so a
test can build one by hand (a trace from a few events, a synthetic table) and check
a single measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from raudit.inspect.trace import Trace

__all__ = ["Context", "Probe"]


@dataclass
class Probe:
    """A black-box probe: what was fed in, what came out (or why it could not run)."""

    data: pd.DataFrame | None = None
    synthetic: list[pd.DataFrame] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    skipped: str = ""  # the reason, when the probe could not run


@dataclass
class Context:
    """One inspected run. ``trace`` is None when the generator emitted no events."""

    impl: str
    epsilon: float
    delta: float
    train: pd.DataFrame
    synthetic: list[pd.DataFrame]  # samples of the inspected model, as many rows as train
    trace: Trace | None
    k: int | None = None  # teachers as configured (hyperparameters), None if unknown
    lam: float | None = None  # the accountant's lambda, None if the generator has none
    accountant_probe: Trace | None = None  # a short run at a larger lambda
    probe_lam: float | None = None
    probe_delta: float | None = None
    probe_skipped: str = ""
    bounds_probe: Probe | None = None
    # the run retrained with one teacher's rows permuted (:func:`..partition.permuted_partition`):
    # info {"teacher", "rows", "contributions" (k, ...)}; None where the run reports no inputs
    partition_probe: Probe | None = None
    public_bounds: tuple[int, int] = (0, 0)  # (columns with public bounds, columns)
    # the range each column's output may take by the generator's own claim (public or DP
    # bounds, never the records'), None when it makes none
    output_bounds: dict[str, tuple[float, float]] | None = None

    @property
    def n_rows(self) -> int:
        return len(self.train)
