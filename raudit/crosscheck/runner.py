"""`raudit crosscheck`: a port against the released code, on the same data and settings.

:func:`crosscheck` checks everything before any work (the dataset, the released
side's exec config), then fits N models per side, scores utility, times both sides and
runs the named checks of :mod:`raudit.crosscheck.checks`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from raudit.errors import ConfigError
from raudit.privacy import STUDY_DELTA
from raudit.seeds import CROSSCHECK, derive_seed


@dataclass(frozen=True)
class Pairing:
    """A port and the released package it reproduces, with the settings both sides take."""

    port: str
    upstream: str
    lam: float
    orders: int
    batch: int


PAIRINGS = {"smartnoise": Pairing("smartnoise", "smartnoise", lam=1e-3, orders=100, batch=64)}


def resolve_config(impl: str, config: str | None, directory: str | None) -> str:
    """The released side's exec config: given, or the one `raudit upstream setup` wrote."""
    from raudit.generators.exec_adapter import read_config
    from raudit.upstream import catalog, envs

    if config is None:
        config = str(envs.config_path(catalog.get(PAIRINGS[impl].upstream), directory))
    read_config(config)  # a missing interpreter is refused here, before any work
    return config


@contextlib.contextmanager
def _quiet(description: str, total: int):
    yield lambda n: None


@dataclass(frozen=True)
class CrosscheckSpec:
    """The settings both sides of one crosscheck run take: N models from ``seed``, the
    privacy budget, the teachers, and how they are compared (classifiers, ``alpha``, the
    batch sizes the port's speed is timed at)."""

    models: int = 20
    seed: int = 0
    epsilon: float = 1.0
    delta: float = STUDY_DELTA
    teachers: int = 5
    classifiers: tuple[str, ...] = ("lr",)
    alpha: float = 0.05
    speed_sizes: tuple[int, ...] = (1, 8)


def crosscheck(impl: str, dataset: str, spec: CrosscheckSpec = CrosscheckSpec(), *,
               config: str | None = None, upstream_dir: str | None = None,
               phase: Callable = None) -> dict:
    """Run both sides and every check; returns the report (a JSON-able dict + the checks)."""
    models, seed, epsilon, delta = spec.models, spec.seed, spec.epsilon, spec.delta
    teachers, classifiers, alpha, speed_sizes = (spec.teachers, spec.classifiers, spec.alpha,
                                                 spec.speed_sizes)
    from raudit import generators
    from raudit.crosscheck import checks as ck
    from raudit.crosscheck import sides
    from raudit.data.registry import load
    from raudit.generators.exec_adapter import exec_class

    if impl not in PAIRINGS:
        raise ConfigError(f"crosscheck knows {', '.join(PAIRINGS)}; got {impl!r}")
    if models < 2:
        raise ConfigError(f"--seeds must be at least 2 (two-sample tests), got {models}")
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must lie in (0, 1), got {alpha}")
    if isinstance(teachers, bool) or not isinstance(teachers, int) or teachers < 1:
        raise ConfigError(f"--teachers must be an integer >= 1, got {teachers!r}")
    from raudit.generators.base import check_privacy
    check_privacy(epsilon, delta)
    pair = PAIRINGS[impl]
    import torch
    torch.set_num_threads(1)  # the released side runs one thread too (its exec config)
    ds = load(dataset)
    config = resolve_config(impl, config, upstream_dir)
    port_cls, released_cls = generators.get(pair.port), exec_class(config)
    for name in classifiers:
        from raudit import classifiers as clf
        clf.get(name)
    options = {"teachers": teachers, "batch": pair.batch}
    train, n = ds.train, models
    pairs = sides.seeds(seed, n)
    common = dict(epsilon=epsilon, delta=delta, seed_pairs=pairs, columns=ds.columns)
    phase = phase or _quiet  # no progress shown
    with phase(f"port: {n} models in one batched call", n) as tick:
        port = sides.run_port(port_cls, options, train, progress=tick, **common)
    with phase(f"released code: {n} models, one process per fit and sample", n) as tick:
        released = sides.run_released(released_cls, options, train, progress=tick, **common)
    # timed again without the observer (the events cost a little), at M = 1, 8 and N
    sizes = sorted({m for m in speed_sizes if m <= n} | {n})
    with phase("port speed at several batch sizes", len(sizes)) as tick:
        by_m = {}
        for m in sizes:
            by_m.update(sides.port_speed(port_cls, options, train, epsilon=epsilon, delta=delta,
                                         seed_pairs=pairs, sizes=[m]))
            tick(1)
    with phase("utility: classifiers on every synthetic table", 2 * n) as tick:
        aucs = {side: _aucs(runs, ds.test, classifiers, seed, tick)
                for side, runs in (("port", port), ("released", released))}
    results = [
        ck.stopping(port, released),
        ck.trajectory(port, released),
        ck.accountant(released, k=teachers, lam=pair.lam, orders=pair.orders, delta=delta),
        ck.schema(port, released, train),
        ck.statistics(port, released, alpha=alpha),
        ck.utility(aucs["port"], aucs["released"], alpha=alpha,
                   seed=derive_seed(seed, CROSSCHECK, 1_000_000)),
        ck.speed(port, released, by_m),
    ]
    settings = {"impl": impl, "dataset": dataset, "models": n, "seed": seed, "epsilon": epsilon,
                "delta": delta, "teachers": teachers, "lam": pair.lam, "orders": pair.orders,
                "batch": pair.batch, "classifiers": list(classifiers), "alpha": alpha,
                "config": config, "released": released_cls.description,
                "patched": released[0].patched, "train_rows": len(train)}
    per_model = [{"side": side, "model": i, "seed": r.seed, "iterations": r.iterations,
                  "eps_hat": r.eps_hat, "fit_s": r.fit_s, "sample_s": r.sample_s,
                  "train_s": r.inner_fit_s,
                  **{f"auroc_{c}": aucs[side][c][i] for c in classifiers}}
                 for side, runs in (("port", port), ("released", released))
                 for i, r in enumerate(runs)]
    return {"settings": settings, "checks": results, "models": per_model}


def _aucs(runs, test, classifiers, seed: int, tick) -> dict[str, list[float]]:
    from raudit.utility.chunk import score_setting

    out: dict[str, list[float]] = {c: [] for c in classifiers}
    for i, run in enumerate(runs):
        rows = score_setting(list(classifiers), run.synthetic, test,
                             lambda name, i=i: derive_seed(seed, CROSSCHECK, 2_000_000, i))
        for r in rows:
            if r["metric"] == "auroc":
                out[r["classifier"]].append(float(r["value"]))
        tick(1)
    return out
