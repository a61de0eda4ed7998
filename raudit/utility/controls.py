"""The utility benchmark's data-free controls: what a generator reaches without the thing
it is supposed to learn from, fit by fit, so that "it learns" has a baseline.

Two kinds, one question each:

* ``coin``: every released vote or answer replaced by a fair coin inside the generator
  (:mod:`raudit.generators.pategan.core.aggregation`, :mod:`raudit.generators.gpate.dpgradagg`).
  Only generators whose labels come from votes declare it (``Capabilities.controls``):
  for them it removes everything the data can teach beyond the non-private preprocessing.
* ``shuffle``: the training table's label column permuted at random before the fit, for
  any generator (``dpgan``, ``gan``, the ports that do not vote, plugins). The features and
  the label's marginal stay; their link to the label goes, so the Setting B utility of the
  control (train on synthetic, test on real) is what the generator reaches by luck, by its
  preprocessing and by the marginals alone. The permutation of fit f depends on the run's
  root seed and f only (:func:`raudit.utility.plan.shuffle_seed`), the same at every eps.

Everything here is a pure function.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: control kind -> (short name for titles, what it replaces, in words)
KINDS: dict[str, tuple[str, str]] = {
    "coin": ("coin-flip control", "every released vote a fair coin"),
    "shuffle": ("label-shuffle control", "the training labels permuted before each fit"),
}
#: kinds any generator takes (they act on the data, not inside the generator)
DATA_LEVEL = ("shuffle",)


def title(kind: str | None) -> str:
    """``coin-flip control``; a generic word for a missing or unknown kind."""
    return KINDS.get(kind or "", ("control", ""))[0]


def words(kind: str | None) -> str:
    """What the control replaces, for a sentence's parenthesis ('' if unknown)."""
    return KINDS.get(kind or "", ("", ""))[1]


def shuffled_labels(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``table`` with its last column (the label) permuted by ``seed``; every other column
    and the row order untouched, so the label marginal is exactly the real one."""
    order = np.random.default_rng(int(seed)).permutation(len(table))
    out = table.copy()
    label = out.columns[-1]
    out[label] = table[label].to_numpy()[order]
    return out


def kind_of(points) -> str | None:
    """The control kind of a learning curve's points (one kind per run)."""
    kinds = {p.get("control") for p in points if p.get("control")}
    return next(iter(sorted(kinds))) if kinds else None
