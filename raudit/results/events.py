"""The event sink: a training run's events as one Parquet table (``raudit train --events``).

:class:`EventSink` is an observer (:mod:`raudit.events`); attach it to
``fit``/``fit_many`` and call :meth:`EventSink.write`. One row per event and model
(a batched call's events carry M models), so pandas answers questions directly::

    ev = pd.read_parquet("runs/t1/events.parquet")
    ev[ev.kind == "votes"].groupby("iteration").n1.apply(lambda s: s.explode().mean())

Columns (:data:`EVENT_SCHEMA`, version :data:`EVENT_SCHEMA_VERSION`; the evolution
rule of :mod:`raudit.results.schema`: add columns, never repurpose one):
``model`` (index in the call), ``model_seed``, ``iteration``, ``kind``
(``teacher_batch``, ``votes``, ``accountant_step``, ``label_noise``, ``gradient_votes``, or the class
name of another event), ``active``, then the payload of each kind, null elsewhere:
``teacher``, ``rows`` and ``reach`` (teacher_batch: every teacher whose votes the rows move,
``teacher`` included; more than one where teachers share state, as G-PATE's shared_teacher_state); ``k``, ``noise_scale``, ``charged``,
``n1``, ``noise`` (flattened; argmax votes hold two noises per query, class 0 then
class 1), ``labels``, ``aggregation`` and ``noise_kind`` (votes); ``eps_hat`` and ``moments`` (accountant_step);
``sigma`` and ``noise`` (label_noise); ``losses`` (teacher_loss: the k x k matrix,
row-major, teacher j on teacher i's first rows); gradient_votes (G-PATE) fills the votes columns
per record and projected coordinate: ``n1`` the flattened (B, q, bins) histograms, ``noise`` the
threshold noise, ``labels`` the released bin (-1: not answered), ``sigma`` sigma1, ``noise_scale``
sigma2, ``k``, ``charged``. Off by default: audits train thousands of models and do
not record events.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from raudit.errors import ConfigError
from raudit.events import (AccountantStep, DpSgdStep, Event, GradientVotes, LabelNoise,
                           RealRowsRead, TeacherBatch, TeacherLoss, Votes)

__all__ = ["EVENT_SCHEMA", "EVENT_SCHEMA_VERSION", "EventSink", "read_events"]

EVENT_SCHEMA_VERSION = 2  # 2: reach (teacher_batch); files of version 1 read it as [teacher]
_I64, _F64 = pa.int64(), pa.float64()
EVENT_SCHEMA = pa.schema([
    ("schema_version", _I64), ("model", _I64), ("model_seed", _I64), ("iteration", _I64),
    ("kind", pa.string()), ("active", pa.bool_()),
    ("teacher", _I64), ("rows", pa.list_(_I64)),
    ("k", _I64), ("noise_scale", _F64), ("charged", pa.bool_()),
    ("n1", pa.list_(_I64)), ("noise", pa.list_(_F64)), ("labels", pa.list_(_F64)),
    ("eps_hat", _F64), ("moments", pa.list_(_F64)),
    ("sigma", _F64), ("aggregation", pa.string()), ("noise_kind", pa.string()),
    ("losses", pa.list_(_F64)),
    ("steps", _I64), ("noise_multiplier", _F64), ("clip", _F64), ("sampling_rate", _F64),
    ("reach", pa.list_(_I64)),
])
_KINDS = {TeacherBatch: "teacher_batch", Votes: "votes", AccountantStep: "accountant_step",
          LabelNoise: "label_noise", TeacherLoss: "teacher_loss", GradientVotes: "gradient_votes",
          DpSgdStep: "dp_sgd_step", RealRowsRead: "real_rows_read"}


class EventSink:
    """Collects events in memory (per-model rows) and writes them as one Parquet file."""

    def __init__(self, seeds: Sequence[int] | None = None):
        self.seeds = None if seeds is None else [int(s) for s in seeds]
        self._rows: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self._rows)

    def __call__(self, event: Event) -> None:
        kind = _KINDS.get(type(event), type(event).__name__)
        active = np.asarray(getattr(event, "active", np.ones(1, dtype=bool)), dtype=bool)
        if self.seeds is not None and len(self.seeds) != active.shape[0]:
            raise ConfigError(f"the sink was given {len(self.seeds)} seeds for events "
                              f"of {active.shape[0]} models")
        for m in range(active.shape[0]):
            row: dict[str, Any] = {"model": m, "iteration": int(getattr(event, "iteration", -1)),
                                   "kind": kind, "active": bool(active[m])}
            if self.seeds is not None:
                row["model_seed"] = self.seeds[m]
            row.update(_payload(event, m))
            self._rows.append(row)

    def table(self) -> pa.Table:
        cols = {f.name: [r.get(f.name) for r in self._rows] for f in EVENT_SCHEMA}
        cols["schema_version"] = [EVENT_SCHEMA_VERSION] * len(self._rows)
        return pa.table(cols, schema=EVENT_SCHEMA)

    def write(self, path: Path | str) -> Path:
        """Write every event so far to ``path`` (whole file, temp name then rename)."""
        from raudit.results.files import write_atomic
        path = Path(path)
        table = self.table()
        write_atomic(path, lambda fh: pq.write_table(table, fh))
        return path


def _list(a: Any, dtype: Any) -> list[Any]:
    out: list[Any] = np.asarray(a).astype(dtype).ravel().tolist()
    return out


def _payload(event: Event, m: int) -> dict[str, Any]:
    if isinstance(event, TeacherBatch):
        return {"teacher": int(event.teacher), "rows": _list(event.rows[m], np.int64),
                "reach": [int(t) for t in event.reached]}
    if isinstance(event, Votes):
        return {"k": int(event.k), "noise_scale": float(event.noise_scale),
                "charged": bool(event.charged[m]), "n1": _list(event.n1[m], np.int64),
                "noise": _list(event.drawn[m], np.float64),
                "labels": _list(event.labels[m], np.float64),
                "aggregation": event.aggregation, "noise_kind": event.noise_kind}
    if isinstance(event, AccountantStep):
        return {"eps_hat": float(event.eps_hat[m]), "moments": _list(event.moments[m], np.float64)}
    if isinstance(event, LabelNoise):
        noise = None if event.drawn is None else _list(event.drawn[m], np.float64)
        return {"sigma": float(event.sigma), "noise": noise}
    if isinstance(event, TeacherLoss):
        return {"losses": _list(event.losses[m], np.float64)}
    if isinstance(event, DpSgdStep):
        return {"steps": int(event.steps), "noise_multiplier": float(event.noise_multiplier),
                "clip": float(event.clip), "sampling_rate": float(event.sampling_rate)}
    if isinstance(event, GradientVotes):  # G-PATE: n1 holds the flattened (B, q, bins) histograms
        return {"k": int(event.k), "sigma": float(event.sigma1), "noise_scale": float(event.sigma2),
                "charged": bool(event.charged[m]), "n1": _list(event.counts[m], np.int64),
                "noise": _list(event.threshold_noise[m], np.float64),
                "labels": _list(event.choice[m], np.float64),
                "aggregation": "confident-gnmax", "noise_kind": "gaussian"}
    return {}


def read_events(path: Path | str) -> pd.DataFrame:
    """The events of a run as a DataFrame (list columns hold Python lists / arrays)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no event file at {path}; train with --events to record one")
    table = pq.read_table(path)
    version = int(_max(table["schema_version"])) if table.num_rows else EVENT_SCHEMA_VERSION
    if version > EVENT_SCHEMA_VERSION:
        raise ConfigError(f"{path} was written by a newer raudit (event schema {version}); "
                          "upgrade raudit to read it")
    df = table.to_pandas()
    if "reach" not in df.columns:  # version 1 kept no reach: every teacher moved itself alone
        df["reach"] = [[int(t)] if k == "teacher_batch" else None
                       for k, t in zip(df["kind"], df["teacher"])]
    return df


def _max(column: pa.ChunkedArray) -> Any:
    import pyarrow.compute as pc
    return pc.max(column).as_py()
