"""The distinguishing game: threat model, worlds, shadow-model trials and their seeds.

Threat model (TAPAS's terms). The attacker knows the real data without the
target (D_out, the *reference*), the target record, the generator's code and
options, and the number of synthetic rows; it sees one synthetic dataset and
must guess whether the target was in the training data. Two worlds:

* ``add-remove`` (default, the study's game): D_in = D, D_out = D minus the target;
* ``replace``: D_out = D with the target's row replaced by a copy of another row
  (the first row of D that is not the target), so both worlds have |D| rows. This
  is the neighbouring relation of mechanisms that are DP for replace-one only
  (randomized response), which the calibration tests need.

Every shadow model samples the SAME number of synthetic rows in both worlds
(default |D_in|): sampling ``len(train)`` rows would give the world away, since
D_in has one more row (querybased counts sum to the row count; column means on
tiny discrete data take different value sets in the two worlds).

S shadow models per world; per world the first 40% train the attack classifier,
the next 20% choose the threshold, the last 40% are the test set (the study's
400/200/400 of 1,000), scaled by truncation. Model (world, i) gets the seeds
``SeedSequence(root, spawn_key=(world, i, purpose))``: deterministic, and
independent of how the trials are grouped into chunks or machines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from raudit import seeds
from raudit.errors import ConfigError
from raudit.generators.base import SINGLE_CLASS_OK
from raudit.results.ids import trial_id

WORLDS = ("out", "in")
NEIGHBOURS = ("add-remove", "replace")
SYNTHETIC_PROTOCOLS = ("same", "per-world")
_WORLD_KEY = seeds.WORLDS
_FIT, _SAMPLE = seeds.FIT, seeds.SAMPLE  # a model's training and sampling streams differ


@dataclass(frozen=True)
class Game:
    """Everything that determines an audit's shadow models (JSON-ready via :meth:`spec`).

    ``target`` is the resolved target row (an index label of the dataset's training
    table); ``dataset`` is what ``raudit.data.load`` takes, with ``label``/``bounds``
    for user files; ``data_digest`` pins the table's contents so that a user file
    edited between runs is a different audit.
    """

    impl: str
    options: Mapping[str, Any]
    dataset: str
    target: Any
    epsilon: float
    delta: float | None
    attack: str
    features: str
    shadow_models: int
    seed: int
    synthetic_rows: int
    data_digest: str
    label: str | None = None
    bounds: str | None = None
    neighbours: str = "add-remove"
    context: Mapping[str, Any] = field(default_factory=dict)
    # "same": every model samples ``synthetic_rows`` (raudit's sound default);
    # "per-world": each model samples its own training size, as the study's harness
    # did (|D_in| vs |D_in| - 1 rows: the size alone can give the world away).
    synthetic_protocol: str = "same"
    # synthetic datasets each model samples (1: the study's game); the extra ones feed
    # the multi-sample Bayesian bound only (raudit.audit.analyse)
    samples_per_model: int = 1
    # the white-box threat model's settings (raudit.audit.whitebox.settings); None: black-box
    white_box: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.samples_per_model, bool) or not isinstance(self.samples_per_model, int) \
                or not 1 <= self.samples_per_model <= 100:
            raise ConfigError(f"--samples-per-model must be an integer from 1 to 100, got "
                              f"{self.samples_per_model!r}")
        if self.neighbours not in NEIGHBOURS:
            raise ConfigError(f"neighbours must be one of {', '.join(NEIGHBOURS)}; "
                              f"got {self.neighbours!r}")
        split_sizes(self.shadow_models)
        if self.synthetic_protocol not in SYNTHETIC_PROTOCOLS:
            raise ConfigError(f"--synthetic-rows takes a number or per-world; got "
                              f"{self.synthetic_protocol!r}")
        if self.synthetic_rows < 1:
            raise ConfigError(f"--synthetic-rows must be at least 1, got {self.synthetic_rows}")

    def spec(self) -> dict[str, Any]:
        """The audit's identity (the store's manifest; the base of every trial id).

        ``synthetic_protocol``, ``samples_per_model`` and ``white_box`` appear only when
        they are not the default, so that the
        ids of audits written before it existed stay the same.
        """
        extra: dict[str, Any] = ({"synthetic_protocol": self.synthetic_protocol}
                                 if self.synthetic_protocol != "same" else {})
        if self.samples_per_model != 1:
            extra["samples_per_model"] = self.samples_per_model
        if self.white_box is not None:  # absent for black-box: its ids stay as they were
            extra["white_box"] = dict(self.white_box)
        return {**extra, "impl": self.impl, "options": dict(self.options), "dataset": self.dataset,
                "label": self.label, "bounds": self.bounds, "data_digest": self.data_digest,
                "target": self.target, "neighbours": self.neighbours, "epsilon": self.epsilon,
                "delta": self.delta, "attack": self.attack, "features": self.features,
                "shadow_models": self.shadow_models, "seed": self.seed,
                "synthetic_rows": self.synthetic_rows, "context": dict(self.context)}


def default_context(seed: int) -> dict[str, Any]:
    """The attacker's settings of an audit with root ``seed`` (query bins, counts, seed)."""
    return {"bins": 5, "n_queries": 256, "max_points": 1024,
            "seed": seeds.derive_seed(seed, seeds.CONTEXT) % 2**32}


