"""Feature sets: one synthetic dataset -> one fixed-length feature vector.

A feature set is a pure function ``(synth, ctx) -> 1-D float array`` where ``ctx``
(:class:`AttackContext`) is everything the attacker knows: the target record, the
reference table (D_out: the real data without the target) summarised as column
ranges and categories, and the settings. Audits call these on thousands of
synthetic datasets, so they are vectorised and build nothing per call.

Robustness contract, for every feature set: the vector's length depends only on
``ctx`` (never on the synthetic data), and every entry is finite. Synthetic columns
are aligned to the reference's by name (missing columns read as NaN, extra ones
are ignored); infinities are treated as NaN; NaN values are left out of each
statistic; a statistic that is undefined (no rows, all NaN, a variance of one
value, the correlation of a constant column) is written as 0.0.

Registry: :data:`FEATURE_SETS`, looked up with :func:`get`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from raudit.attacks import queries
from raudit.errors import ConfigError
from raudit.registry import Registry

FILL = 0.0  # the value of an undefined statistic


@dataclass(frozen=True, eq=False)
class AttackContext:
    """What the attacker knows; build it with :meth:`build`.

    ``hist_levels[j]`` are the reference categories of column j when it has at
    most ``bins`` distinct values, else None (the column is binned over
    ``[lower[j], upper[j]]``, the reference range). ``center`` and ``scale`` are the
    reference's column means and standard deviations (1.0 where a column is constant):
    the standardization of the density-ratio attack. ``holdout`` (rows aligned to
    ``columns``) is a sample of the population disjoint from the training data, the
    density-ratio attack's reference (:mod:`raudit.attacks.density`); empty without one.
    """

    target: pd.Series
    columns: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    hist_levels: tuple[np.ndarray | None, ...]
    queries: queries.QueryPlan
    bins: int = 5
    n_queries: int = 256
    max_points: int = 1024
    seed: int = 0
    center: np.ndarray | None = None
    scale: np.ndarray | None = None
    holdout: np.ndarray | None = None

    @classmethod
    def build(cls, reference: pd.DataFrame, target: pd.Series, *, bins: int = 5,
              n_queries: int = 256, max_points: int = 1024, seed: int = 0,
              holdout: pd.DataFrame | None = None, training: pd.DataFrame | None = None
              ) -> "AttackContext":
        """The context for attacking ``target`` knowing ``reference`` (D_out).

        ``bins`` is both the histogram's bin count and the distinct-value threshold
        above which a column is binned (the study uses 5 for both); ``n_queries``,
        ``max_points`` and ``seed`` set the querybased plan (see
        :mod:`raudit.attacks.queries`). ``holdout``: real rows the generator never trains
        on (the dataset's test split); any of its rows equal to a row of ``training``
        (default: ``reference`` and the target) is dropped, so the kept sample is disjoint
        from the training data by construction (the worst case's test split is a copy of
        its training table: nothing is kept).
        """
        if not isinstance(reference, pd.DataFrame) or reference.shape[1] == 0:
            raise ConfigError("the reference table must be a DataFrame with columns")
        missing = [c for c in reference.columns if c not in target.index]
        if missing:
            raise ConfigError(f"the target record lacks the columns {missing[:5]}")
        ref = reference.to_numpy(dtype=float, copy=True)
        ref[~np.isfinite(ref)] = np.nan
        d = ref.shape[1]
        lower, upper = np.zeros(d), np.zeros(d)
        levels: list[np.ndarray | None] = []
        for j in range(d):
            uniq = np.unique(ref[:, j][~np.isnan(ref[:, j])])
            if len(uniq):
                lower[j], upper[j] = uniq[0], uniq[-1]
            levels.append(uniq if len(uniq) <= bins else None)
        plan = queries.build_plan(reference, target, bins=bins, n_queries=n_queries,
                                  max_points=max_points, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            center = np.nan_to_num(np.nanmean(ref, axis=0)) if len(ref) else np.zeros(d)
            std = np.nan_to_num(np.nanstd(ref, axis=0)) if len(ref) else np.ones(d)
        scale = np.where(std > 0, std, 1.0)
        if training is None:
            training = pd.concat([reference, target.to_frame().T[reference.columns]])
        kept = _disjoint(holdout, training, list(reference.columns))
        return cls(target.reindex(reference.columns), tuple(str(c) for c in reference.columns),
                   lower, upper, tuple(levels), plan, bins, n_queries, max_points, seed,
                   center, scale, kept)

    def values(self, synth: pd.DataFrame) -> np.ndarray:
        """The synthetic table as an (n, d) float array aligned to the reference columns."""
        x = synth.reindex(columns=list(self.columns)).to_numpy(dtype=float, na_value=np.nan,
                                                                copy=True)
        x[~np.isfinite(x)] = np.nan
        return x


def _disjoint(holdout: pd.DataFrame | None, training: pd.DataFrame,
              columns: list[str]) -> np.ndarray:
    """The rows of ``holdout`` (aligned to ``columns``) equal to no row of ``training``."""
    if holdout is None or len(holdout) == 0:
        return np.zeros((0, len(columns)))
    h = holdout.reindex(columns=columns).to_numpy(dtype=float, na_value=np.nan)
    t = training.reindex(columns=columns).to_numpy(dtype=float, na_value=np.nan)
    seen = {tuple(np.round(r, 12).tolist()) for r in t}  # NaN != NaN: a NaN row is kept
    keep = np.array([tuple(np.round(r, 12).tolist()) not in seen for r in h], dtype=bool)
    return h[keep]


FeatureSet = Callable[[pd.DataFrame, AttackContext], np.ndarray]


def _finite(v: np.ndarray) -> np.ndarray:
    return np.nan_to_num(np.asarray(v, dtype=float).ravel(), nan=FILL, posinf=np.finfo(float).max,
                         neginf=-np.finfo(float).max)


def naive(synth: pd.DataFrame, ctx: AttackContext) -> np.ndarray:
    """GroundHog's F_naive: per column, in column order, [min, max, mean, median, var(ddof=1)]."""
    x = ctx.values(synth)
    d = len(ctx.columns)
    if len(x) == 0:
        return np.full(5 * d, FILL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns, one row
        stats = np.stack([np.nanmin(x, 0), np.nanmax(x, 0), np.nanmean(x, 0),
                          np.nanmedian(x, 0), np.nanvar(x, 0, ddof=1)], axis=1)
    return _finite(stats)


def hist(synth: pd.DataFrame, ctx: AttackContext) -> np.ndarray:
    """Per column: frequencies in ``bins`` equal-width bins over the reference range
    (columns with more than ``bins`` distinct reference values; values outside the
    range fall in the end bins), else frequencies of the reference categories.

    Frequencies are over the column's non-NaN synthetic values, so values that are
    no reference category make the category frequencies sum below 1.
    """
    x = ctx.values(synth)
    out = []
    for j, lv in enumerate(ctx.hist_levels):
        size = ctx.bins if lv is None else len(lv)
        col = x[:, j]
        codes = (queries.bin_index(col, ctx.lower[j], ctx.upper[j], ctx.bins) if lv is None
                 else queries.nearest_level(col, lv))
        counts = np.bincount(codes[codes >= 0], minlength=size).astype(float)
        valid = np.count_nonzero(~np.isnan(col))
        out.append(counts / valid if valid else np.full(size, FILL))
    return _finite(np.concatenate(out) if out else np.zeros(0))


def corr(synth: pd.DataFrame, ctx: AttackContext) -> np.ndarray:
    """Upper triangle (k=1, row by row) of the Pearson correlation matrix.

    Pairs with NaN use the rows where both are present; constant columns and
    fewer than two rows give 0.0.
    """
    x = ctx.values(synth)
    d = len(ctx.columns)
    iu = np.triu_indices(d, k=1)
    if len(x) < 2:
        return np.full(len(iu[0]), FILL)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if np.isnan(x).any():
            c = pd.DataFrame(x).corr().to_numpy()  # pairwise-complete
        else:
            c = np.atleast_2d(np.corrcoef(x, rowvar=False))
    return _finite(np.clip(c[iu], -1.0, 1.0))


def ensemble(synth: pd.DataFrame, ctx: AttackContext) -> np.ndarray:
    """The concatenation naive | hist | corr."""
    return np.concatenate([naive(synth, ctx), hist(synth, ctx), corr(synth, ctx)])


def querybased(synth: pd.DataFrame, ctx: AttackContext) -> np.ndarray:
    """Counts of synthetic rows matching each query of ``ctx.queries``
    (Houssiau et al. 2022; see :mod:`raudit.attacks.queries`)."""
    return _finite(queries.count(ctx.queries, ctx.values(synth)))


def domias(synth: pd.DataFrame, ctx: AttackContext) -> np.ndarray:
    """One number: log p_syn(target) - log p_ref(target), the density-ratio score
    (:mod:`raudit.attacks.density`; DOMIAS, van Breugel et al. 2023)."""
    from raudit.attacks import density

    center, scale = _space(ctx)
    syn = density.standardize(ctx.values(synth), center, scale)
    return _finite(np.array([density.score(syn, _standard_target(ctx), _log_ref(ctx))]))


def _space(ctx: AttackContext) -> tuple[np.ndarray, np.ndarray]:
    """(center, scale) of the density-ratio attack's standardization."""
    if ctx.center is None or ctx.scale is None:
        raise ConfigError("the density-ratio feature needs a context made by AttackContext.build")
    return ctx.center, ctx.scale


def _standard_target(ctx: AttackContext) -> np.ndarray:
    from raudit.attacks import density

    return density.standardize(ctx.target.reindex(list(ctx.columns)).to_numpy(dtype=float),
                               *_space(ctx))


@functools.lru_cache(maxsize=256)  # contexts hash by identity (eq=False); an audit has one
def _log_ref(ctx: AttackContext) -> float:
    """log p_ref(target): one number per context (the reference and target are fixed)."""
    from raudit.attacks import density

    holdout = None if ctx.holdout is None else density.standardize(ctx.holdout, *_space(ctx))
    return density.reference_log_density(holdout, _standard_target(ctx))


# The parts of the ensemble attack's feature set, in order: the default feature set of
# each attack it chooses among (raudit.attacks.classifier: ensemble).
STACKED = ("naive", "querybased", "domias")


def stacked(synth: pd.DataFrame, ctx: AttackContext) -> np.ndarray:
    """The concatenation naive | querybased | domias: every black-box attack's default
    features, among which the ensemble attack chooses on the validation split."""
    return np.concatenate([get(part)(synth, ctx) for part in STACKED])


FEATURE_SETS: Registry[FeatureSet] = Registry("feature set")
for _name, _fn in (("naive", naive), ("hist", hist), ("corr", corr), ("ensemble", ensemble),
                   ("querybased", querybased), ("domias", domias), ("stacked", stacked)):
    FEATURE_SETS.register(_name, _fn)


def get(name: str) -> FeatureSet:
    """The feature set registered as ``name``."""
    return FEATURE_SETS.get(name)


def register(name: str, fn: FeatureSet) -> FeatureSet:
    """Add a feature set; raises on a duplicate name."""
    return FEATURE_SETS.register(name, fn)


def extract(name: str, synths: Sequence[pd.DataFrame], ctx: AttackContext) -> np.ndarray:
    """The (m, L) feature matrix of m synthetic datasets under feature set ``name``."""
    fn = get(name)
    rows = [fn(s, ctx) for s in synths]
    if not rows:  # still the right width, for stacking with other batches
        return np.zeros((0, len(fn(pd.DataFrame(columns=list(ctx.columns)), ctx))))
    return np.vstack(rows)


# What a built-in feature set reads of its context. Two contexts with equal keys give
# equal features for every synthetic table, so a batch over many contexts (the pooled
# target selection has one per candidate, and most candidates leave the reference's
# ranges unchanged) computes each distinct one once. Feature sets without a key here
# (querybased, which reads the target; plugins) are computed per context.
def _columns_key(ctx: AttackContext) -> tuple:
    return ctx.columns


def _hist_key(ctx: AttackContext) -> tuple:
    return (ctx.columns, ctx.bins, ctx.lower.tobytes(), ctx.upper.tobytes(),
            tuple(None if lv is None else lv.tobytes() for lv in ctx.hist_levels))


_READS: dict[str, Callable[[AttackContext], tuple]] = {
    "naive": _columns_key, "corr": _columns_key, "hist": _hist_key}
# ensemble and stacked are exactly their parts' concatenation
_PARTS = {"ensemble": ("naive", "hist", "corr"), "stacked": STACKED}


def extract_many(name: str, synths: Sequence[pd.DataFrame],
                 contexts: Sequence[AttackContext]) -> list[np.ndarray]:
    """``[extract(name, synths, ctx) for ctx in contexts]``, the same numbers, with each
    distinct (feature set part, what it reads of the context) computed once."""
    get(name)  # unknown names fail here, as in extract
    per_ctx: list[list[np.ndarray]] = [[] for _ in contexts]
    for part in _PARTS.get(name, (name,)):
        key_of = _READS.get(part)
        done: dict[tuple, np.ndarray] = {}
        for i, ctx in enumerate(contexts):
            key = key_of(ctx) if key_of is not None else ("context", i)
            if key not in done:
                done[key] = extract(part, synths, ctx)
            per_ctx[i].append(done[key])
    return [parts[0] if len(parts) == 1 else np.hstack(parts) for parts in per_ctx]
