"""What an audit's parts cost on this machine, measured in CPU seconds and cached.

The estimate said before an audit trains (:mod:`raudit.runs.estimate`) is a sum of
measured parts, never a constant fitted once:

* a shadow model: ``model_s + iterations x iter_s``. Both come from two fits of the same
  ``m`` models capped at ``LOW`` and ``HIGH`` iterations (per-model work such as the
  encoding and the DP bounds is ``model_s``; a rate from a few capped iterations alone
  mistakes it for iteration cost), plus sampling the synthetic rows;
* the attack's features per synthetic table, with one context (the game) and with the
  selection's candidate contexts (a pool chunk computes every candidate's features);
* the attack forest (fit on n rows, score as many): ``forest_s0 + n x forest_s1`` from
  two sizes. Target selection fits one per candidate; the analysis fits one on the
  game's train split and then computes the bounds (``bounds_s``, measured on as many
  scores as the game's test split has, scaled by size).

Costs are per CPU-second of one process (as the chunk rates of :mod:`.chunk_cache`), so
a loaded machine skews them less than wall time would, and cached per set-up, attack,
chunk size and machine beside those rates: a set-up is measured once (a few seconds),
and again when the entry was measured on a much busier machine than now (:func:`cached`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from raudit.runs.chunk_cache import Fit

T = TypeVar("T")

LOW, HIGH = 2, 20  # the two iteration caps of the training measurement (calibrate.LOW and
# CAL_ITERS, written here so that this module, imported by light ones, stays free of torch)
FIRST_M = 8  # models per measuring fit first; then up to MEASURE_M when that stays cheap
MEASURE_M = 32  # a chunk's rate saturates near it on a CPU core
BUDGET_S = 3.0  # the measurement at MEASURE_M is made only when it would take less
FOREST_ROWS = (64, 512)
BOUNDS_ROWS = 1000


@dataclass(frozen=True)
class Costs:
    """CPU seconds of an audit's parts on this machine (see the module)."""

    m: int  # the chunk size training was measured at
    model_s: float  # per model besides its iterations: set-up, sampling the synthetic rows
    iter_s: float  # per model-iteration at chunk size m
    iterations: int | None  # per model in the HIGH-capped fit, when it stopped before HIGH
    extract_s: float  # features of one synthetic table, one context
    extract_many_s: float  # features of one synthetic table, every selection candidate
    forest_s0: float  # attack forest fit and score: s0 + rows x s1
    forest_s1: float
    bounds_s: float  # the bounds of BOUNDS_ROWS test scores

    def forest_s(self, rows: int) -> float:
        return self.forest_s0 + rows * self.forest_s1


def key(fit: Fit, attack: str, features: str, candidates: int, m: int, device: str) -> str:
    from raudit.runs import chunk_cache

    # "costs/2": entries measured before the attack forests were built directly (11x
    # cheaper, raudit/attacks/forest.py) would overstate selection: they are not read
    return json.dumps(["costs/2", chunk_cache.key(fit, device), attack, features, candidates, m])


def cached(k: str) -> Costs | None:
    """The cached costs of key ``k``, or None: absent, of an older layout, or measured on a
    machine much busier than it is now (CPU time per step grows when cores are shared, so
    such an entry would overstate a quiet machine's run: it is measured again)."""
    from raudit.runs import chunk_cache

    got = dict(chunk_cache.lookup_value(k) or {})
    then, now = got.pop("load", None), chunk_cache.load_average()
    if then is not None and now is not None and then > busy_load(now):
        return None
    try:
        return Costs(**got) if got else None
    except TypeError:  # an entry of an older layout: measured again
        return None


def busy_load(now: float) -> float:
    """Above this 1-minute load a measurement is from a busier machine than one at ``now``:
    twice today's load, and at least one task per core."""
    import os

    return max(2.0 * now, float(os.cpu_count() or 1))


def costs_of(game: Any, ds: Any, candidates: list[Any], m: int, device: str = "cpu"
             ) -> tuple[Costs, str, str]:
    """The cached costs of ``game`` on ``ds`` at chunk size ``m`` ("cached"), else measured
    in this process and cached ("measured now"), and their cache key (for :func:`observe`)."""
    from raudit.runs import chunk_cache
    from raudit.runs.calibrate import game_fit

    mm = max(1, min(int(m), MEASURE_M))
    k = key(game_fit(game), game.attack, game.features, len(candidates), mm, device)
    got = cached(k)
    if got is not None:
        return got, "cached", k
    got = measure(game, ds, candidates, min(mm, FIRST_M))
    # the rate grows with the chunk size: measured again at the run's own M when cheap
    if mm > got.m and (got.model_s + HIGH * got.iter_s) * mm < BUDGET_S:
        got = measure(game, ds, candidates, mm)
    chunk_cache.store_value(k, {**asdict(got), "load": chunk_cache.load_average()})
    return got, "measured now", k


