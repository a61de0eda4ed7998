"""The active threat model for PATE's noisy votes: the auditor chooses the queries too.

At the ``active`` level (Nasr et al. 2023's strongest adversary) the auditor builds the
neighbouring datasets AND the queries the mechanism answers. For PATE that makes the
transcript level's worst case real rather than assumed:

* neighbours: the target alone in one teacher's partition, against a record of the
  other label (replace-one), so that teacher's vote is the target's label in world
  "in" and the other label in world "out" -- on any query;
* canaries: the auditor's canary queries REPLACE all the student's queries. For
  ``paper`` and ``fixed`` the number of queries is fixed by a data-independent
  accountant or planner, so the run answers exactly as many either way; the GAN is not
  trained (nothing it does reaches the released histograms once the queries are the
  auditor's). The summary says so.

The other teachers' votes on a canary query are fixed by the auditor and cancel from
the likelihood ratio, so a trial is the exact sufficient statistic of
:class:`raudit.audit.transcript.VoteMechanism` (tests/audit/test_active.py checks it
against :func:`canary_releases`, which runs the generator's own noisy aggregation,
:func:`raudit.generators.pategan.core.aggregation.aggregator`, on the canary design).

One run (:func:`one_run_active`): m canary records in ONE run, each in with
probability 1/2. A vote histogram has two coordinates per query, shared by every
teacher, so a canary's "coordinate" is a pattern: canary i sits in teacher i mod k and
flips that teacher's vote on its share of the queries (all of them when every canary
has a teacher of its own, m <= k; 1/c of them when a teacher holds c) in a direction of
its own per query, and is scored by the likelihood ratio of that pattern, the other
canaries' flips acting as noise. Each canary's privacy is that of its share
(mu_i = mu / sqrt(c)): the full mechanism's when m <= k.
"""

from __future__ import annotations

import math

import numpy as np

from raudit.audit.transcript import VoteMechanism
from raudit.errors import ConfigError

__all__ = ["canary_releases", "check_active", "coordinate_llr", "one_run_active", "teachers_of"]


def check_active(impl: str) -> None:
    """Raise a one-line ConfigError unless ``impl``'s mechanism runs without training."""
    from raudit.audit.mechanisms import dry_run_votes  # dpgan's dry run is DP-SGD

    if impl.startswith("exec:"):
        raise ConfigError(f"--threat-model active runs the generator's mechanism on the "
                          f"auditor's queries; {impl!r} runs in its own process, so raudit "
                          "cannot reach its mechanism")
    if not dry_run_votes(impl):
        raise ConfigError(f"--threat-model active needs a mechanism that runs without "
                          f"training (a dry-run vote schedule, e.g. paper or fixed); "
                          f"{impl!r} has none")


def coordinate_llr(mech: VoteMechanism, u: np.ndarray) -> np.ndarray:
    """Per released coordinate, the log-likelihood ratio of "shifted by +1" against "not
    shifted", at ``u`` = the released value minus the auditor's known base count,
    oriented so that the target's shift is +1."""
    s = float(mech.scale)
    if mech.noise == "gaussian":
        return (u - 0.5) / s**2
    # |u| - |u - 1| written as a clip: exactly +-1 outside (0, 1), so the score carries
    # no floating-point rounding of u (which differs between the worlds: u = 1 + z or z,
    # a side channel a la Mironov 2012 that overshot the one-run bound in a test)
    return np.clip(2.0 * u - 1.0, -1.0, 1.0) / s


def canary_releases(mech: VoteMechanism, teachers: int, base: int, world: int, trials: int,
                    seed: int):
    """The released histograms of ``trials`` runs of the canary design through the
    generator's own noisy aggregation (torch, :mod:`raudit.generators.pategan.core.aggregation`):
    ``base`` other teachers vote 1 on every canary query, the target's teacher votes 1
    in world 1 and 0 in world 0. Returns the noise-added (n1, n0) arrays (trials, Q)."""
    import torch

    from raudit.generators.nn.rng import CounterRNG
    from raudit.generators.pategan.core.aggregation import GAUSSIAN_AGGREGATIONS, aggregator

    if not 0 <= base < teachers:
        raise ConfigError(f"base votes must lie in [0, teachers), got {base}")
    rng = CounterRNG(list(range(seed, seed + trials)), purpose="active-canaries",
                     dtype=torch.float64)
    n1 = torch.full((trials, mech.queries), base + world, dtype=torch.int64)
    agg = GAUSSIAN_AGGREGATIONS[mech.aggregation] if mech.noise == "gaussian" else \
        aggregator("laplace", mech.aggregation)
    _, noise = agg(n1, teachers, rng, mech.scale)
    noise = noise.numpy()
    ones = n1.numpy() + (noise[..., 1] if noise.ndim == 3 else noise)
    zeros = (teachers - n1.numpy()) + noise[..., 0] if noise.ndim == 3 else None
    return ones, zeros


