"""The noisy-vote mechanism a generator runs at a budget, without training it.

A transcript-level audit and the black-box summary's ``eps_true`` need the mechanism,
not a trained GAN: how many noisy-vote queries the run answers and with which noise.
For the generators whose vote schedule is data-independent that is a function of the
options and the budget (a mechanism-only dry run of the schedule):

* ``paper``: Laplace(1/lambda) (``noise_scale="inverse"``) votes, as many queries as its
  data-independent moments accountant allows at eps (the budget fully spent; a run that
  hits ``max_iter`` first releases fewer);
* ``fixed``: GNMax with the sigma its planner calibrates for its query count, with
  public bounds (no DP-bounds columns; a dataset without public bounds gets less);
  refused for ``analysis=data-dependent``, whose answered queries depend on the votes.

The other ports emit noisy votes whose count depends on training: their mechanism is
read off the events of ONE training run (:func:`schedule_from_run`, each vote one
coordinate of a "threshold" release at the scale over the record's sensitivity).
gpate and dpgan (no vote histograms) are refused with one line; generators that emit
no privacy events (gan, identity, exec: generators) cannot be audited at transcript
level at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raudit import generators
from raudit.errors import ConfigError
from raudit.audit.transcript import VoteMechanism

__all__ = ["SCHEDULES", "Schedule", "check_transcript", "schedule_eps_true", "schedule_from_run",
           "schedule_of", "emits_privacy_events"]

SCHEDULES = ("paper", "fixed")


@dataclass(frozen=True)
class Schedule:
    mechanism: VoteMechanism
    source: str  # how it was obtained, printed beside eps_true


def emits_privacy_events(impl: str) -> bool:
    if impl.startswith("exec:"):  # runs in its own process: no observer events come back
        return False
    return bool(generators.get(impl).capabilities.privacy_events)


def _emits_votes(impl: str) -> bool:
    return "votes" in generators.get(impl).capabilities.events


def check_transcript(impl: str) -> None:
    """Raise a one-line ConfigError unless ``impl`` supports ``--threat-model transcript``."""
    if not emits_privacy_events(impl):
        raise ConfigError(f"--threat-model transcript needs a generator that emits privacy "
                          f"events (noisy votes, DP-SGD steps); {impl!r} emits none")
    if impl not in SCHEDULES and not _emits_votes(impl):
        raise ConfigError(f"--threat-model transcript: mechanism-only trials exist for "
                          f"{', '.join(SCHEDULES)}; {impl!r} emits events but its schedule "
                          "depends on training (not built yet)")


def schedule_from_run(impl: str, options: dict, table, columns, epsilon: float, delta: float,
                      seed: int) -> tuple[Schedule, object]:
    """The vote mechanism of ONE training run of ``impl`` on ``table`` (its observed events:
    every vote, charged or not), and that run's eps_true. For generators whose schedule
    depends on training (the ports). All votes must share one noise kind and scale;
    the record's sensitivity (teachers it reached) divides the scale."""
    from raudit.accountants.true_curve import releases
    from raudit.generators.events import EventLog
    from raudit.generators.transcript import privacy_events, run_eps_true

    check_transcript(impl)
    log = EventLog()
    generators.get(impl)(**dict(options)).fit(table, epsilon=float(epsilon), delta=float(delta),
                                              seed=int(seed), columns=columns, observer=log)
    tr = privacy_events(log.events)
    sens = tr.sensitivity[0] if tr.sensitivity else 1
    counts, gnmax = releases(tr.events, model=0, sensitivity=sens)
    kinds = {(kind, scale) for kind, scale, rate in counts if rate == 1.0}
    if gnmax or len(kinds) != 1 or len(counts) != 1:
        raise ConfigError(f"--threat-model transcript: {impl!r}'s run released "
                          f"{len(counts)} kinds of votes; one noise kind and scale is modelled")
    (kind, scale), = kinds
    mech = VoteMechanism(kind, scale, int(sum(counts.values())), "threshold")
    return (Schedule(mech, f"events of one training run (seed {seed}; {sens} teacher(s) per "
                     "row; every vote, charged or not)"),
            run_eps_true(log.events, delta=float(delta)))


def schedule_of(impl: str, options: dict, epsilon: float, delta: float) -> Schedule:
    """The vote mechanism ``impl`` runs with ``options`` at (epsilon, delta)."""
    check_transcript(impl)
    if impl not in SCHEDULES:
        raise ConfigError(f"no dry-run schedule for {impl!r}: its votes depend on training")
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

    if o["analysis"] == "data-dependent":
        raise ConfigError("fixed with analysis=data-dependent answers the queries its noisy "
                          "threshold check lets through (Confident-GNMax): no dry-run schedule "
                          "models it; its eps_true is the data-dependent RDP bound of a run's "
                          "votes (raudit train --events)")
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