# The run's training CPU per model this many times above or below what the costs predicted
# makes them stale. Tighter than the chunk rates' 2x (raudit.runs.chunk_size): the costs
# measure the run's own decomposition (per model + iterations at its M), and measuring
# them again takes a few seconds. What it catches: costs measured by older, slower code or
# on a slower host (the advertised audit's estimate said 352 model-iterations/s per worker
# while its run trained at ~630: "about 2 min" for 90 s).
STALE_FACTOR = 1.3


def stale(predicted_s: float, observed_s: float) -> bool:
    """Whether a run's observed training CPU seconds per model contradict the predicted."""
    if predicted_s <= 0 or observed_s <= 0:
        return False
    return not 1 / STALE_FACTOR <= observed_s / predicted_s <= STALE_FACTOR


def trained_rows(shadow: Any, m: int) -> Any:
    """A run's ok shadow rows (a DataFrame) trained in chunks of ``m`` that recorded their
    training CPU time (``train_cpu_s``): what :func:`observe` and the chunk rates'
    :func:`raudit.runs.chunk_size.observe_rows` compare with their cached figures; None
    when the rows hold none (no rows, or written before the column existed)."""
    if shadow is None or shadow.empty or "train_cpu_s" not in shadow:
        return None
    return shadow[(shadow["status"] == "ok") & (shadow["chunk_models"] == m)
                  & shadow["train_cpu_s"].notna()]


def observe(est: Any, k: str | None, m: int, shadow: Any,
            notice: Callable[[str], None] = lambda msg: None) -> bool:
    """After an audit: compare the training CPU of its ok models trained in chunks of ``m``
    (the shadow rows' ``train_cpu_s``, per model) with what the estimate ``est`` predicted
    for their iterations; drop the cached costs ``k`` the run contradicts (the next
    estimate measures again). True when dropped."""
    from raudit.runs import chunk_cache

    if k is None or est is None or est.costs is None:
        return False
    ok = trained_rows(shadow, m)
    if ok is None or ok.empty:
        return False
    # model_s also holds sampling, which train_cpu_s does not: a small overstatement
    predicted = est.costs.model_s + float(ok["iterations"].mean()) / est.rate
    observed = float(ok["train_cpu_s"].mean())
    if not stale(predicted, observed):
        return False
    chunk_cache.drop(k)
    notice(f"the estimate's cached costs ({predicted:.3g} CPU-s of training per model) were "
           f"off this run's ({observed:.3g}); dropped, the next estimate measures again")
    return True


def startup_key(engine: Any) -> str:
    from raudit.runs import chunk_cache

    return json.dumps(["startup", engine.backend, engine.planned_workers(),
                       chunk_cache.machine()])


def startup_s(engine: Any) -> float | None:
    """Seconds from a run's start to its first chunk's work, as the last run on this
    machine with the same backend and workers measured it (None: never measured). The
    estimates count :func:`startup_guess`, which never leaves it out."""
    from raudit.engine.driver import BACKENDS
    from raudit.runs import chunk_cache

    if BACKENDS.get(engine.backend).in_process:
        return 0.0  # nothing to start
    got = chunk_cache.lookup_value(startup_key(engine))
    if not got or "startup_s" not in got:
        return None
    now = chunk_cache.load_average()
    if got.get("load") is not None and now is not None and got["load"] > busy_load(now):
        return None  # a busier machine's start-up: measured again by the next run
    return float(got["startup_s"])


# The start-up said before a machine has measured its own (a fresh cache): Ray's init
# (4-6 s, engine/prestart.py, overlapping the calibration that a fresh cache runs first) and
# the actors' imports of torch and raudit and their dataset's parse after it; the first
# run with Ray measured 10.9 s with 2 workers on the 2-core Xeon at load 10 (2026-11-29).
# Counting nothing instead left the first line of a fresh clone's audit short by this much.
COLD_STARTUP_S = 8.0


def startup_guess(engine: Any) -> tuple[float, str]:
    """(seconds, how) of the start-up an estimate counts, once per command: :func:`startup_s`
    ("measured"), or :data:`COLD_STARTUP_S` ("typical") where this machine has not measured
    it yet. The one start-up model of every estimate line: audit, utility and campaign (the
    latter two counted nothing and said "+ start-up" on a fresh cache)."""
    got = startup_s(engine)
    return (got, "measured") if got is not None else (COLD_STARTUP_S, "typical")


