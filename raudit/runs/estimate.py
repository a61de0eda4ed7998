"""How long a run will take, said before anything trains.

total = models x iterations per model / (model-iterations per second x workers), per
stage (target selection, the game), plus an allowance for the analysis.

* iterations per model: for the PATE family with a data-independent accountant
  (lam <= 1e-3: spec section 10) the closed form of
  :func:`raudit.accountants.closed_form.iterations_to_reach` from the generator's own
  resolved hyperparameters; else the run's ``max_iter`` / ``iterations``; else one quick
  calibration says it (models that stop by eps within its cap), else it is a lower bound.
* model-iterations per second: the chunk-rate cache of :mod:`raudit.runs.chunk_cache`
  (what ``-M auto`` measured on this machine), else measured now by
  :func:`raudit.runs.calibrate.fit_rate` at a small M (a few seconds, said so).

The driver refreshes the total after the first chunk (raudit.audit.guard.Estimator).
"""

from __future__ import annotations

from dataclasses import dataclass

from raudit import generators
from raudit.runs import calibrate as cb

LONG_S = 15 * 60  # above this the estimate names the flags that shrink the run
ANALYSIS_S_PER_MODEL = 0.002  # features + attack per shadow model (measured: ~1-3 ms)
ANALYSIS_FIXED_S = 5.0  # the attack's fit and the bounds, whatever the size
# Target selection scores every candidate with its own mini attack on the pool's models:
# 64 candidates x 10 pool models took ~15 s beyond training on the 2-core box (load ~8,
# smartnoise/groundhog on cervical, benchmarks/estimate.py), i.e. ~0.023 s per pair.
SELECTION_S_PER_CANDIDATE_MODEL = 0.023


@dataclass(frozen=True)
class Estimate:
    selection_models: int
    game_models: int
    candidates: int  # target candidates scored (0 without a target selection)
    iterations: int
    iterations_how: str  # "closed form" | "max_iter" | "calibration" | "lower bound"
    rate: float  # model-iterations per second per worker
    rate_how: str  # "cached" | "measured now"
    workers: int

    def seconds(self, models: int) -> float:
        return models * self.iterations / self.rate / self.workers

    @property
    def selection_s(self) -> float:
        """Training the pool and scoring every candidate on it."""
        return (self.seconds(self.selection_models)
                + SELECTION_S_PER_CANDIDATE_MODEL * self.candidates * self.selection_models)

    @property
    def analysis_s(self) -> float:
        return ANALYSIS_FIXED_S + ANALYSIS_S_PER_MODEL * (self.selection_models + self.game_models)

    @property
    def total_s(self) -> float:
        return self.selection_s + self.seconds(self.game_models) + self.analysis_s


def closed_form_iterations(impl: str, options: dict, n_rows: int, n_cols: int,
                           epsilon: float, delta: float) -> int | None:
    """The stopping iteration of a PATE-family generator whose accountant stays in the
    data-independent regime, or None where no closed form applies (other generators, a
    lam above 1e-3 where the data-dependent term can win)."""
    from raudit.accountants.closed_form import iterations_to_reach

    cls = generators.get(impl)
    try:
        hp = cls(**options).resolve(n_rows, n_cols)
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


def rate_at(rates: dict, m: int) -> float:
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


def _cached_rate(fit: tuple, engine, m: int) -> float | None:
    from raudit.runs import chunk_cache

    rates = chunk_cache.lookup(chunk_cache.key(fit, cb._slot_device(engine)))
    return rate_at(rates, m) if rates else None


def audit_estimate(req, engine, out=None) -> Estimate:
    """The estimate of ``raudit audit``'s request on ``engine`` (see the module). With
    ``out``, a folder holding another audit is refused first (ConfigError), as the run
    itself would, so nothing is measured for a run that will not start."""
    from raudit.audit.runner import prepare
    from raudit.results import ResultStore

    game, manifest, ds = prepare(req)
    if out is not None:
        ResultStore(out).check_manifest(manifest)
    return game_estimate(req, game, ds, engine)


def game_estimate(req, game, ds, engine) -> Estimate:
    """:func:`audit_estimate` of a request already prepared (``raudit.audit.runner.prepare``
    resolves its privacy once: run_audit passes its own game and dataset)."""
    fit = cb.game_fit(game)
    impl, opts, dataset, eps, delta, label, bounds = fit
    n_rows, n_cols = ds.train.shape
    iters, how = closed_form_iterations(impl, opts, n_rows, n_cols, eps, delta), "closed form"
    m = max(1, min(int(req.chunk_size), 2 * int(req.shadow_models)))
    rate, rate_how = _cached_rate(fit, engine, m), "cached"
    cal = None
    if rate is None or iters is None:
        cal = cb.fit_rate(impl, opts, dataset, eps, delta, min(m, 8), label, bounds,
                          cap=cb.CAL_ITERS)
        if rate is None:
            rate, rate_how = 1.0 / cal.s_per_model_iter, "measured now"
    if iters is None:
        explicit = opts.get("max_iter") or opts.get("iterations")
        if explicit:
            iters, how = int(explicit), "max_iter"
        else:
            iters = cal.iterations or cb.CAL_ITERS
            how = "lower bound" if cal.lower_bound else "calibration"
    if game.target != "auto":
        selection, candidates = 0, 0
    elif req.target_selection == "pool":
        selection, candidates = int(req.selection_models), int(req.target_candidates)
    else:  # per-candidate: its own pairs per candidate, each scored once
        selection, candidates = 2 * int(req.target_candidates) * int(req.target_pairs), 1
    return Estimate(selection, 2 * int(req.shadow_models), candidates, int(iters), how,
                    float(rate), rate_how, engine.planned_workers())


def line(est: Estimate) -> str:
    """The one line printed before anything trains."""
    d = cb_duration
    parts = []
    if est.selection_models:
        parts.append(f"target selection {est.selection_models:,} models "
                     f"{d(est.selection_s)}")
    parts.append(f"game {est.game_models:,} models {d(est.seconds(est.game_models))}")
    parts.append(f"analysis {d(est.analysis_s)}")
    ge = ">= " if est.iterations_how == "lower bound" else ""
    text = (f"estimate: about {ge}{d(est.total_s)} in all ({', '.join(parts)}) on "
            f"{est.workers} worker(s); {est.iterations:,} iterations per model "
            f"({est.iterations_how}), {est.rate:,.0f} model-iterations/s per worker "
            f"({est.rate_how})")
    if est.total_s > LONG_S:
        flags = ["fewer shadow models (-S)"]
        if est.selection_models:
            flags.append("a smaller target selection (--selection-models, or --target ROW "
                         "to skip it)")
        flags += ["fewer iterations (--max-iter)", "more workers (--workers, or a cluster "
                  "via RAY_ADDRESS)"]
        text += "; over 15 min: to shrink it use " + ", ".join(flags)
    return text


def cb_duration(s: float) -> str:
    from raudit.audit.guard import duration

    return duration(s)