def one_run_active(mech: VoteMechanism, *, canaries: int, teachers: int, seed: int,
                   beta: float = 0.05) -> dict:
    """A one-run audit (:func:`raudit.audit.one_run.best_one_run`) of ``canaries`` canary
    records spread over ``teachers`` teachers, every query of the run simulated.

    Canary i sits in teacher i mod k; a teacher holding c canaries gives each a disjoint
    1/c share of the queries (all of them when c = 1), on which the canary flips its
    teacher's vote in a direction of its own (a random sign per query: the auditor picks
    queries its teacher votes either way without it). Signs make the canaries' shifts
    nearly orthogonal, so each is scored by the likelihood ratio of its own pattern, the
    others' flips acting as (small) noise."""
    from raudit.audit.one_run import best_one_run

    if canaries < 2:
        raise ConfigError(f"--canaries must be at least 2, got {canaries!r}")
    if teachers < 1:
        raise ConfigError(f"teachers must be >= 1, got {teachers!r}")
    per_teacher = math.ceil(canaries / teachers)
    if per_teacher > mech.queries:
        raise ConfigError(f"--canaries {canaries} over {teachers} teachers needs "
                          f"{per_teacher} queries per teacher; the mechanism answers "
                          f"{mech.queries}")
    rng = np.random.default_rng(seed)
    inclusion = np.where(rng.random(canaries) < 0.5, 1, -1)
    used = min(teachers, canaries)
    # canary i = part i // k of teacher i % k; parts split a teacher's queries equally
    owner = np.full((used, per_teacher), -1, dtype=np.int64)
    for i in range(canaries):
        owner[i % teachers, i // teachers] = i
    teacher_seeds = rng.integers(0, 2**63, size=used)

    def slots(t):  # (part of each query, flip sign of each query) of teacher t: regenerated
        g = np.random.default_rng(int(teacher_seeds[t]))
        sign = g.integers(0, 2, mech.queries, dtype=np.int8) * 2 - 1
        part = np.zeros(mech.queries, dtype=np.int64) if per_teacher == 1 else \
            g.permutation(mech.queries) % per_teacher  # one canary owns every query
        return part, sign

    shift = np.zeros(mech.queries)  # on the n1 coordinate (n0 moves the other way)
    for t in range(used):
        part, sign = slots(t)
        member = owner[t][part]
        shift += sign * ((member >= 0) & (inclusion[np.maximum(member, 0)] == 1))
    draw = rng.normal if mech.noise == "gaussian" else rng.laplace
    u1 = shift + draw(0.0, mech.scale, mech.queries)
    # oriented so that canary i's flip is +1: sign * u1 (and -sign * u0 for argmax)
    up, down = coordinate_llr(mech, u1), coordinate_llr(mech, -u1)
    if mech.aggregation == "argmax":
        u0 = -shift + draw(0.0, mech.scale, mech.queries)
        up, down = up + coordinate_llr(mech, -u0), down + coordinate_llr(mech, u0)
    scores = np.empty(canaries)
    for t in range(used):
        part, sign = slots(t)
        per_part = np.bincount(part, weights=np.where(sign > 0, up, down), minlength=per_teacher)
        mine = owner[t] >= 0
        scores[owner[t][mine]] = per_part[mine]
    out = best_one_run(scores, inclusion, beta=beta)
    return {**out, "queries_per_canary": int(mech.queries // per_teacher), "teachers": teachers}


def teachers_of(impl: str, options: dict, n_rows: int, n_cols: int) -> int:
    """How many teachers ``impl`` trains on a table of ``n_rows`` rows (the canaries'
    homes in a one-run audit)."""
    from raudit import generators

    hp = generators.get(impl)(**dict(options)).resolve(n_rows, n_cols)
    return int(hp.teachers if hasattr(hp, "teachers") else hp[0])
