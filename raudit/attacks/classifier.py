"""The shadow classifier and the registry of attacks.

An attack is a feature set (see :mod:`raudit.attacks.features`) plus the
classifier that maps feature vectors to P(in). Both attacks of the study use a
RandomForestClassifier with scikit-learn's defaults; only the seed is fixed
(the study fixes none) and ``n_jobs=1``, because the engine parallelises over
audits, not inside one fit. It lives in the classifier registry as ``attack-rf``.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from raudit import classifiers
from raudit.attacks import features as feature_sets
from raudit.errors import ConfigError
from raudit.registry import Registry

if TYPE_CHECKING:
    from sklearn.ensemble import RandomForestClassifier

# scikit-learn (about a CPU-second of imports) is loaded on the first fit, not with the
# attack registry: `raudit audit` reads the registry to parse its options, and its first
# fit comes after Ray has started (raudit.engine.driver.prestart), which its import then
# overlaps.


def fit_forest(model, X, y):
    """:func:`raudit.attacks.forest.fit_forest` (imported on first use)."""
    from raudit.attacks.forest import fit_forest as fit

    return fit(model, X, y)


def forest_proba(model, X):
    """:func:`raudit.attacks.forest.forest_proba` (imported on first use)."""
    from raudit.attacks.forest import forest_proba as proba

    return proba(model, X)


def fit_attack(X_train: np.ndarray, y_train: np.ndarray, seed: int) -> RandomForestClassifier:
    """Fit the attack classifier on feature vectors ``X_train`` with labels 1 = in, 0 = out."""
    X = np.asarray(X_train, dtype=float)
    y = np.asarray(y_train).astype(int).ravel()
    if X.ndim != 2 or len(X) != len(y) or len(y) == 0:
        raise ConfigError(f"need a non-empty (n, L) feature matrix and n labels; got X of "
                          f"shape {X.shape} and {len(y)} labels")
    if not np.isin(y, (0, 1)).all():
        raise ConfigError(f"labels must be 0 (out) or 1 (in); got {sorted(set(y.tolist()))}")
    if not np.isfinite(X).all():  # the feature sets' contract; checked once here
        raise ConfigError("attack features must be finite (a feature set broke its contract)")
    with prechecked():  # fit_forest: the same trees as .fit(X, y), at a tenth of the cost
        return fit_forest(classifiers.get("attack-rf").build(seed), X, y)


def prechecked():
    """scikit-learn with its per-call checks off, for inputs checked here already.

    The target selection fits one forest per candidate, and a forest re-validates
    its parameters and inputs for each of its 100 trees; the checks change no
    number, they only cost time. Inputs are checked once by :func:`fit_attack`.
    """
    import sklearn

    return sklearn.config_context(assume_finite=True, skip_parameter_validation=True)


def score(model: RandomForestClassifier, X: np.ndarray) -> np.ndarray:
    """P(in) for each row of ``X``.

    A model fitted on a single class (all shadow models failed in one world, say)
    has no P(in) column: it scores 1.0 if that class was "in", else 0.0.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[None, :]
    classes = list(model.classes_)
    if 1 not in classes:
        return np.zeros(len(X))
    if not np.isfinite(X).all():
        raise ConfigError("attack features must be finite (a feature set broke its contract)")
    with prechecked():
        proba = forest_proba(model, X)
    return np.asarray(proba[:, classes.index(1)], dtype=float)


@dataclass(frozen=True)
class Attack:
    """A named attack: which feature sets it takes, which one it uses by default, and the
    dataset an audit with this attack uses when none is given (the one place it is said).

    ``views``: (view name, feature set) pairs whose concatenation, in order, is the
    default feature set; an audit chooses one view, or their union, on the validation
    split (:func:`raudit.audit.analyse.choose_view`). Empty: the whole vector is used."""

    name: str
    default_features: str
    features: tuple[str, ...]
    description: str = ""
    default_dataset: str = "breast-cancer"
    views: tuple[tuple[str, str], ...] = ()

    def feature_set(self, name: str | None = None) -> str:
        """Check ``name`` (default: ``default_features``) is allowed; return it."""
        chosen = self.default_features if name is None else name
        if chosen not in self.features:
            raise ConfigError(f"attack {self.name!r} takes the feature sets "
                              f"{', '.join(self.features)}; got {chosen!r}")
        feature_sets.get(chosen)  # registered, too
        return chosen

    def view_slices(self, ctx: feature_sets.AttackContext) -> dict[str, slice] | None:
        """{view: its columns of the feature vector, "union": all} for ``ctx`` (a feature
        set's width depends only on the context), or None for an attack without views."""
        if not self.views:
            return None
        empty = pd.DataFrame(columns=list(ctx.columns))
        out, start = {}, 0
        for view, part in self.views:
            width = len(feature_sets.get(part)(empty, ctx))
            out[view] = slice(start, start + width)
            start += width
        out["union"] = slice(None, None)
        return out


ATTACKS: Registry[Attack] = Registry("attack")
ATTACKS.register("groundhog", Attack(
    "groundhog", "naive", ("naive", "hist", "corr", "ensemble"),
    "Stadler et al. 2022: summary statistics of the synthetic data"))
ATTACKS.register("querybased", Attack(
    "querybased", "querybased", ("querybased",),
    "Houssiau et al. 2022: counts of rows matching queries on the target",
    default_dataset="worst-case"))
ATTACKS.register("domias", Attack(
    "domias", "domias", ("domias",),
    "van Breugel et al. 2023 (DOMIAS): synthetic over reference density at the target",
    default_dataset="breast-cancer"))
ATTACKS.register("ensemble", Attack(
    "ensemble", "stacked", ("stacked",),
    "the best of groundhog, querybased, domias and their union, chosen on validation",
    default_dataset="breast-cancer",
    views=tuple(zip(("groundhog", "querybased", "domias"), feature_sets.STACKED))))


def get(name: str) -> Attack:
    """The attack registered as ``name``."""
    return ATTACKS.get(name)


def resolve(attack: str, features: str | None = None) -> tuple[Attack, str]:
    """Validate an (attack, feature set) choice; returns the attack and the feature-set name."""
    a = get(attack)
    return a, a.feature_set(features)
