"""How long a run will take, said before anything trains.

Every term is measured on this machine (:mod:`raudit.runs.costs`, CPU seconds, cached
per set-up), none is a constant fitted once:

* training: models x (per-model work + iterations x seconds per model-iteration at the
  run's chunk size) / workers, for the target selection's pool and for the game; a
  pool model also computes every candidate's features, a game model one context's;
* target selection's scoring: one attack forest per candidate on the pool's models
  (in the driver, one process);
* the analysis: the attack forest on the game's train split and the bounds;
* start-up: starting Ray and its actors, as the last run on this machine with the same
  backend and workers measured it; before any run has, a typical figure
  (:data:`raudit.runs.costs.COLD_STARTUP_S`), said as such, never nothing;
* what the command already spent when the line is printed (``spent_s``: loading, the
  chunk-size calibration and the measurement of these costs, tens of seconds on a cold
  cache): the total is the command's, from its start, not only what is left.

A resumed audit counts only the models its folder does not hold yet (``done``: a finished
target selection's pool, the game's stored models); the candidates are scored again (the
choice is made from the stored pool on every run) and the analysis runs whole.

Iterations per model: for the PATE family with a data-independent accountant (lam <=
1e-3: spec section 10) the closed form of
:func:`raudit.accountants.closed_form.iterations_to_reach` from the generator's own
resolved hyperparameters; else where the measurement's models stopped by eps within
its cap; else the run's ``max_iter`` / ``iterations``; else a lower bound.

The driver refreshes the total after the first chunk (raudit.audit.guard.Estimator).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from raudit import generators
from raudit.runs import calibrate as cb
from raudit.runs.calibrate import explicit_iterations
from raudit.runs.chunk_cache import Fit
from raudit.runs.costs import BOUNDS_ROWS, HIGH, Costs
from raudit.wording import current

LONG_S = 15 * 60  # above this the estimate names the flags that shrink the run
TRAIN_SHARE = 0.4  # of the game's models, the train split and the test split (game.split_sizes)


@dataclass(frozen=True)
class Estimate:
    selection_models: int
    game_models: int
    candidates: int  # attack forests fitted by the target selection (0 without one)
    iterations: int
    iterations_how: str  # "closed form" | "max_iter" | "calibration" | "lower bound"
    rate: float  # model-iterations per second per worker
    rate_how: str  # "cached" | "measured now"
    workers: int
    costs: Costs | None = None  # the measured parts (None: training at ``rate`` only)
    forest_rows: int = 0  # rows each selection forest fits (and scores)
    pooled: bool = True  # a pool model computes every candidate's features
    startup_s: float = 0.0  # starting Ray and its actors (raudit.runs.costs.startup_guess)
    costs_key: str | None = None  # the costs' cache entry (checked after the run)
    startup_how: str = "measured"  # or "typical": not measured on this machine yet
    spent_s: float = 0.0  # the command's seconds before the line (calibration, loading)
    done: int = 0  # models already in the results folder (a resume): not counted above

    def per_model(self, many: bool = False) -> float:
        """Seconds of one shadow model: training, sampling and the attack's features."""
        c = self.costs
        train = self.iterations / self.rate
        if c is None:
            return train
        return train + c.model_s + (c.extract_many_s if many else c.extract_s)

    def seconds(self, models: int, many: bool = False) -> float:
        return models * self.per_model(many) / self.workers

    @property
    def selection_s(self) -> float:
        """Training the pool (or the mini-MIAs) and scoring every candidate on it (a resume
        whose pool is stored only scores)."""
        score = self.candidates * self.costs.forest_s(self.forest_rows) if self.costs else 0.0
        return self.seconds(self.selection_models, many=self.pooled) + score

    @property
    def game_s(self) -> float:
        return self.seconds(self.game_models)

    @property
    def analysis_s(self) -> float:
        c = self.costs
        if c is None:
            return 0.0
        share = int(TRAIN_SHARE * self.game_models)  # the train split, and as many in test
        return c.forest_s(share) + c.bounds_s * share / BOUNDS_ROWS

    @property
    def total_s(self) -> float:
        return (self.spent_s + self.startup_s + self.selection_s + self.game_s
                + self.analysis_s)


