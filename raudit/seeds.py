"""The named random streams, declared in one place.

Every seed in raudit derives from a user's root seed through
``SeedSequence(root, spawn_key=key)`` (:func:`derive_seed`); a key starts with a
*stream* saying what the randomness is for, so two purposes never share numbers
and adding a purpose never shifts another's. The values below are part of every
audit's identity (trial ids hash the seeds): never renumber them, only add.

========  =====  ==============================================================
stream    value  used by
========  =====  ==============================================================
GAME      0      the distinguishing game's shadow models: (GAME, world, i, FIT|SAMPLE)
SELECTION 1      target selection's mini-MIAs: (SELECTION, world, i, FIT|SAMPLE)
ATTACK    2      the attack classifier (its random forest)
AUC       3      target selection's per-candidate AUC classifier
CONTEXT   4      the attack context (query sampling of the querybased features)
UTILITY   6      the utility benchmark: (UTILITY, purpose, ...), purposes in
                 raudit.utility.plan (fits, samples, classifiers, Setting C splits)
INSPECT   7      `raudit inspect`'s probes and extra samples: (INSPECT, probe, FIT|SAMPLE, i),
                 probes in raudit.inspect.runner (its main run is train_seeds(root))
ONE_RUN   2901   black-box one-run audits (raudit.runs.one_run): the canaries' coins, the fit
                 and the sample of the one run (29: the issue; clear of the small values)
CROSSCHK  19     `raudit crosscheck`: (CROSSCHECK, i, FIT|SAMPLE) model i of both sides,
                 (CROSSCHECK, 1_000_000) the utility permutations, (CROSSCHECK, 2_000_000, i)
                 model i's classifiers (19: the issue's number, clear of the small values)
WHITE_BOX 29     the white-box threat model's extra samples of model i: (WHITE_BOX, world, i)
                 (raudit.audit.whitebox; 29: the issue's number)
========  =====  ==============================================================

The pooled target selection draws its in/out design from the key
(SELECTION, POOL_DESIGN), which no model key (four elements long) can equal.

A model's key ends with its purpose, FIT (training) or SAMPLE (generation), and
worlds are numbered OUT = 0, IN = 1. ``raudit train --seed S`` trains the model
the game calls (GAME, IN, 0) under root S (:func:`train_seeds`): the first
in-world shadow model of an audit with the same root, data and options.
"""

from __future__ import annotations

import numpy as np

from raudit.errors import ConfigError

__all__ = ["AUC", "ATTACK", "CONTEXT", "CROSSCHECK", "FIT", "GAME", "INSPECT", "POOL_DESIGN", "SAMPLE", "SELECTION", "TRANSCRIPT", "ONE_RUN", "UTILITY", "WHITE_BOX",
           "WORLDS", "check_root", "derive_seed", "extra_sample_seed", "model_seeds",
           "train_seeds"]

GAME, SELECTION, ATTACK, AUC, CONTEXT = 0, 1, 2, 3, 4
POOL_DESIGN = 5
UTILITY = 6
INSPECT = 7
TRANSCRIPT = 8  # transcript-level trials (raudit.runs.transcript)
ONE_RUN = 2901  # black-box one-run audits: (ONE_RUN,) the canaries' inclusion, fit and sample
CROSSCHECK = 19
WHITE_BOX = 29  # the white-box threat model's samples (raudit.audit.whitebox)
FIT, SAMPLE = 0, 1
WORLDS = {"out": 0, "in": 1}


# A root seed is stored in the result tables' int64 ``seed`` columns, and SeedSequence takes
# no negative entropy: outside [0, 2**63) a run would train every model and then fail.
ROOT_MAX = 2**63 - 1


def check_root(value: object, name: str = "--seed") -> int:
    """``value`` as a root seed; ConfigError (one line) unless it is an integer in
    [0, 2**63). The one check of every root seed: the command line's ``--seed``
    (:func:`raudit.cli.options.parse_seed`), the request objects that a campaign's YAML
    and the Python API build (audit, utility, inspect)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{name} must be an integer from 0 to 2**63-1, got {value!r}")
    if not 0 <= int(value) <= ROOT_MAX:
        raise ConfigError(f"{name} must be from 0 to 2**63-1 ({ROOT_MAX}), got {int(value)}")
    return int(value)


def derive_seed(root: int, *key: int) -> int:
    """A 63-bit seed for ``key`` under ``root`` (SeedSequence spawn keys; no global state)."""
    ss = np.random.SeedSequence(int(root), spawn_key=tuple(int(k) for k in key))
    return int(ss.generate_state(1, np.uint64)[0] & np.uint64(2**63 - 1))


def model_seeds(root: int, world: str, index: int, *, stream: int = GAME) -> tuple[int, int]:
    """(fit seed, sample seed) of model ``index`` of ``world`` in ``stream``."""
    w = WORLDS[world]
    return derive_seed(root, stream, w, index, FIT), derive_seed(root, stream, w, index, SAMPLE)


def extra_sample_seed(root: int, world: str, index: int, k: int, *, stream: int = GAME) -> int:
    """The seed of the k-th extra synthetic dataset (k >= 1) of model ``index``: the key
    (stream, world, index, SAMPLE, k) is five long, so it equals no model's key."""
    return derive_seed(root, stream, WORLDS[world], index, SAMPLE, k)


def train_seeds(root: int) -> tuple[int, int]:
    """(fit seed, sample seed) of ``raudit train --seed root``: the game's model (in, 0)."""
    return model_seeds(root, "in", 0, stream=GAME)