def sample_size(game_spec: Mapping[str, Any], table: pd.DataFrame) -> int:
    """Synthetic rows a model trained on ``table`` samples under the game's protocol."""
    if game_spec.get("synthetic_protocol", "same") == "per-world":
        return len(table)
    return int(game_spec["synthetic_rows"])


def split_sizes(shadow_models: int) -> dict[str, int]:
    """Models per world in each split: 40% train, 20% val, the rest test (>= 1 each)."""
    if isinstance(shadow_models, bool) or not isinstance(shadow_models, (int, np.integer)):
        raise ConfigError(f"--shadow-models must be an integer, got {shadow_models!r}")
    n_train, n_val = int(shadow_models * 0.4), int(shadow_models * 0.2)
    sizes = {"train": n_train, "val": n_val, "test": int(shadow_models) - n_train - n_val}
    if min(sizes.values()) < 1:
        raise ConfigError(f"--shadow-models {shadow_models} is too few: each world needs at "
                          "least one model in each of the train/val/test splits (40/20/40%); "
                          "use 5 or more (the study uses 1,000)")
    return sizes


def split_of(index: int, shadow_models: int) -> str:
    """The split of shadow model ``index`` (0-based, per world)."""
    sizes = split_sizes(shadow_models)
    if index < sizes["train"]:
        return "train"
    return "val" if index < sizes["train"] + sizes["val"] else "test"


# The streams and the derivation live in raudit.seeds (one place for every purpose);
# these names stay importable from here.
derive_seed = seeds.derive_seed
model_seeds = seeds.model_seeds


def trials(game: Game, *, world: str, count: int | None = None, stream: int = 0,
           split=None) -> list[dict[str, Any]]:
    """The game's trials in ``world``, in index order: id, index, seeds and split.

    ``count`` (default ``shadow_models``), ``stream`` and ``split`` (index -> split
    name; default the 40/20/40 rule) let target selection draw its own trials.
    """
    count = game.shadow_models if count is None else count
    split = split or (lambda i: split_of(i, game.shadow_models))
    base = {**game.spec(), "stream": stream} if stream else game.spec()
    out = []
    for i in range(count):
        fit_seed, sample_seed = model_seeds(game.seed, world, i, stream=stream)
        tid = trial_id({**base, "world": world, "shadow_index": i, "seed": fit_seed,
                        "sample_seed": sample_seed})
        out.append({"trial_id": tid, "shadow_index": i, "seed": fit_seed,
                    "sample_seed": sample_seed, "split": split(i)})
    return out


# ------------------------------------------------------------------------ worlds


def find_target(train: pd.DataFrame, target: Any, dataset: str = "the dataset") -> Any:
    """The index label of ``target`` in ``train`` (accepts ``row:ID`` and numeric text)."""
    text = str(target)
    text = text[4:] if text.startswith("row:") else text
    for candidate in (target, text, _as_int(text)):
        if candidate is not None and not isinstance(candidate, bool) and candidate in train.index:
            return candidate.item() if isinstance(candidate, np.generic) else candidate
    shown = ", ".join(map(str, train.index[:5]))
    raise ConfigError(f"target row {text!r} is not in the training data of {dataset} "
                      f"({len(train)} rows; row ids are the table's index, e.g. {shown})")


def _as_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def worlds(train: pd.DataFrame, target: Any, neighbours: str = "add-remove"
           ) -> dict[str, pd.DataFrame]:
    """{"in": D_in, "out": D_out} for ``target`` (an index label of ``train``).

    Both tables are marked as allowed to hold a single label class (the worst
    case's D_out is all zeros), see :data:`raudit.generators.base.SINGLE_CLASS_OK`.
    """
    if target not in train.index:
        raise ConfigError(f"target row {target!r} is not in the training data")
    d_in = in_world(train)
    if neighbours == "replace":
        others = train.index[train.index != target]
        if len(others) == 0:
            raise ConfigError("the replace game needs at least one row besides the target")
        d_out = train.copy()
        d_out.loc[target] = train.loc[others[0]].to_numpy()
    else:
        d_out = train.drop(index=target)
    d_out.attrs[SINGLE_CLASS_OK] = True
    return {"in": d_in, "out": d_out}


def in_world(train: pd.DataFrame) -> pd.DataFrame:
    """D_in: the training data itself, in both neighbour relations (so it needs no target)."""
    d_in = train.copy()
    d_in.attrs[SINGLE_CLASS_OK] = True
    return d_in


def reference(train: pd.DataFrame, target: Any) -> pd.DataFrame:
    """What the attacker knows of the real data: D without the target."""
    return train.drop(index=target)


def data_digest(train: pd.DataFrame) -> str:
    """A short content hash of a table (values, index, column names, dtypes)."""
    h = hashlib.sha256()
    h.update(repr([(str(c), str(t)) for c, t in train.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(train, index=True).to_numpy().tobytes())
    return h.hexdigest()[:16]