def closed_form_iterations(impl: str, options: Mapping[str, Any], n_rows: int, n_cols: int,
                           epsilon: float, delta: float) -> int | None:
    """The stopping iteration of a PATE-family generator whose accountant stays in the
    data-independent regime, or None where no closed form applies (other generators, a
    lam above 1e-3 where the data-dependent term can win)."""
    from raudit.accountants.closed_form import iterations_to_reach

    cls = generators.get(impl)
    try:
        gen: Any = cls(**options)  # resolve(): the PATE family's; others raise below
        hp = gen.resolve(n_rows, n_cols)
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        return None
    need = ("lam", "orders", "batch", "student_steps", "max_iter")
    if not all(hasattr(hp, k) for k in need) or not 0 < hp.lam <= 1e-3:
        return None
    if "PateVote" not in cls.describe().privacy_events and "votes" not in cls.describe().events:
        return None
    default = {o.name: o.default for o in cls.describe().options or ()}.get("check")
    check = "top" if options.get("check", default) == "top" else "after"
    try:
        return iterations_to_reach(epsilon, hp.lam, int(hp.orders), delta,
                                   int(hp.student_steps) * int(hp.batch), check=check,
                                   max_iter=int(hp.max_iter))
    except Exception:  # noqa: BLE001 - an estimate never stops a run: fall back
        return None


def rate_at(rates: Mapping[Any, Any], m: int) -> float:
    """Model-iterations per second at chunk size ``m`` from rates measured at some M:
    interpolated on log M between the two nearest, clamped outside them (a chunk's rate
    grows with M until the core saturates)."""
    import math

    pts = sorted((int(k), float(v)) for k, v in rates.items())
    if m <= pts[0][0]:
        return pts[0][1] * (m / pts[0][0] if pts[0][0] > 1 else 1.0)
    for (m0, r0), (m1, r1) in zip(pts, pts[1:]):
        if m0 <= m <= m1:
            w = (math.log(m) - math.log(m0)) / (math.log(m1) - math.log(m0))
            return r0 + w * (r1 - r0)
    return pts[-1][1]


def cached_rates(fit: Fit, engine: Any) -> dict[int, float] | None:
    """This machine's cached chunk rates of ``fit`` on ``engine``'s slots ({M: rate}), or None."""
    from raudit.runs import chunk_cache

    return chunk_cache.lookup(chunk_cache.key(fit, cb.slot_device(engine)))


def audit_estimate(req: Any, engine: Any, out: Any = None) -> Estimate:
    """The estimate of ``raudit audit``'s request on ``engine`` (see the module). With
    ``out``, a folder holding another audit is refused first (ConfigError), as the run
    itself would, so nothing is measured for a run that will not start."""
    from raudit.audit.runner import prepare
    from raudit.results import ResultStore

    game, manifest, ds = prepare(req)
    if out is not None:
        ResultStore(out).check_manifest(manifest)
    return game_estimate(req, game, ds, engine, out=out)


def stored_models(out: Any, game: Any) -> tuple[int, int]:
    """(target selection, game) models the results folder ``out`` already holds with status
    ok (a resume trains only the others); (0, 0) for a new folder."""
    from pathlib import Path

    from raudit.results import ResultStore

    if out is None or not Path(out).exists():
        return 0, 0
    selection = (ResultStore(Path(out) / "target-selection").done_models()
                 if game.target == "auto" else 0)
    return selection, ResultStore(out).done_models()


