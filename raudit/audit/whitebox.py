"""The white-box threat model: the attack also reads the trained generator and critic.

At the ``white-box`` level (``raudit audit --threat-model white-box``) the attacker sees
what the black-box one sees (one synthetic dataset of the game's size) and the trained
model itself: it can sample as much as it likes from the generator and query the
student/discriminator (the *critic*) wherever the training loop keeps it
(``Capabilities.critic``). Models never leave the worker, so the white-box features
are computed in the chunk right after training (:func:`features`, a plain function of
the trained models, the attack context and the game spec) and appended to the attack's
black-box feature vector; the attack classifier and every estimator then run as for
a black-box audit. What the attacker adds:

* **density near the target**: ``samples`` fresh rows per model (20x the synthetic
  rows, at least 1,000 and at most 100,000; sampled a few models at a time), their distances to the target (per-column scaled by
  the reference's range, root-mean-square over columns): the nearest, the mean of the
  10 nearest, the shares within 0.01, 0.05, 0.1 and 0.25, and the mean;
* **the critic at the target** (where reachable): its logit at the target (encoded by
  the model's own encoder), its mean logit over the fresh samples, their difference,
  and the share of samples it scores below the target.

Every value is finite (the feature sets' contract). Generators that keep no model in
this process (``exec:`` generators, the non-batched calibration generators) are refused
before any work with one line (:func:`check_white_box`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from raudit import generators, seeds
from raudit.audit.threat_model import ThreatSpec
from raudit.errors import ConfigError

__all__ = ["DENSITY", "CRITIC", "check_white_box", "features", "settings", "threat_model",
           "views"]

SAMPLES_FACTOR, MIN_SAMPLES, MAX_SAMPLES = 20, 1000, 100_000
GROUP_CELLS = 2**24  # sampled cells held at once (128 MiB of float64)
RADII = (0.01, 0.05, 0.1, 0.25)
NEAREST = 10
DENSITY = ("nn_min", f"nn_mean_{NEAREST}", *(f"share_within_{r:g}" for r in RADII), "nn_mean_all")
CRITIC = ("critic_target", "critic_samples_mean", "critic_target_minus_mean",
          "critic_share_below_target")
_CAP = 1e6  # logits and distances beyond this carry no more information


def check_white_box(impl: str) -> type:
    """The generator class of ``impl``, or a one-line ConfigError when no trained model of
    it is reachable inside the chunk."""
    if impl.startswith("exec:"):
        raise ConfigError("--threat-model white-box needs the trained model; an exec: "
                          "generator trains in its own process and returns only synthetic data")
    from raudit.generators.batched import BatchedGenerator  # torch: only for white-box

    cls = generators.get(impl)
    if not issubclass(cls, BatchedGenerator):
        raise ConfigError(f"--threat-model white-box needs a trained model to read; {impl!r} "
                          "keeps none (white-box audits take the batched generators: "
                          f"{', '.join(white_box_generators())})")
    return cls


def white_box_generators() -> list[str]:
    from raudit.generators.batched import BatchedGenerator

    return [n for n in generators.names() if issubclass(generators.get(n), BatchedGenerator)]


def settings(synthetic_rows: int) -> dict[str, Any]:
    """The white-box game settings recorded in the game spec (so they are in every id)."""
    return {"samples": min(max(SAMPLES_FACTOR * int(synthetic_rows), MIN_SAMPLES), MAX_SAMPLES)}


def threat_model(impl: str) -> ThreatSpec:
    """The explicit white-box threat model of ``impl`` (its critic reachable or not)."""
    critic = check_white_box(impl).describe().critic
    return ThreatSpec.white_box(critic)


def views(impl: str) -> dict[str, slice]:
    """The feature views a white-box audit chooses among on its validation split
    (:func:`raudit.audit.analyse.choose_view`): the black-box vector, the white-box extras
    (:func:`features`, appended at the end) and their union. So the white-box audit
    contains the black-box one: extras that only dilute a small training split are
    dropped (issue 49: querybased on the worst case lost 1.305 -> 1.106 to them)."""
    extra = len(DENSITY) + (len(CRITIC) if generators.get(impl).describe().critic else 0)
    return {"black-box": slice(None, -extra), "white-box": slice(-extra, None),
            "union": slice(None, None)}


def features(models: Sequence[Any], ctx, spec: Mapping[str, Any]) -> list[np.ndarray]:
    """The white-box feature vector of each trained model of a chunk (module docstring);
    the samples of model (world, i) come from the stream (WHITE_BOX, world, i)."""
    gs = spec["game"]
    n = int(gs["white_box"]["samples"])
    sample_seeds = [seeds.derive_seed(gs["seed"], seeds.WHITE_BOX, seeds.WORLDS[spec["world"]],
                                      int(t["shadow_index"])) for t in spec["trials"]]
    target = pd.DataFrame([ctx.target.to_numpy(dtype=float)], columns=list(ctx.target.index))
    t = target[list(ctx.columns)].to_numpy(dtype=float)[0]
    span = np.where(ctx.upper - ctx.lower > 0, ctx.upper - ctx.lower, 1.0)
    critic = generators.get(gs["impl"]).describe().critic
    from raudit.generators.batched import BatchedGenerator

    # a few models at a time: M x samples x columns at once could exceed the memory
    # (each model's samples have their own seed, so grouping changes no number)
    step = max(1, GROUP_CELLS // (n * max(1, len(target.columns))))
    out = []
    for i in range(0, len(models), step):
        views = BatchedGenerator.white_box_many(models[i:i + step], target, n,
                                                sample_seeds[i:i + step])
        out += [_vector(v, t, span, list(ctx.columns), critic) for v in views]
    return out


def _vector(view, t: np.ndarray, span: np.ndarray, columns: list[str], critic: bool) -> np.ndarray:
    x = view.samples.reindex(columns=columns).to_numpy(dtype=float, copy=True)
    x[~np.isfinite(x)] = np.nan
    with np.errstate(all="ignore"):
        d2 = np.nanmean(((x - t) / span) ** 2, axis=1)  # a row of NaNs: as far as can be
    r = np.sqrt(np.nan_to_num(d2, nan=_CAP, posinf=_CAP))
    r.sort()
    out = [r[0], r[:NEAREST].mean(), *((r <= rad).mean() for rad in RADII), r.mean()]
    if critic:
        s = np.clip(np.nan_to_num(view.sample_logits, nan=0.0), -_CAP, _CAP)
        tl = float(np.clip(np.nan_to_num(view.target_logit, nan=0.0), -_CAP, _CAP))
        out += [tl, s.mean(), tl - s.mean(), (s < tl).mean()]
    return np.clip(np.asarray(out, dtype=float), -_CAP, _CAP)
