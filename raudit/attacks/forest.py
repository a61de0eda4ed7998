"""The attack's random forest fitted and applied without scikit-learn's per-tree overhead.

Target selection fits one 100-tree forest per candidate (64 by default) on a few dozen
feature vectors. There a tree's own fit (scikit-learn's Cython builder) is a small part
of its cost: ``RandomForestClassifier.fit`` clones an estimator per tree through
``get_params`` / ``inspect.signature``, re-checks the labels of every tree
(``check_classification_targets``), and dispatches each tree through joblib. That was
about 70 ms per forest of which the trees' building is a fraction.

:func:`fit_forest` builds the very same trees: the same per-tree seeds drawn from the
forest's ``RandomState`` in the same order, the same bootstrap counts, the same
criterion, splitter and depth-first builder with the same arguments, so every tree's
arrays are equal to those of ``RandomForestClassifier(...).fit`` (a test compares them
node by node, and the probabilities bit for bit). The result is an ordinary fitted
``RandomForestClassifier``. It covers only the configuration the attack uses
(bootstrap, gini, no class weights, no pruning, no leaf cap, dense finite input); any
other estimator is fitted by scikit-learn itself. :func:`forest_proba` is
``predict_proba`` with the same summation order, minus the per-call checks.
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

try:  # scikit-learn's own tree builder; without it the stock fit is used
    from sklearn.tree._criterion import Gini
    from sklearn.tree._splitter import BestSplitter
    from sklearn.tree._tree import DepthFirstTreeBuilder, Tree
except ImportError:  # pragma: no cover - a scikit-learn that moved them
    Gini = None

_MAX_INT = np.iinfo(np.int32).max  # sklearn.ensemble._forest.MAX_INT: the seeds' range
# the parameters the lean path reproduces; any other value takes scikit-learn's fit
_SUPPORTED = {"bootstrap": True, "max_samples": None, "class_weight": None, "criterion": "gini",
              "max_leaf_nodes": None, "ccp_alpha": 0.0, "monotonic_cst": None,
              "oob_score": False, "warm_start": False, "min_weight_fraction_leaf": 0.0,
              "splitter": "best"}
_TREE_PARAMS = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf",
                "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                "min_impurity_decrease", "ccp_alpha", "monotonic_cst")


def _lean_ok(model: RandomForestClassifier, X: np.ndarray) -> bool:
    params = model.get_params()
    return (Gini is not None and type(model) is RandomForestClassifier
            and isinstance(params["random_state"], (int, np.integer))
            and all(params.get(k, v) == v for k, v in _SUPPORTED.items())
            and isinstance(params["min_samples_split"], (int, np.integer))
            and isinstance(params["min_samples_leaf"], (int, np.integer))
            and params["max_features"] == "sqrt"
            and X.ndim == 2 and len(X) > 0 and bool(np.isfinite(X).all()))


def fit_forest(model: RandomForestClassifier, X: np.ndarray, y: np.ndarray) -> RandomForestClassifier:
    """Fit ``model`` (unfitted) on ``X`` (n, L) and labels ``y`` (n,); returns it fitted,
    equal tree for tree to ``model.fit(X, y)``."""
    X = np.ascontiguousarray(X, dtype=np.float32)  # the forest's own conversion (DTYPE)
    if not _lean_ok(model, X):
        return model.fit(X, y)
    p = model.get_params()
    classes, y_enc = np.unique(np.asarray(y).ravel(), return_inverse=True)
    n, n_features = X.shape
    # the trees see the forest's encoded labels, which they encode again to 0..C-1
    y_tree = np.ascontiguousarray(y_enc.reshape(-1, 1), dtype=np.float64)
    n_classes = np.array([len(classes)], dtype=np.intp)
    max_features = max(1, int(np.sqrt(n_features)))
    leaf = int(p["min_samples_leaf"])
    split = max(int(p["min_samples_split"]), 2 * leaf)
    depth = np.iinfo(np.int32).max if p["max_depth"] is None else p["max_depth"]
    tree_params = {k: p[k] for k in _TREE_PARAMS}
    tree_classes = np.arange(len(classes), dtype=np.float64)
    forest_rs = np.random.RandomState(p["random_state"])
    # Re-seeding one RandomState gives the state a fresh RandomState(seed) has, at 4 us
    # instead of 270 (a new one first seeds itself from the OS, then again from seed).
    # The splitter draws its one number from it in build() (Splitter.init), right below,
    # before the next tree re-seeds it.
    tree_rs = np.random.RandomState(0)
    trees = []
    for _ in range(p["n_estimators"]):
        seed = forest_rs.randint(_MAX_INT)  # _set_random_states: one draw per tree, in order
        tree_rs.seed(seed)  # the bootstrap's (_generate_sample_indices)
        boot = tree_rs.randint(0, n, n).astype(np.int32)
        weight = np.bincount(boot, minlength=n).astype(np.float64)
        tree_rs.seed(seed)  # the tree's own (DecisionTreeClassifier._fit)
        splitter = BestSplitter(Gini(1, n_classes), max_features, leaf, 0.0, tree_rs, None)
        tree = DecisionTreeClassifier(**tree_params, random_state=seed)
        tree.tree_ = Tree(n_features, n_classes, 1)
        DepthFirstTreeBuilder(splitter, split, leaf, 0.0, depth, p["min_impurity_decrease"]
                              ).build(tree.tree_, X, y_tree, weight, None)
        tree.n_features_in_, tree.n_outputs_, tree.max_features_ = n_features, 1, max_features
        tree.classes_, tree.n_classes_ = tree_classes, n_classes[0]
        trees.append(tree)
    model._validate_estimator()
    model.estimators_, model.n_features_in_, model.n_outputs_ = trees, n_features, 1
    model.classes_, model.n_classes_ = classes, len(classes)
    model._n_samples, model._n_samples_bootstrap, model._sample_weight = n, n, None
    return model


def forest_proba(model: RandomForestClassifier, X: np.ndarray) -> np.ndarray:
    """``model.predict_proba(X)`` for finite dense ``X``: the trees' leaf values (class
    fractions) summed in tree order, then divided by the number of trees, as scikit-learn
    does (its per-call checks and joblib dispatch left out)."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    if getattr(model, "n_outputs_", 1) != 1 or X.shape[1] != model.n_features_in_:
        return model.predict_proba(X)
    total = np.zeros((X.shape[0], model.n_classes_), dtype=np.float64)
    for tree in model.estimators_:
        total += tree.tree_.predict(X)[:, :tree.n_classes_]
    total /= len(model.estimators_)
    return total
