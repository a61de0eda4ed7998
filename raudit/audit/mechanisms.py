"""The privacy mechanism a generator runs at a budget (noisy votes, DP-SGD steps).

A transcript-level audit and the black-box summary's ``eps_true`` need the mechanism,
not a trained GAN: how many noisy-vote queries the run answers and with which noise.
For the generators whose vote schedule is data-independent that is a function of the
options and the budget (a mechanism-only dry run of the schedule):

* ``paper``: Laplace(1/lambda) (``noise_scale="inverse"``) votes, as many queries as its
  data-independent moments accountant allows at eps (the budget fully spent; a run that
  hits ``max_iter`` first releases fewer);
* ``fixed``: GNMax with the sigma its planner calibrates for its query count, with
  public bounds (no DP-bounds columns; a dataset without public bounds gets less);
  with ``sign_query=on`` one more answer at the sign query's sigma, folded into the one
  sigma that gives the Q + 1 Gaussian answers the same mu;
  no dry run for ``analysis=data-dependent``, whose answered queries depend on the
  votes: like gpate, one run's events give its releases (below).
* ``dpgan``: DP-SGD steps of its critic (:class:`raudit.audit.dpsgd.SubsampledGaussianMechanism`):
  iterations x critic_steps steps at the Poisson rate batch / N with the noise
  multiplier its planner calibrates before training (a function of eps, delta, N and
  how many columns lack public bounds: no record is read). The DP-bounds pre-pass
  (a Gaussian histogram, only for columns without public bounds) is not audited; the
  source says so.

The other ports emit noisy votes whose count depends on training: their mechanism is
read off the events of ONE training run (:func:`raudit.audit.run_schedule.schedule_from_run`, each vote one
coordinate of a "threshold" release at the scale over the record's sensitivity).
``gpate`` too: how many steps it takes and which queries Confident-GNMax answers
depend on the votes, so one run's gradient-vote events give its Gaussian releases
(:class:`raudit.audit.dpsgd.GaussianReleases`); so do ``fixed``'s data-dependent runs
(the same Confident-GNMax releases; the smooth-sensitivity release of their eps is a
further release that transcript does not cover, named in :attr:`Schedule.uncovered`). Generators that emit no privacy events
(gan, identity, exec: generators) cannot be audited at transcript level at all.

The summary's eps_true (:func:`mechanism_columns`) comes from the dry run where one
exists, else from the events one shadow model's chunk kept while it trained
(:func:`event_trial` picks that model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from raudit import generators
from raudit.errors import ConfigError
from raudit.audit.dpsgd import GaussianReleases, SubsampledGaussianMechanism
from raudit.audit.transcript import VoteMechanism

if TYPE_CHECKING:
    from raudit.audit.game import Game

__all__ = ["SCHEDULES", "VOTE_SCHEDULES", "Schedule", "check_one_run_transcript", "check_transcript",
           "event_trial", "has_dry_run", "mechanism_columns", "schedule_eps_true", "schedule_of",
           "emits_privacy_events"]

VOTE_SCHEDULES = ("paper", "fixed")  # dry-run noisy-vote schedules (the active level runs them)
SCHEDULES = VOTE_SCHEDULES + ("dpgan",)  # every dry-run schedule (dpgan: DP-SGD steps)


@dataclass(frozen=True)
class Schedule:
    mechanism: VoteMechanism | SubsampledGaussianMechanism | GaussianReleases
    source: str  # how it was obtained, printed beside eps_true
    uncovered: tuple[str, ...] = ()  # releases of the run that the mechanism leaves out


def has_dry_run(impl: str, options: dict) -> bool:
    """Whether ``impl``'s schedule is a dry run (no training): fixed's data-dependent
    analysis answers the queries its votes let through, so one run's events give it."""
    if impl not in SCHEDULES:
        return False
    return impl != "fixed" or generators.get(impl)(**dict(options)).options["analysis"] != \
        "data-dependent"


