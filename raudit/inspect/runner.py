"""Run one inspection: an instrumented training, the probes, then every check.

``inspect_generator(spec, dataset)`` trains the generator once with an
:class:`~raudit.events.EventLog` attached (the model ``raudit train --seed S``
trains), samples it, runs the black-box probes (an accountant probe at a larger
lambda and a bounds probe with one extreme record), builds a
:class:`~raudit.inspect.context.Context`, and applies every check of :data:`CHECKS`.
Nothing depends on which generator it is: a plugin ``module:Class`` is inspected the
same way, and one that emits no events gets ``not_checked`` event cells.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from raudit import generators
from raudit.errors import RauditError
from raudit.events import EventLog
from raudit.inspect import accountant, metadata, noise, partition, processing
from raudit.inspect.cells import CATEGORIES, Cell
from raudit.inspect.context import Context, Probe
from raudit.inspect.trace import trace_of
from raudit.privacy import PrivacySpec, ResolvedPrivacy
from raudit.registry import Registry
from raudit.results.convert import number_or_none
from raudit.seeds import FIT, INSPECT, SAMPLE, derive_seed, train_seeds

__all__ = ["CHECKS", "InspectSpec", "check_trainable", "inspect_generator", "run_checks",
           "skipped_run", "trainable"]

#: probes of the INSPECT seed stream (never renumber)
RUN, ACCOUNTANT_PROBE, BOUNDS_PROBE, PARTITION_PROBE = 0, 1, 2, 3

CHECKS: Registry[Callable[[Context], Cell]] = Registry("inspect check")
for _cat, _fn in (
    ("pate", partition.check_pate),
    ("data_partition", partition.check_partition),
    ("moments_accountant", accountant.check_accountant),
    ("metadata", metadata.check_metadata),
    ("laplace_noise", noise.check_laplace),
    ("delta_scale", noise.check_delta_scale),
    ("labels_distribution", metadata.check_labels),
    ("teachers", partition.check_teachers),
    ("processing", processing.check_processing),
    ("student_real_records", partition.check_student),
    ("uncharged_queries", accountant.check_uncharged),
    ("overshoot", accountant.check_overshoot),
):
    CHECKS.register(_cat, _fn)


@dataclass(frozen=True)
class InspectSpec:
    """One inspection. ``options``: generator keyword arguments (already validated);
    the study's settings (k, lambda) apply where the generator accepts them."""

    impl: str
    epsilon: float = 1.0
    delta: float | None = None
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    samples: int = 2
    probe_lam: float = 1.0
    probe_iterations: int = 3
    probe_epsilon: float = 1e6
    bounds_probe_iterations: int = 30


def _accepted(cls, kwargs: dict) -> dict:
    caps = cls.describe()
    return {k: v for k, v in kwargs.items() if caps.accepts(k)}


def _fit(cls, kwargs, table, *, epsilon, delta, seed, columns, observer=None):
    gen = cls(**kwargs)
    return gen.fit_many([table], epsilon=epsilon, delta=delta, seeds=[seed], columns=columns,
                        observer=observer)[0]


def _accountant_probe(cls, spec: InspectSpec, ds, delta: float) -> tuple[Any, str]:
    caps = cls.describe()
    if not (caps.accepts("lam") and caps.accepts("max_iter")):
        return None, "the generator takes no lam/max_iter options"
    kwargs = {**spec.options, "lam": spec.probe_lam, "max_iter": spec.probe_iterations}
    log = EventLog()
    try:
        _fit(cls, kwargs, ds.train, epsilon=spec.probe_epsilon, delta=delta, columns=ds.columns,
             seed=derive_seed(spec.seed, INSPECT, ACCOUNTANT_PROBE, FIT), observer=log)
    except RauditError as exc:
        return None, f"probe failed: {exc}"
    return trace_of(log), ""


def _bounds_probe(cls, spec: InspectSpec, ds, delta: float) -> Probe:
    table, meta, probed = metadata.bounds_probe_table(ds.train, ds.columns)
    kwargs = dict(spec.options)
    if cls.describe().accepts("max_iter") and cls.describe().options is not None:
        # the bounds come from the encoder, not from training: a short run shows them
        cap = kwargs.get("max_iter")
        kwargs["max_iter"] = min(cap, spec.bounds_probe_iterations) if cap else spec.bounds_probe_iterations
    try:
        model = _fit(cls, kwargs, table, epsilon=spec.epsilon, delta=delta, columns=meta,
                     seed=derive_seed(spec.seed, INSPECT, BOUNDS_PROBE, FIT))
        synth = model.sample(len(table), seed=derive_seed(spec.seed, INSPECT, BOUNDS_PROBE, SAMPLE))
    except RauditError as exc:
        return Probe(table, skipped=f"probe failed: {exc}", info={"probed": probed})
    return Probe(table, [synth], {"probed": probed, "max_iter": kwargs.get("max_iter")})


def _partition_probe(cls, spec: InspectSpec, ds, delta: float, trace, fit_seed: int) -> Probe:
    """The run again with the same seed and teacher 0's rows permuted column-wise, stopped
    after its first aggregation (all the check compares): its teachers' first inputs."""
    teacher = trace.teacher_ids[0]
    rows = trace.teachers_seen[teacher]
    table = partition.permuted_partition(
        ds.train, rows, np.random.default_rng(derive_seed(spec.seed, INSPECT, PARTITION_PROBE)))
    kwargs = dict(spec.options)
    if cls.describe().accepts("max_iter"):
        kwargs["max_iter"] = 1
    log = EventLog()
    info = {"teacher": teacher, "rows": int(rows.size)}
    try:
        _fit(cls, kwargs, table, epsilon=spec.epsilon, delta=delta, seed=fit_seed,
             columns=ds.columns, observer=log)
    except RauditError as exc:
        return Probe(table, skipped=f"probe failed: {exc}", info=info)
    got = trace_of(log).contributions
    if got is None or got.shape != trace.contributions.shape:
        return Probe(table, skipped="the probe's run reported no comparable teacher inputs",
                     info=info)
    return Probe(table, info={**info, "contributions": got})


