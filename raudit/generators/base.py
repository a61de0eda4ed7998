"""The generator protocol.

A generator is fitted on an all-numeric DataFrame (label last) and samples
DataFrames in the same schema and scale::

    gen = raudit.generators.get("paper")(teachers=5)
    gen.fit(df, epsilon=1.0, seed=0)  # delta: the generator's declared rule
    synth = gen.sample(len(df), seed=1)

Implementation options go to the constructor (validated there); privacy
parameters and the seed go to ``fit`` as keyword-only arguments.

Audits train thousands of models. ``fit_many`` fits M independent models in
one call; the batched PATE-GAN family trains all M at once on the batched
engine, plugins inherit a loop over ``fit``. Model m of ``fit_many`` equals
``fit`` with ``seeds[m]`` (up to float tolerance).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError, DataError
from raudit.generators.capabilities import Capabilities, options_of
from raudit.events import Observer
from raudit.privacy import STUDY_DELTA

if TYPE_CHECKING:
    from raudit.generators.mechanism import DryRun


#: The largest epsilon taken. Far above any private setting (1e6 already makes PATE's votes
#: exact), and far enough below float64's top that the accountants' eps x order products
#: stay finite: 1e308 overflowed into warnings and a verdict line of 300 digits.
MAX_EPSILON = 1e12


def check_privacy(epsilon: float, delta: float | None) -> None:
    """Raise a ConfigError for eps <= 0 or above MAX_EPSILON, or delta outside (0, 1)."""
    if not (isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool)
            and math.isfinite(epsilon) and epsilon > 0):
        raise ConfigError(f"epsilon must be a positive number, got {epsilon!r}")
    if epsilon > MAX_EPSILON:
        raise ConfigError(f"epsilon {epsilon:g} is above raudit's ceiling of {MAX_EPSILON:g} "
                          "(1e6 is already non-private in practice); lower it")
    # a number checked as such: from Python, delta="x" would raise TypeError at the `<`
    if delta is not None and (isinstance(delta, bool) or not isinstance(delta, (int, float))
                              or not 0 < delta < 1):
        raise ConfigError(f"delta must be in (0, 1), got {delta!r}")


# A table whose ``attrs`` hold this key (True) may have a single label class: the
# distinguishing game's worlds can (the study's worst-case D_out is four (0,0,0) rows).
SINGLE_CLASS_OK = "raudit.single_class_ok"


def check_table(data: pd.DataFrame, *, allow_nan: bool = False) -> None:
    """Raise a DataError for tables no generator can take (see SINGLE_CLASS_OK)."""
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"expected a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0 or data.shape[1] < 2:
        raise DataError(f"the table is empty ({data.shape[0]} rows x {data.shape[1]} columns); "
                        "need rows and at least one feature plus the label")
    # from the dtypes, not data[c]: building a Series per column cost 8 ms per table,
    # as much as 20 iterations of training for an audit chunk
    non_numeric = [c for c, t in data.dtypes.items() if not pd.api.types.is_numeric_dtype(t)]
    if non_numeric:
        raise DataError(f"non-numeric columns {non_numeric[:5]}; encode them as numbers first "
                        "(a CSV or Parquet file given as --dataset FILE is encoded for you, its "
                        "text columns' categories declared in FILE's .categories.json: "
                        "docs/datasets.md)")
    if not allow_nan and np.isnan(data.to_numpy(dtype=float)).any():
        cols = data.columns[data.isna().any()].tolist()
        raise DataError(f"NaN values in columns {cols[:5]}; this generator cannot take missing "
                        "values: impute them first")
    label = data.iloc[:, -1].to_numpy()
    if (label == label[0]).all() and not data.attrs.get(SINGLE_CLASS_OK):
        raise DataError(f"the label column {data.columns[-1]!r} has a single class; "
                        "need both classes")


def group_tables(tables: Sequence[pd.DataFrame], seeds: Sequence[int], *, epsilon: float,
                 delta: float | None, allow_nan: bool, key) -> dict[Any, list[int]]:
    """Check a ``fit_many`` call, then group its tables by ``key(table)`` (index lists in
    order): for generators whose encoded layout depends on the records (one-hot widths),
    so that only tables of one layout train together in a batched call."""
    check_privacy(epsilon, delta)
    if len(tables) != len(seeds):
        raise ConfigError(f"{len(tables)} tables but {len(seeds)} seeds")
    groups: dict[Any, list[int]] = {}
    # once per distinct table object: an audit chunk passes one table M times, and the
    # key (smartnoise's column plan) reads every value of it
    keys: dict[int, Any] = {}
    for i, t in enumerate(tables):
        if id(t) not in keys:
            check_table(t, allow_nan=allow_nan)
            keys[id(t)] = key(t)
        groups.setdefault(keys[id(t)], []).append(i)
    return groups


class Generator(ABC):
    """A synthetic-data generator; subclasses register under ``name``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    allow_nan: ClassVar[bool] = False
    default_delta: ClassVar[float | None] = STUDY_DELTA  # a pure-DP mechanism sets None
    capabilities: ClassVar[Capabilities] = Capabilities()
    # the names ``preset=`` takes (``raudit generators NAME`` lists them): the constants the
    # constructor checks against, so the list cannot drift from what it accepts
    presets: ClassVar[tuple[str, ...]] = ("default",)

    @classmethod
    def describe(cls) -> Capabilities:
        """The declared capabilities, with the constructor's options (name, type, default)."""
        return cls.capabilities.with_options(options_of(cls))

    def __init__(self, **options: Any) -> None:
        self.options = dict(options)
        self.summary_: dict[str, Any] = {}

    # -- fitting ----------------------------------------------------------
    def fit(self, data: pd.DataFrame, *, epsilon: float, delta: float | None = None,
            seed: int = 0, columns: Sequence[ColumnMeta] | None = None,
            observer: Observer | None = None) -> "Generator":
        """Fit one model; returns self."""
        delta = self.default_delta if delta is None else delta
        check_privacy(epsilon, delta)
        check_table(data, allow_nan=self.allow_nan)
        self._fit(data, epsilon=epsilon, delta=delta, seed=seed,
                  columns=tuple(columns) if columns else None, observer=observer)
        return self

    def check(self, data: pd.DataFrame, *, epsilon: float, delta: float | None = None,
              columns: Sequence[ColumnMeta] | None = None) -> None:
        """Raise a RauditError for settings that cannot train on ``data``, without training.

        Audits call this on both worlds before any work starts. The default checks the
        privacy parameters, the table, and the hyperparameters a generator resolves from
        the table's shape (``resolve(n_rows, n_cols)``, e.g. more teachers than rows);
        generators with other table-dependent limits extend it.
        """
        check_privacy(epsilon, self.default_delta if delta is None else delta)
        check_table(data, allow_nan=self.allow_nan)
        resolve = getattr(self, "resolve", None)
        if callable(resolve):
            resolve(len(data), data.shape[1])

    def mechanism(self, table: pd.DataFrame, *, epsilon: float, delta: float,
                  columns: Sequence[ColumnMeta] | None = None) -> "DryRun | None":
        """The releases one model makes when fitted on ``table`` at (epsilon, delta),
        without training (:mod:`raudit.generators.mechanism`), or None where they depend
        on training (one run's events give them). Raises a one-line ConfigError for an
        option the dry run does not model. The default: None."""
        return None

    def has_dry_run(self) -> bool:
        """Whether :meth:`mechanism` gives the releases without a table's records (only
        its shape and column bounds): the options alone decide."""
        return False

    @abstractmethod
    def _fit(self, data: pd.DataFrame, *, epsilon: float, delta: float | None, seed: int,
             columns: tuple[ColumnMeta, ...] | None, observer: Observer | None) -> None: ...

    def fit_many(self, tables: Sequence[pd.DataFrame], *, epsilon: float,
                 delta: float | None = None, seeds: Sequence[int],
                 columns: Sequence[ColumnMeta] | None = None,
                 observer: Observer | None = None) -> list["Generator"]:
        """Fit M independent models (model m on ``tables[m]`` with ``seeds[m]``).

        The base version loops; batched generators override it with one call.
        """
        if len(tables) != len(seeds):
            raise ConfigError(f"{len(tables)} tables but {len(seeds)} seeds")
        return [type(self)(**self.options).fit(t, epsilon=epsilon, delta=delta, seed=s,
                                                columns=columns, observer=observer)
                for t, s in zip(tables, seeds)]

    def chunk_dependence(self, n_rows: int, n_cols: int) -> str | None:
        """Why a model's numbers could depend on the chunk it trains in (the other models
        stacked with it, its position), for a table of this size, in a few words; None
        when they cannot. Generators that fit each model alone (this base class) cannot.
        ``-M auto`` reads it (:mod:`raudit.runs.chunk_size`)."""
        return None

    # -- sampling ---------------------------------------------------------
    @abstractmethod
    def sample(self, n: int, *, seed: int = 0) -> pd.DataFrame:
        """n synthetic rows in the fitted table's schema and scale."""

    def delta_rule(self) -> float | str | None:
        """How this generator picks delta when none is given: a number, the name of a
        rule in :data:`raudit.privacy.DELTA_RULES` (e.g. ``"1/(N sqrt N)"``), or None for
        a mechanism that ignores delta (pure DP). :class:`raudit.privacy.PrivacySpec`
        resolves it once for train and audit alike."""
        return self.default_delta

    def summary(self) -> dict[str, Any]:
        """What training did: at least ``iterations`` and ``eps_hat`` (NaN if none)."""
        return dict(self.summary_)