def emits_privacy_events(impl: str) -> bool:
    if impl.startswith("exec:"):  # runs in its own process: no observer events come back
        return False
    return bool(generators.get(impl).capabilities.privacy_events)


def _emits_votes(impl: str) -> bool:
    """Noisy votes (the ports) or G-PATE's gradient votes: one run's events give them."""
    events = generators.get(impl).capabilities.events
    return "votes" in events or "gradient_votes" in events


def check_transcript(impl: str) -> None:
    """Raise a one-line ConfigError unless ``impl`` supports ``--threat-model transcript``."""
    if not emits_privacy_events(impl):
        raise ConfigError(f"--threat-model transcript needs a generator that emits privacy "
                          f"events (noisy votes, DP-SGD steps); {impl!r} emits none")
    if impl not in SCHEDULES and not _emits_votes(impl):
        raise ConfigError(f"--threat-model transcript: mechanism-only trials exist for "
                          f"{', '.join(SCHEDULES)}; {impl!r} emits events but its schedule "
                          "depends on training (not built yet)")


def check_one_run_transcript(impl: str) -> None:
    """Raise a one-line ConfigError unless a transcript one-run audit of ``impl`` exists."""
    if impl == "gpate":
        raise ConfigError("--one-run at transcript level is built for vote histograms and "
                          "DP-SGD; gpate's gradient votes are not split among canaries yet")


def _dpgan_schedule(options: dict, epsilon: float, delta: float, table, columns) -> Schedule:
    from raudit.generators.gan.dpgan import plan
    from raudit.generators.pategan.dp_bounds import private_columns

    if table is None:
        raise ConfigError("dpgan's DP-SGD schedule needs the training table's size and columns")
    gen = generators.get("dpgan")(**dict(options))
    iters, rate = gen.resolve(len(table), len(table.columns))
    n_dp = len(private_columns(list(table.columns), tuple(columns) if columns else None))
    steps = iters * gen.options["critic_steps"]
    z_bounds, z = plan(float(epsilon), float(delta), steps, rate, n_dp,
                       gen.options["bounds_share"])
    pre = ("no DP-bounds pre-pass (public bounds)" if z_bounds is None else
           f"the DP-bounds pre-pass (noise multiplier {z_bounds:.4g}, {n_dp} columns) is "
           "released too and not audited")
    return Schedule(SubsampledGaussianMechanism(z, rate, steps),
                    f"dry run of the schedule: {steps:,} critic steps at its planner's noise; {pre}")


def schedule_of(impl: str, options: dict, epsilon: float, delta: float, *, table=None,
                columns=None) -> Schedule:
    """The mechanism ``impl`` runs with ``options`` at (epsilon, delta) (dpgan: on
    ``table`` with ``columns``, which fix its sampling rate and DP-bounds columns)."""
    check_transcript(impl)
    if impl not in SCHEDULES:
        raise ConfigError(f"no dry-run schedule for {impl!r}: its votes depend on training")
    if impl == "dpgan":
        return _dpgan_schedule(options, epsilon, delta, table, columns)
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
    if o["sign_query"] == "on":  # Q answers at sigma and one at sigma_s: Gaussians, so the
        # same mu^2 = 2 sum 1/sigma_i^2 as Q + 1 answers at one sigma (exact for eps_true)
        from raudit.generators.pategan.fixed_sign import plan_sign

        q = gen.queries()
        _, sigma, s = plan_sign(float(epsilon), float(delta), q, 0, o["bounds_share"],
                                o["sign_share"])
        eq = ((q + 1) / (q / sigma ** 2 + 1 / s ** 2)) ** 0.5
        return Schedule(VoteMechanism("gaussian", eq, q + 1),
                        f"dry run of the schedule: {q:,} answers at its planner's sigma "
                        f"{sigma:.4g} and the sign answer at {s:.4g}, as {q + 1:,} at the "
                        "sigma of the same mu; public bounds")
    _, sigma = plan(float(epsilon), float(delta), gen.queries(), 0, o["bounds_share"])
    return Schedule(VoteMechanism("gaussian", sigma, gen.queries()),
                    "dry run of the schedule: its planner's sigma, public bounds")