def game_estimate(req: Any, game: Any, ds: Any, engine: Any, spent_s: float = 0.0,
                  out: Any = None) -> Estimate:
    """:func:`audit_estimate` of a request already prepared (``raudit.audit.runner.prepare``
    resolves its privacy once: run_audit passes its own game and dataset). ``spent_s``: what
    the command has spent before this call (run_audit's chunk-size calibration); the costs
    measured here are added to it. ``out``: the results folder; what it holds already is
    left out (:func:`stored_models`)."""
    import time

    from raudit.audit import targets as tg
    from raudit.runs.costs import costs_of, startup_guess

    t0 = time.perf_counter()

    fit = cb.game_fit(game)
    impl, opts, dataset, eps, delta, label, bounds = fit
    n_rows, n_cols = ds.train.shape
    iters, how = closed_form_iterations(impl, opts, n_rows, n_cols, eps, delta), "closed form"
    pooled = req.target_selection == "pool"
    # chunks of the larger stage (the pool's models are chunked like the game's)
    largest = max(2 * int(req.shadow_models),
                  int(req.selection_models) if pooled and game.target == "auto" else 0)
    m = max(1, min(int(req.chunk_size), largest))
    cands = (tg.candidates_of(ds.train, req.target_candidates)
             if game.target == "auto" else [])
    costs, rate_how, costs_key = costs_of(game, ds, cands if pooled else cands[:1], m,
                                         cb.slot_device(engine))
    iter_s = costs.iter_s
    rates = cached_rates(fit, engine)
    if rates and m != costs.m:  # the chunk-rate cache says how the rate moves with M
        iter_s *= rate_at(rates, costs.m) / rate_at(rates, m)
    if iters is None:
        explicit = explicit_iterations(opts, impl)
        if costs.iterations is not None:  # stopped by eps before the measurement's cap
            iters, how = costs.iterations, "calibration"
        elif explicit:
            iters, how = int(explicit), "max_iter"
        else:
            iters, how = HIGH, "lower bound"
    if game.target != "auto":
        selection, forests, rows = 0, 0, 0
    elif pooled:
        selection, forests = int(req.selection_models), len(cands)
        rows = int(req.selection_models) // 2
    else:  # per-candidate: its own pairs per candidate, one forest each
        selection, forests = 2 * len(cands) * int(req.target_pairs), len(cands)
        rows = int(req.target_pairs)
    startup, startup_how = startup_guess(engine)
    sel_done, game_done = stored_models(out, game)
    sel_done, game_done = min(sel_done, selection), min(game_done, 2 * int(req.shadow_models))
    return Estimate(selection - sel_done, 2 * int(req.shadow_models) - game_done, forests,
                    int(iters), how, 1.0 / max(iter_s, 1e-12), rate_how,
                    engine.planned_workers(), costs, rows, pooled, startup, costs_key,
                    startup_how, spent_s + time.perf_counter() - t0, sel_done + game_done)


def line(est: Estimate) -> str:
    """The one line printed before anything trains."""
    d = cb_duration
    parts = []
    if est.spent_s >= 1:
        parts.append(f"{d(est.spent_s)} spent measuring and loading")
    said = startup_words(est.startup_s, est.startup_how)
    if said:
        parts.append(said)
    if est.done:  # a resume: the models the folder holds are not counted again
        parts.insert(0, f"{est.done:,} models already stored")
    if est.selection_models:
        parts.append(f"target selection {est.selection_models:,} models "
                     f"{d(est.selection_s)}")
    elif est.candidates:  # its pool is stored: the candidates are scored on it again
        parts.append(f"target selection: scoring {est.candidates:,} candidates on its stored "
                     f"models {d(est.selection_s)}")
    parts.append(f"game {est.game_models:,} models {d(est.game_s)}")
    parts.append(f"analysis {d(est.analysis_s)}")
    ge = ">= " if est.iterations_how == "lower bound" else ""
    how = (f"{est.iterations:,} iterations per model ({est.iterations_how}), {est.rate:,.0f} "
           f"model-iterations/s per worker" if est.iterations else "no training iterations")
    text = (f"estimate: about {ge}{d(est.total_s)} "
            f"{'left after resuming' if est.done else 'in all'} ({', '.join(parts)}) on "
            f"{est.workers} worker(s); {how} ({est.rate_how})")
    if est.total_s > LONG_S:  # named as the interface that runs it names them
        say = current()
        flags = [f"fewer shadow models ({say.models})"]
        if est.selection_models:
            flags.append(f"a smaller target selection ({say.setting('selection_models')}, "
                         f"or {say.setting('target')} ROW to skip it)")
        flags += [f"fewer iterations ({say.setting('max_iter')})",
                  f"more workers ({say.setting('workers')}, or a cluster via RAY_ADDRESS)"]
        text += "; over 15 min: to shrink it use " + ", ".join(flags)
    return text


def startup_words(seconds: float, how: str) -> str:
    """The start-up as every estimate line says it (:func:`raudit.runs.costs.startup_guess`'s
    seconds and how), or "" where there is none to speak of (in process, under 1 s)."""
    if how == "typical":
        return f"start-up {cb_duration(seconds)} (typical: not measured here yet)"
    return f"start-up {cb_duration(seconds)}" if seconds >= 1 else ""


def cb_duration(s: float) -> str:
    from raudit.audit.guard import duration

    return "< 1 s" if s < 0.5 else duration(s)