def run_checks(ctx: Context, names: list[str] | None = None) -> list[Cell]:
    """Every registered check (or ``names``) applied to ``ctx``, in the table's order."""
    wanted = names or [c for c in CATEGORIES if c in CHECKS]
    return [CHECKS.get(n)(ctx) for n in wanted]


def _hp(summary: dict) -> dict:
    hp = summary.get("hyperparameters") or {}
    return hp if isinstance(hp, dict) else {}


def trainable(spec: InspectSpec, ds) -> tuple[str, ResolvedPrivacy | None]:
    """('', the run's privacy, resolved here once) if ``spec.impl`` can train on ``ds``
    with these settings, else (the reason, None): the generator's own check, no training."""
    cls = generators.get(spec.impl)
    try:
        gen = cls(**spec.options)
        privacy = PrivacySpec(spec.epsilon, spec.delta).resolve(gen, len(ds.train))
        gen.check(ds.train, epsilon=spec.epsilon, delta=privacy.delta, columns=ds.columns)
    except RauditError as exc:
        return str(exc), None
    return "", privacy


def check_trainable(spec: InspectSpec, ds) -> str:
    """'' if ``spec.impl`` can train on ``ds`` with these settings, else the reason."""
    return trainable(spec, ds)[0]


def skipped_run(spec: InspectSpec, ds, reason: str) -> dict[str, Any]:
    """The record of a generator that cannot train on ``ds``: every cell not checked."""
    why = f"cannot train on {ds.name}: {reason}"
    return {"impl": spec.impl, "dataset": ds.name,
            "settings": {"epsilon": spec.epsilon, "delta": spec.delta, "seed": spec.seed,
                         "options": spec.options},
            "iterations": 0, "final_eps_hat": None, "eps_hat": [], "teachers_seen": {},
            "events": 0, "skipped": why, "wall_s": 0.0,
            "violations": [Cell(c, "not_checked", why).as_dict() for c in CATEGORIES]}


def inspect_generator(spec: InspectSpec, ds, *, probes: bool = True,
                      privacy: ResolvedPrivacy | None = None) -> dict[str, Any]:
    """The inspection of ``spec.impl`` on dataset ``ds``: one run's JSON record.
    ``privacy``: as :func:`trainable` resolved it (resolved here when not given)."""
    t0 = time.perf_counter()
    cls = generators.get(spec.impl)
    if privacy is None:
        privacy = PrivacySpec(spec.epsilon, spec.delta).resolve(cls(**spec.options), len(ds.train))
    fit_seed, sample_seed = train_seeds(spec.seed)
    log = EventLog()
    model = _fit(cls, spec.options, ds.train, epsilon=spec.epsilon, delta=privacy.delta,
                 seed=fit_seed, columns=ds.columns, observer=log)
    seeds = [sample_seed] + [derive_seed(spec.seed, INSPECT, RUN, SAMPLE, i)
                             for i in range(1, spec.samples)]
    synthetic = [model.sample(len(ds.train), seed=s) for s in seeds]
    trace = trace_of(log) if log.events else None
    summary = model.summary()
    hp = _hp(summary)
    lam = hp.get("lam", spec.options.get("lam"))
    ctx = Context(impl=spec.impl, epsilon=spec.epsilon, delta=float(privacy.delta),
                  train=ds.train, synthetic=synthetic, trace=trace,
                  k=hp.get("teachers", spec.options.get("teachers")),
                  lam=None if lam is None else float(lam),
                  public_bounds=(sum(c.bounds == "public" for c in ds.columns), len(ds.columns)),
                  output_bounds=summary.get("output_bounds"))
    if probes and trace is not None and trace.accountant:
        ctx.accountant_probe, ctx.probe_skipped = _accountant_probe(cls, spec, ds, ctx.delta)
        ctx.probe_lam, ctx.probe_delta = spec.probe_lam, ctx.delta
    if probes:
        ctx.bounds_probe = _bounds_probe(cls, spec, ds, privacy.delta)
    if probes and trace is not None and trace.contributions is not None and trace.teacher_ids:
        ctx.partition_probe = _partition_probe(cls, spec, ds, privacy.delta, trace, fit_seed)
    cells = run_checks(ctx)
    its, eps = trace.eps_series() if trace is not None else (np.zeros(0), np.zeros(0))
    return {
        "impl": spec.impl, "dataset": ds.name,
        "settings": {"epsilon": spec.epsilon, "delta": privacy.delta, "delta_rule": privacy.delta_rule,
                     "seed": spec.seed, "fit_seed": fit_seed, "options": spec.options,
                     "lambda": ctx.lam, "teachers": ctx.k, "probe_lambda": spec.probe_lam,
                     "probe_iterations": spec.probe_iterations},
        "iterations": int(summary.get("iterations", trace.iterations if trace else 0) or 0),
        "final_eps_hat": number_or_none(summary.get("eps_hat")),
        "eps_hat": [number_or_none(e) for e in eps],
        "teachers_seen": ({str(t): rows.tolist() for t, rows in trace.teachers_seen.items()}
                          if trace is not None else {}),
        "events": trace.events if trace is not None else 0,
        "violations": [c.as_dict() for c in cells],
        "wall_s": round(time.perf_counter() - t0, 2),
        "_context": ctx,  # for the plots; dropped before JSON
    }
