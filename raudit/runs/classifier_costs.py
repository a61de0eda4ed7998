"""What a utility job's classifiers cost on this machine, said before it runs.

A utility job scores every classifier on every synthetic table (Setting B: trained on the
table, tested on the real test set; C: an 80/20 split of it) and once on the real table
(A): 12 classifiers x fits x samples x settings, about three quarters of a study utility
job's time, which the estimate used to leave out.

Cost model, per classifier: CPU seconds of fitting and scoring on ``n`` training rows of
the dataset's own columns, ``t(n) = t2 x (n / n2) ^ p``, from two measured sizes ``n1`` and
``n2`` (rows drawn from the real training table, so the columns and their kinds are the
job's) with ``p = log(t2 / t1) / log(n2 / n1)`` held within [1, 2] (no classifier here is
cheaper than linear in its rows; kernel-free ones are at most quadratic). The sizes are
:data:`SMALL_ROWS`, or :data:`LARGE_ROWS` on a table of at least ``LARGE_ROWS[1]`` rows
(:func:`probe_sizes`): from 100 and 400 rows a fixed cost read as a steep law (mlp's and
xgboost's p 1.5-1.6) and trees' n log n as linear, and epileptic's 12 classifiers at 9,200
rows were predicted at 401 CPU-s where a run measured 78 (400 and 1,600 rows: 76).
Measured on one thread, as the chunks score, in a few seconds, and cached per
dataset shape, classifiers and machine beside the chunk rates (:mod:`.chunk_cache`).
Every synthetic table is counted as two-class: one with a single class is scored without
fitting, so for a generator that emits them the count is an upper bound.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

SMALL_ROWS = (100, 400)  # training rows of the two timed fits per classifier
LARGE_ROWS = (400, 1600)  # the same on a table that has LARGE_ROWS[1] rows or more
LOW_P, HIGH_P = 1.0, 2.0  # the exponent's range (see the module)


def key(dataset: str, shape: tuple[int, int], names: Sequence[str]) -> str:
    from raudit.runs import chunk_cache

    return json.dumps(["classifiers/2", str(dataset), list(shape), list(names),
                       chunk_cache.machine()])


def measure(train: Any, names: Sequence[str]) -> dict[str, list[float]]:
    """{classifier: [CPU-s at n1, CPU-s at n2]} of fitting on n rows of ``train`` (a table,
    label last, drawn with a fixed seed, repeated where it has fewer rows) and scoring as
    many rows, one thread, as :func:`raudit.utility.chunk.score_setting` runs them; n in
    :func:`probe_sizes` of the table's rows."""
    import numpy as np
    from sklearn.preprocessing import MinMaxScaler
    from threadpoolctl import threadpool_limits

    from raudit import classifiers as clf
    from raudit.utility.chunk import xy

    rng = np.random.default_rng(0)
    out: dict[str, list[float]] = {name: [] for name in names}
    x, y = xy(train.iloc[rng.choice(len(train), size=20)])
    for name in names:  # untimed: a first fit pays the imports (lr read 0.1 s at 100 rows,
        with threadpool_limits(limits=1):  # 0.04 at 400)
            clf.get(name).fit_score(x, y, x, seed=0)
    for n in probe_sizes(len(train)):
        rows = rng.choice(len(train), size=n, replace=n > len(train))
        x, y = xy(train.iloc[rows])
        x = MinMaxScaler().fit_transform(x)
        for name in names:
            c0 = time.process_time()
            with threadpool_limits(limits=1):
                clf.get(name).fit_score(x, y, x, seed=0)
            out[name].append(max(time.process_time() - c0, 1e-4))
    return out


def probe_sizes(n_train: int) -> tuple[int, int]:
    """The two sizes a table of ``n_train`` rows is measured at (see the module)."""
    return LARGE_ROWS if n_train >= LARGE_ROWS[1] else SMALL_ROWS


def seconds(measured: list[float], n: int, rows: tuple[int, int] = SMALL_ROWS) -> float:
    """CPU seconds of one classifier fitted on ``n`` rows, from its two times measured at
    ``rows``."""
    (n1, n2), (t1, t2) = rows, measured
    p = min(HIGH_P, max(LOW_P, math.log(t2 / t1) / math.log(n2 / n1)))
    return float(t2 * (max(n, 1) / n2) ** p)


def costs(dataset: str, train: Any, names: Sequence[str],
          notice: Callable[[str], None] = lambda m: None) -> tuple[dict[str, list[float]], bool]:
    """The measured times of ``names`` on ``train`` (:func:`measure`) and whether they were
    measured now (else read from the cache; again when cached on a busier machine);
    ``notice`` says a measurement before it starts."""
    from raudit.runs import chunk_cache
    from raudit.runs.costs import busy_load

    k = key(dataset, tuple(train.shape), names)
    got = chunk_cache.lookup_value(k)
    now = chunk_cache.load_average()
    busier = (got is not None and got.get("load") is not None and now is not None
              and got["load"] > busy_load(now))
    if got and got.get("times") and not busier:
        return {n: list(v) for n, v in got["times"].items()}, False
    from raudit.runs.slow_notice import said_if_slow

    with said_if_slow(notice, f"measuring {len(names)} classifier(s) on {dataset} for the "
                      f"estimate ({' and '.join(map(str, probe_sizes(len(train))))} rows)..."):
        times = measure(train, names)
    chunk_cache.store_value(k, {"times": times, "load": now})
    return times, True


def utility_seconds(times: dict[str, list[float]], n_train: int, settings: Sequence[str],
                    tables: int) -> float:
    """CPU seconds of a utility job's classifiers: Setting A once on the real ``n_train``
    rows, and per synthetic table (``tables`` = runnable points x fits x samples, each table
    as many rows as the real one) B on all its rows and C on 80 % of them; ``times``
    measured on the real table (at :func:`probe_sizes` of ``n_train``)."""
    rows = probe_sizes(n_train)
    one = {s: sum(seconds(t, n, rows) for t in times.values())
           for s, n in (("A", n_train), ("B", n_train), ("C", int(0.8 * n_train)))}
    synthetic = sum(one[s] for s in ("B", "C") if s in settings)
    return (one["A"] if "A" in settings else 0.0) + tables * synthetic
