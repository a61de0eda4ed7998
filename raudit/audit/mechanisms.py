"""The privacy mechanism a generator runs at a budget (noisy votes, DP-SGD steps).

A transcript-level audit and the black-box summary's ``eps_true`` need the mechanism,
not a trained GAN: how many noisy-vote queries the run answers and with which noise.
Each generator says so itself: :meth:`raudit.generators.base.Generator.mechanism`
returns the releases one model makes on the game's table at (eps, delta) without
training (a dry run of its schedule: ``paper``'s closed-form stopping iteration with
its preset's ``max_iter`` and the last iteration past eps; ``fixed``'s planner;
``dpgan``'s DP-SGD steps), or None where they depend on the votes. Nothing here
knows a generator by name; this module turns the generator's events into the
mechanism the audits simulate.

The other generators emit noisy votes whose count depends on training: their
mechanism is read off the events of ONE training run
(:func:`raudit.audit.run_schedule.schedule_from_run`, each vote one coordinate of a
"threshold" release at the scale over the record's sensitivity). ``gpate`` too: how
many steps it takes and which queries Confident-GNMax answers depend on the votes, so
one run's gradient-vote events give its Gaussian releases
(:class:`raudit.audit.dpsgd.GaussianReleases`); so do ``fixed``'s data-dependent runs
(the same Confident-GNMax releases; the smooth-sensitivity release of their eps is a
further release that transcript does not cover, named in :attr:`Schedule.uncovered`).
Generators that emit no privacy events (gan, identity, exec: generators) cannot be
audited at transcript level at all.

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
from raudit.events import GaussianStep
from raudit.audit.dpsgd import GaussianReleases, SubsampledGaussianMechanism
from raudit.audit.transcript import VoteMechanism

if TYPE_CHECKING:
    from raudit.audit.game import Game

__all__ = ["Schedule", "check_one_run_transcript", "check_transcript", "confident_gnmax_only",
           "dry_run_votes", "dry_runs", "event_trial", "has_dry_run", "mechanism_columns",
           "schedule_eps_true", "schedule_of", "emits_privacy_events"]

@dataclass(frozen=True)
class Schedule:
    mechanism: VoteMechanism | SubsampledGaussianMechanism | GaussianReleases
    source: str  # how it was obtained, printed beside eps_true
    uncovered: tuple[str, ...] = ()  # releases of the run that the mechanism leaves out


def dry_runs(impl: str) -> bool:
    """Whether ``impl`` gives its releases without training for some options (it
    implements :meth:`~raudit.generators.base.Generator.mechanism`)."""
    from raudit.generators.base import Generator

    if impl.startswith("exec:"):
        return False
    return generators.get(impl).mechanism is not Generator.mechanism


def dry_run_votes(impl: str) -> bool:
    """Whether ``impl``'s dry run is noisy votes (what the active level runs itself)."""
    return dry_runs(impl) and "votes" in generators.get(impl).capabilities.events


def has_dry_run(impl: str, options: dict) -> bool:
    """Whether ``impl`` with ``options`` gives its schedule without training (fixed's
    data-dependent analysis answers the queries its votes let through: one run's events
    give it)."""
    return dry_runs(impl) and generators.get(impl)(**dict(options)).has_dry_run()


def confident_gnmax_only(impl: str) -> bool:
    """Whether ``impl`` releases Confident-GNMax gradient votes and no other votes
    (G-PATE): its releases are not split among canaries."""
    events = generators.get(impl).capabilities.events
    return "gradient_votes" in events and "votes" not in events


def emits_privacy_events(impl: str) -> bool:
    if impl.startswith("exec:"):  # runs in its own process: no observer events come back
        return False
    return bool(generators.get(impl).capabilities.privacy_events)


def releases_of(impl: str) -> str | None:
    """The noise kinds ``impl``'s mechanism releases, comma-separated (its declared
    :attr:`~raudit.generators.capabilities.Capabilities.releases`), or None."""
    if impl.startswith("exec:") or impl not in generators.names():
        return None
    return ",".join(generators.get(impl).capabilities.releases) or None


def _emits_votes(impl: str) -> bool:
    """Noisy votes (the ports) or G-PATE's gradient votes: one run's events give them."""
    events = generators.get(impl).capabilities.events
    return "votes" in events or "gradient_votes" in events


def check_transcript(impl: str) -> None:
    """Raise a one-line ConfigError unless ``impl`` supports ``--threat-model transcript``."""
    if not emits_privacy_events(impl):
        raise ConfigError(f"--threat-model transcript needs a generator that emits privacy "
                          f"events (noisy votes, DP-SGD steps); {impl!r} emits none")
    if not dry_runs(impl) and not _emits_votes(impl):
        raise ConfigError(f"--threat-model transcript: {impl!r} emits events but neither "
                          "a dry run of its schedule nor its votes (not built yet)")


def check_one_run_transcript(impl: str) -> None:
    """Raise a one-line ConfigError unless a transcript one-run audit of ``impl`` exists."""
    if confident_gnmax_only(impl):
        raise ConfigError("--one-run at transcript level is built for vote histograms and "
                          "DP-SGD; gpate's gradient votes are not split among canaries yet")


def schedule_of(impl: str, options: dict, epsilon: float, delta: float, *, table=None,
                columns=None) -> Schedule:
    """The mechanism ``impl`` runs with ``options`` at (epsilon, delta) on ``table`` (its
    size fixes the teachers, the batch and the sampling rate; its columns' bounds the
    DP-bounds share): the generator's own dry run, as a mechanism the audits simulate."""
    check_transcript(impl)
    gen = generators.get(impl)(**dict(options))
    run = gen.mechanism(table, epsilon=float(epsilon), delta=float(delta), columns=columns)
    if run is None:
        raise ConfigError(f"no dry-run schedule for {impl!r}: its votes depend on training")
    ev, = run.events
    mech: SubsampledGaussianMechanism | VoteMechanism
    if isinstance(ev, GaussianStep):
        mech = SubsampledGaussianMechanism(ev.noise_multiplier, ev.sampling_rate, ev.count)
    else:
        mech = VoteMechanism(ev.noise_kind, ev.noise_scale, int(ev.n1.shape[1]), ev.aggregation)
    return Schedule(mech, run.source, run.uncovered)


def schedule_eps_true(sched: Schedule, delta: float):
    """eps_true (raudit.accountants.true_curve) of a schedule's releases, one teacher per row."""
    from raudit.events import GaussianStep, PateVote
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
                            "eps_true_method": None, "eps_true_source": None,
                            "mechanism_releases": releases_of(game.impl)}
    why = None
    if dry_runs(game.impl) and game.delta:
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
    if dry_runs(game.impl) and game.delta:
        try:
            _dry_run(game)
            return None  # the dry run gives it, without watching any training
        except ConfigError:
            pass
    return per_world["in"][0]["trial_id"]


def _dry_run(game) -> Schedule:
    """The schedule of ``game``'s generator on the game's table (D_in)."""
    from raudit import data

    ds = data.load(game.dataset, label=game.label, bounds=game.bounds)
    return schedule_of(game.impl, game.options, game.epsilon, game.delta, table=ds.train,
                       columns=ds.columns)