def observe_startup(engine: Any, seconds: float) -> None:
    """Keep a run's measured start-up (Ray and its actors) for the next estimate."""
    from raudit.runs import chunk_cache

    chunk_cache.store_value(startup_key(engine), {"startup_s": round(float(seconds), 2),
                                                  "load": chunk_cache.load_average()})


def _cpu(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and the CPU seconds it took, its child processes' included (exec:)."""
    from raudit.generators.plugin_process import cpu_seconds

    c0 = cpu_seconds()
    out = fn()
    return out, cpu_seconds() - c0


def measure(game: Any, ds: Any, candidates: list[Any], m: int) -> Costs:
    """Measure :class:`Costs` of ``game`` (its generator, attack and dataset) at chunk size
    ``m``, in this process. ``candidates``: the selection's rows ([] without one)."""
    from raudit.runs.calibrate import one_thread

    with one_thread():  # as the actors run (one core each)
        return _measure(game, ds, candidates, m)


def _forest(X: Any, y: Any) -> Any:
    """The attack forest fitted on ``X`` and its scores on the same rows."""
    from raudit.attacks import fit_attack, score

    return score(fit_attack(X, y, 0), X)


def _measure(game: Any, ds: Any, candidates: list[Any], m: int) -> Costs:
    from raudit.attacks import extract_many
    from raudit.audit import chunk
    from raudit.audit.analyse import bounds
    from raudit.audit.game import sample_size
    from raudit.runs.calibrate import split_cpu, warm_compiled

    gs = game.spec()
    gen = chunk.build_generator(gs, "cpu")
    capped = "max_iter" in type(gen).describe().option_names()
    wanted = gs["options"].get("max_iter")
    if capped:  # else the LOW fit would pay the step's compile
        def capped_at(it: int) -> Any:
            return chunk.build_generator({**gs, "options": {**gs["options"], "max_iter": it}}, "cpu")
        warm_compiled(capped_at, ds, m, gs["epsilon"], gs["delta"])
    runs = []
    for cap in ((LOW, HIGH) if capped else (None,)):
        opts = dict(gs["options"])
        if cap is not None:
            opts["max_iter"] = min(int(wanted), cap) if wanted else cap
        g = chunk.build_generator({**gs, "options": opts}, "cpu")
        models, cpu = _cpu(partial(g.fit_many, [ds.train] * m, epsilon=gs["epsilon"],
                                   delta=gs["delta"], seeds=list(range(m)), columns=ds.columns))
        its = [int(md.summary().get("iterations", 0) or 0) for md in models]
        runs.append((models, cpu, sum(its), max(its), opts.get("max_iter")))
    models, _, _, top, cap_hi = runs[-1]
    iter_s, fit_model_s = split_cpu([(cpu, its) for _, cpu, its, _, _ in runs], m)
    n = sample_size(gs, ds.train)
    synths, sample_cpu = _cpu(lambda: chunk.sample_models(models, n, list(range(m))))
    stopped = top if cap_hi is None or top < cap_hi else None

    def contexts(rows: list[Any]) -> list[Any]:
        return [chunk.attack_context(ds.train, {**gs, "target": r}, ds.test) for r in rows]
    tables = synths[: min(len(synths), 4)]
    first = candidates[:1] or [game.target]
    X, one_cpu = _cpu(lambda: extract_many(gs["features"], tables, contexts(first)))
    _, many_cpu = _cpu(lambda: extract_many(gs["features"], tables, contexts(candidates)))
    d = np.asarray(X[0]).shape[-1]
    rng = np.random.default_rng(0)
    forest = []
    for rows in FOREST_ROWS:
        Xr, y = rng.normal(size=(rows, d)), np.arange(rows) % 2
        forest.append(_cpu(partial(_forest, Xr, y))[1])
    s1 = max(0.0, (forest[1] - forest[0]) / (FOREST_ROWS[1] - FOREST_ROWS[0]))
    s0 = max(0.0, forest[0] - FOREST_ROWS[0] * s1)
    half = BOUNDS_ROWS // 2
    val = (rng.random(half), np.arange(half) % 2)
    test = (rng.random(BOUNDS_ROWS), np.arange(BOUNDS_ROWS) % 2)
    _, bounds_cpu = _cpu(lambda: bounds(val, test, delta=gs["delta"] or 0.0, alpha=0.1))
    return Costs(m, fit_model_s + sample_cpu / m, iter_s, stopped, one_cpu / len(tables),
                 many_cpu / len(tables) if candidates else 0.0, s0, s1, bounds_cpu)