def schedule_eps_true(sched: Schedule, delta: float):
    """eps_true (raudit.accountants.true_curve) of a schedule's releases, one teacher per row."""
    from raudit.accountants.events import GaussianStep, PateVote
    from raudit.accountants.true_curve import eps_true

    m = sched.mechanism
    if isinstance(m, SubsampledGaussianMechanism):
        return eps_true([GaussianStep(m.scale, m.sampling_rate, m.queries)], delta=float(delta))
    if isinstance(m, GaussianReleases):
        evs = [PateVote(np.zeros((1, m.threshold_queries), dtype=np.int64), 2, "gaussian",
                        m.threshold_sigma, "threshold")]
        if m.histogram_queries:
            evs.append(PateVote(np.zeros((1, m.histogram_queries), dtype=np.int64), 2,
                                "gaussian", m.histogram_sigma, "argmax"))
        return eps_true(evs, delta=float(delta))
    ev = PateVote(np.zeros((1, m.queries), dtype=np.int64), 2, m.noise, m.scale, m.aggregation)
    return eps_true([ev], delta=float(delta))


def mechanism_columns(game: Game, kept: pd.DataFrame | None = None) -> dict[str, Any]:
    """The summary's threat model, eps_true and where it came from (schema 11).

    eps_true comes from a dry run of the generator's vote schedule (no training,
    :mod:`raudit.audit.mechanisms`) where one exists; else from the events one shadow
    model's chunk kept while it trained (``kept``: the audit's shadow rows; the row
    that carries ``eps_true``, see :func:`event_trial`); else it is left empty."""
    cols: dict[str, Any] = {"threat_model": "white-box" if getattr(game, "white_box", None)
                            else "black-box", "eps_true": None,
                            "eps_true_method": None, "eps_true_source": None}
    why = None
    if game.impl in SCHEDULES and game.delta:
        try:
            sched = _dry_run(game)
        except ConfigError as exc:  # an option the dry run does not model: the events, or none
            why = f"not computed: {exc}"
        else:
            true = schedule_eps_true(sched, game.delta)
            return {**cols, "eps_true": float(true.eps), "eps_true_method": true.method,
                    "eps_true_source": sched.source}
    elif emits_privacy_events(game.impl):
        why = ("not computed: its votes depend on training (no dry-run schedule) and no "
               "shadow model's events were kept (an audit resumed from an older store)")
    if why is not None and kept is not None and "eps_true_source" in kept:
        rows = kept[kept["eps_true_source"].notna()]
        if len(rows):
            r = rows.sort_values(["world", "shadow_index"]).iloc[0]
            value = r["eps_true"]
            return {**cols, "eps_true": None if pd.isna(value) else float(value),
                    "eps_true_method": r["eps_true_method"], "eps_true_source": r["eps_true_source"]}
    return {**cols, "eps_true_source": why}


def event_trial(game: Game, per_world: dict[str, list[dict]]) -> str | None:
    """The trial whose chunk keeps its privacy events for the summary's eps_true: the
    first in-world model, for a generator that emits privacy events and whose schedule
    no dry run gives (:func:`mechanism_columns`); None otherwise."""
    if not emits_privacy_events(game.impl) or not per_world.get("in"):
        return None
    if game.impl in SCHEDULES and game.delta:
        try:
            _dry_run(game)
            return None  # the dry run gives it, without watching any training
        except ConfigError:
            pass
    return per_world["in"][0]["trial_id"]


def _dry_run(game) -> Schedule:
    """The schedule of ``game``'s generator (dpgan: on the game's table, whose size fixes
    its sampling rate and whose columns its DP-bounds share)."""
    table = columns = None
    if game.impl == "dpgan":
        from raudit import data

        ds = data.load(game.dataset, label=game.label, bounds=game.bounds)
        table, columns = ds.train, ds.columns
    return schedule_of(game.impl, game.options, game.epsilon, game.delta, table=table,
                       columns=columns)
