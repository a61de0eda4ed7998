"""The noisy-vote mechanism a generator runs at a budget, without training it.

A transcript-level audit and the black-box summary's ``eps_true`` need the mechanism,
not a trained GAN: how many noisy-vote queries the run answers and with which noise.
For the generators whose vote schedule is data-independent that is a function of the
options and the budget (a mechanism-only dry run of the schedule):

* ``paper``: Laplace(1/lambda) (``noise_scale="inverse"``) votes, as many queries as its
  data-independent moments accountant allows at eps (the budget fully spent; a run that
  hits ``max_iter`` first releases fewer);
* ``fixed``: GNMax with the sigma its planner calibrates for its query count, with
  public bounds (no DP-bounds columns; a dataset without public bounds gets less).

Generators that emit privacy events but whose schedule depends on the data or the
training (the other ports, gpate, dpgan) are refused with one line; those that emit
none (gan, identity, exec: generators) cannot be audited at transcript level at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raudit import generators
from raudit.errors import ConfigError
from raudit.audit.transcript import VoteMechanism

__all__ = ["SCHEDULES", "Schedule", "check_transcript", "schedule_of", "schedule_eps_true"]

SCHEDULES = ("paper", "fixed")


@dataclass(frozen=True)
class Schedule:
    mechanism: VoteMechanism
    source: str  # how it was obtained, printed beside eps_true


def _emits_privacy_events(impl: str) -> bool:
    if impl.startswith("exec:"):  # runs in its own process: no observer events come back
        return False
    return bool(generators.get(impl).capabilities.privacy_events)


def check_transcript(impl: str) -> None:
    """Raise a one-line ConfigError unless ``impl`` supports ``--threat-model transcript``."""
    if not _emits_privacy_events(impl):
        raise ConfigError(f"--threat-model transcript needs a generator that emits privacy "
                          f"events (noisy votes, DP-SGD steps); {impl!r} emits none")
    if impl not in SCHEDULES:
        raise ConfigError(f"--threat-model transcript: mechanism-only trials exist for "
                          f"{', '.join(SCHEDULES)}; {impl!r} emits events but its schedule "
                          "depends on training (not built yet)")


def schedule_of(impl: str, options: dict, epsilon: float, delta: float) -> Schedule:
    """The vote mechanism ``impl`` runs with ``options`` at (epsilon, delta)."""
    check_transcript(impl)
    gen = generators.get(impl)(**dict(options))
    o = gen.options
    if impl == "paper":
        from raudit.accountants.closed_form import queries_to_reach

        if o["max_iter"] is not None:
            raise ConfigError("--threat-model transcript models paper's full budget; with "
                              "max_iter the run may stop before it (drop max_iter)")
        if o["noise_scale"] != "inverse":
            raise ConfigError("--threat-model transcript models paper's noise_scale=inverse only")
        q = queries_to_reach(float(epsilon), o["lam"], o["orders"], float(delta))
        return Schedule(VoteMechanism("laplace", 1.0 / o["lam"], max(q, 1), o["aggregation"]),
                        "dry run of the schedule: the queries its accountant allows at eps")
    from raudit.generators.pategan.fixed import plan

    _, sigma = plan(float(epsilon), float(delta), gen.queries(), 0, o["bounds_share"])
    return Schedule(VoteMechanism("gaussian", sigma, gen.queries()),
                    "dry run of the schedule: its planner's sigma, public bounds")


def schedule_eps_true(sched: Schedule, delta: float):
    """eps_true (raudit.accountants.true_curve) of a schedule's votes, one teacher per row."""
    from raudit.accountants.events import PateVote
    from raudit.accountants.true_curve import eps_true

    m = sched.mechanism
    ev = PateVote(np.zeros((1, m.queries), dtype=np.int64), 2, m.noise, m.scale, m.aggregation)
    return eps_true([ev], delta=float(delta))
