"""The mechanism of ONE training run, read off its privacy events.

For the generators whose vote schedule depends on training (the ports, ``gpate``,
``fixed`` with ``analysis=data-dependent``) no dry run gives the mechanism
(:mod:`raudit.audit.mechanisms`): one run's observed events do, every vote counted,
charged or not.
"""

from __future__ import annotations

import numpy as np

from raudit import generators
from raudit.audit.dpsgd import FixedConfidentReleases, GaussianReleases
from raudit.audit.mechanisms import (Schedule, check_transcript, confident_gnmax_only,
                                     schedule_eps_true)
from raudit.audit.transcript import VoteMechanism
from raudit.errors import ConfigError

__all__ = ["schedule_from_run"]


def schedule_from_run(impl: str, options: dict, table, columns, epsilon: float, delta: float,
                      seed: int) -> tuple[Schedule, object]:
    """The vote mechanism of ONE training run of ``impl`` on ``table`` (its observed events:
    every vote, charged or not), and that run's eps_true. For generators whose schedule
    depends on training (the ports). All votes must share one noise kind and scale;
    the record's sensitivity (teachers it reached) divides the scale."""
    from raudit.events import ConfidentGNMax
    from raudit.accountants.true_curve import releases
    from raudit.events import EventLog
    from raudit.generators.transcript import privacy_events, run_eps_true

    check_transcript(impl)
    log = EventLog()
    gen = generators.get(impl)(**dict(options))
    gen.fit(table, epsilon=float(epsilon), delta=float(delta), seed=int(seed), columns=columns,
            observer=log)
    tr = privacy_events(log.events)
    if confident_gnmax_only(impl):  # G-PATE's gradient votes
        sched = _gpate_schedule(tr, seed)  # eps_true of the audited releases (pld, mu-GDP)
        charged = float(gen.summary().get("eps_hat", float("nan")))
        sched = Schedule(sched.mechanism, f"{sched.source}; gpate charged {charged:.4g} "
                         "(its data-dependent RDP)")
        return sched, schedule_eps_true(sched, delta)
    if any(isinstance(e, ConfidentGNMax) for e in tr.events):  # fixed's data-dependent run
        sched = _fixed_dd_schedule(tr, seed, gen.summary())
        return sched, schedule_eps_true(sched, delta)
    sens = tr.sensitivity[0] if tr.sensitivity else 1
    counts, gnmax = releases(tr.events, model=0, sensitivity=sens)
    kinds = {(kind, scale) for kind, scale, rate in counts if rate == 1.0}
    if gnmax or len(kinds) != 1 or len(counts) != 1:
        raise ConfigError(f"--threat-model transcript: a run of {impl!r} released "
                          f"{len(counts)} kinds of votes; one noise kind and scale is modelled")
    (kind, scale), = kinds
    mech = VoteMechanism(kind, scale, int(sum(counts.values())), "threshold")
    return (Schedule(mech, f"events of one training run (seed {seed}; {sens} teacher(s) per "
                     "row; every vote, charged or not)"),
            run_eps_true(log.events, delta=float(delta)))


def _gpate_schedule(tr, seed: int) -> Schedule:
    """G-PATE's releases in one run: every query of an applied step pays the threshold
    check (noisy top count, sigma1); the answered ones release a noisy histogram (sigma2).
    A record reaching s teachers (shared optimiser state) moves s votes of each: the
    releases are modelled at sigma / s, one vote's shift."""
    from raudit.events import ConfidentGNMax

    steps = [e for e in tr.events if isinstance(e, ConfidentGNMax)
             and (e.mask is None or e.mask[0])]
    if not steps:
        raise ConfigError("--threat-model transcript: gpate took no step in its training run "
                          "(it released nothing to audit); raise eps or the table size")
    if len({(e.sigma1, e.sigma2) for e in steps}) != 1:
        raise ConfigError("--threat-model transcript: gpate's steps used several noise scales")
    asked = sum(int(e.counts.shape[1]) for e in steps)
    answered = sum(int(np.sum(e.answered[0])) for e in steps)
    sens = tr.sensitivity[0] if tr.sensitivity else 1
    mech = GaussianReleases(steps[0].sigma1 / sens, asked, steps[0].sigma2 / sens, answered)
    reach = f"; {sens} teachers per row, the sigmas divided by {sens}" if sens > 1 else ""
    return Schedule(mech, f"events of one training run (seed {seed}; {len(steps)} steps "
                    f"applied, {answered:,} of {asked:,} queries answered{reach}): the noisy vote "
                    "histograms G-PATE post-processes (each answer is their noisy argmax), "
                    "a stronger release than its answers, so eps_true is of these releases")


def _fixed_dd_schedule(tr, seed: int, summary: dict) -> Schedule:
    """fixed's data-dependent run: every query pays the threshold check (sigma1), the
    answered ones release a noisy two-class histogram (sigma2); each query's votes come
    from a fresh partition, so a record moves one teacher's vote on it."""
    from raudit.events import ConfidentGNMax

    if any(not isinstance(e, ConfidentGNMax) for e in tr.events):
        raise ConfigError("--threat-model transcript: fixed's data-dependent run released "
                          "votes besides its Confident-GNMax queries; one kind is modelled")
    if tr.sensitivity_per_iteration and tr.sensitivity_per_iteration[0] > 1:
        raise ConfigError("--threat-model transcript: a record reached several teachers in "
                          "one iteration of fixed's run; one teacher's vote is modelled")
    steps = [e for e in tr.events if e.mask is None or e.mask[0]]
    if not steps or len({(e.sigma1, e.sigma2) for e in steps}) != 1:
        raise ConfigError("--threat-model transcript: fixed's data-dependent run released no "
                          "query, or at several noise scales")
    asked = sum(int(e.counts.shape[1]) for e in steps)
    answered = sum(int(np.sum(e.answered[0])) for e in steps)
    mech = FixedConfidentReleases(steps[0].sigma1, asked, steps[0].sigma2, answered)
    released = float(summary.get("eps_hat", float("nan")))
    uncovered = [f"the released data-dependent eps ({released:.4g}, its smooth-sensitivity "
                 "release: one more Gaussian release of the votes, not in this transcript)"]
    if summary.get("bounds_noise_multiplier") is not None:
        uncovered.append(f"the DP-bounds pre-pass ({summary.get('dp_bounds_columns')} columns "
                         "without public bounds, noise multiplier "
                         f"{summary['bounds_noise_multiplier']:.4g})")
    return Schedule(mech, f"events of one training run (seed {seed}; {answered:,} of "
                    f"{asked:,} queries answered): the noisy threshold checks and the noisy "
                    "vote histograms of the answered queries (each answer is their noisy "
                    "argmax), a stronger release than its answers, so eps_true is of these "
                    "releases", tuple(uncovered))
