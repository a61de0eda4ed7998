"""Base class for generators trained M models at a time on the batched engine.

A subclass supplies three things:

* ``resolve(n_rows, n_cols)``: the hyperparameters for a table of that size
  (presets such as ``batch = min(64, N // k)`` depend on the data);
* ``encoder(seed)``: a fresh :class:`Encoder` for the model trained with ``seed``
  (each model scales its own training table, as the upstream code does; an encoder
  with a DP preprocessing step draws its noise from that seed's stream);
* ``train(batch, hp, ...)``: one call that trains every model of a
  :class:`TrainBatch` in lockstep and returns a :class:`Trained`.

``fit`` is ``fit_many`` with one table, so a model trained alone and the same
model trained inside a batch follow the same code path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch

from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError
from raudit.generators.base import Generator, check_privacy, check_table
from raudit.generators.capabilities import Capabilities
from raudit.events import Observer
from raudit.generators.nn.device import pick_device
from raudit.generators.batch_types import Encoder, FittedBatch, TrainBatch, Trained, WhiteBoxView

_DTYPES = {"float32": torch.float32, "float64": torch.float64}

BATCH_NAMES = ("batch", "teacher_batch", "query_batch", "student_batch")


class BatchedGenerator(Generator):
    """A generator whose models train M at a time (see the module docstring)."""

    dtype: torch.dtype = torch.float32
    capabilities = Capabilities(device=True, progress=True)
    # True where every element-wise function of the stacked code whose vector and scalar
    # code round differently (sigmoid, softplus, BCE with logits and their backward) runs on
    # whole SIMD blocks (nn/whole.py), checked at odd batch sizes by
    # tests/generators/test_chunk_invariance.py: no batch size makes it chunk-dependent.
    # False (a batched generator nobody checked): the per-model batch rule of chunk_dependence.
    whole_blocks: ClassVar[bool] = False

    def __init__(self, *, preset: str = "default", device: str | None = None,
                 dtype: str | None = None, **options: Any):
        if dtype is not None and dtype not in _DTYPES:
            raise ConfigError(f"dtype must be one of {', '.join(_DTYPES)}; got {dtype!r}")
        super().__init__(preset=preset, device=device, dtype=dtype, **options)
        self.preset, self.device_name = preset, device
        if dtype is not None:
            self.dtype = _DTYPES[dtype]
        self._batch: FittedBatch | None = None
        self._index = 0

    # -- to implement ------------------------------------------------------
    def resolve(self, n_rows: int, n_cols: int) -> Any:
        raise NotImplementedError

    def encoder(self, seed: int) -> Encoder:
        """A fresh encoder for the model whose training seed is ``seed``; encoders that
        draw no noise ignore it."""
        raise NotImplementedError

    def train(self, batch: TrainBatch, hp: Any, *, epsilon: float, delta: float | None,
              observer: Observer | None, progress: Callable[[int], None] | None) -> Trained:
        raise NotImplementedError

    def per_model_batches(self, hp: Any) -> dict[str, int]:
        """The per-model batch sizes of resolved hyperparameters ``hp`` by name (a field of
        ``hp`` named in :data:`BATCH_NAMES`, else the option of that name)."""
        out = {}
        for name in BATCH_NAMES:
            value = getattr(hp, name, None)
            value = self.options.get(name) if value is None else value
            if isinstance(value, int) and not isinstance(value, bool):
                out[name] = value
        return out

    def chunk_dependence(self, n_rows: int, n_cols: int) -> str | None:
        """Not chunk-invariant under ``RAUDIT_COMPILE=fused|step`` (inductor's fused kernels
        reorder sums and are not kept to whole blocks); else, unless :attr:`whole_blocks`,
        where a per-model batch is not of whole SIMD blocks (:func:`whole.not_whole`), as
        also on a host whose batched products depend on a model's position in the batch
        (:func:`whole.products_batch_invariant`)."""
        from raudit.generators.nn import compiled, whole

        mode = compiled.mode()
        if mode in ("fused", "step"):
            return f"RAUDIT_COMPILE={mode} fuses floating-point work into kernels of its own"
        if self.whole_blocks and whole.products_batch_invariant(self.dtype):
            return None
        # not whole-block code, or a host whose batched products depend on the position
        # (then only whole-block batches keep a model's bits whatever the chunk)
        return whole.not_whole(self.per_model_batches(self.resolve(n_rows, n_cols)), self.dtype)

    # -- protocol ----------------------------------------------------------
    def _fit(self, data, *, epsilon, delta, seed, columns, observer) -> None:
        twin = self.fit_many([data], epsilon=epsilon, delta=delta, seeds=[seed],
                             columns=columns, observer=observer)[0]
        self._batch, self._index, self.summary_ = twin._batch, twin._index, twin.summary_

    def fit_many(self, tables: Sequence[pd.DataFrame], *, epsilon: float,
                 delta: float | None = None, seeds: Sequence[int],
                 columns: Sequence[ColumnMeta] | None = None,
                 observer: Observer | None = None,
                 progress: Callable[[int], None] | None = None,
                 train_options: dict | None = None) -> list["BatchedGenerator"]:
        """Fit M models; tables whose resolved hyperparameters differ train in separate calls.

        ``train_options`` go to ``train`` as keywords (e.g. ``make_teachers`` for
        teacher-parallel training on Ray).
        """
        delta = self.default_delta if delta is None else delta
        check_privacy(epsilon, delta)
        if len(tables) != len(seeds):
            raise ConfigError(f"{len(tables)} tables but {len(seeds)} seeds")
        cols = tuple(columns) if columns else None
        groups: dict[Any, list[int]] = {}
        resolved = []
        # One set-up per distinct table: an audit chunk passes one table object M times,
        # so checks, hyperparameters, encoder fits and encodings are done once for it.
        per_table: dict[int, Any] = {}
        for i, t in enumerate(tables):
            if id(t) not in per_table:
                check_table(t, allow_nan=self.allow_nan)
                per_table[id(t)] = self.resolve(len(t), t.shape[1])
            hp = per_table[id(t)]
            resolved.append(hp)
            groups.setdefault(repr(hp), []).append(i)
        out: list[BatchedGenerator | None] = [None] * len(tables)
        device = pick_device(self.device_name)
        for members in groups.values():
            hp = resolved[members[0]]
            encoders = self._encoders([tables[i] for i in members], [seeds[i] for i in members],
                                      cols)
            batch = self._pack([tables[i] for i in members], encoders, [seeds[i] for i in members],
                               device)
            trained = self.train(batch, hp, epsilon=epsilon, delta=delta, observer=observer,
                                 progress=progress, **(train_options or {}))
            fitted = FittedBatch(trained, encoders, device, self.dtype)
            for j, i in enumerate(members):
                view = type(self)(**self.options)
                view._batch, view._index = fitted, j
                view.summary_ = {"iterations": trained.iterations[j], "eps_hat": trained.eps_hat[j],
                                 "hyperparameters": _plain(hp),
                                 **(trained.extra[j] if trained.extra else {})}
                declared = encoders[j].declared_bounds()
                if declared is not None:
                    view.summary_["output_bounds"] = declared
                out[i] = view
        return out  # type: ignore[return-value]

    def _encoders(self, tables: Sequence[pd.DataFrame], seeds: Sequence[int],
                  cols: tuple[ColumnMeta, ...] | None) -> list[Encoder]:
        """A fitted encoder per (table, seed); one per distinct table object when shareable
        (a shareable fit ignores the seed)."""
        shared: dict[int, Encoder] = {}
        out = []
        for t, seed in zip(tables, seeds):
            enc = shared.get(id(t))
            if enc is None:
                enc = self.encoder(int(seed)).fit(t, cols)
                if enc.shareable:
                    shared[id(t)] = enc
            out.append(enc)
        return out

    def _pack(self, tables, encoders, seeds, device) -> TrainBatch:
        # each distinct (table, encoder) encoded once; the copies are the same numbers
        done: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        for enc, t in zip(encoders, tables):
            if (id(t), id(enc)) not in done:
                done[id(t), id(enc)] = (enc.transform(t), t.iloc[:, -1].to_numpy(dtype=float))
        pairs = [done[id(t), id(enc)] for enc, t in zip(encoders, tables)]
        arrays = [a for a, _ in pairs]
        n_max, d = max(a.shape[0] for a in arrays), arrays[0].shape[1]
        # filled in the training dtype (the cast on assignment rounds as torch's would):
        # no float64 copy of the M tables to convert afterwards
        dt = torch.empty(0, dtype=self.dtype).numpy().dtype
        x = np.zeros((len(arrays), n_max, d), dtype=dt)
        labels = np.zeros((len(arrays), n_max), dtype=dt)
        for m, (a, lab) in enumerate(pairs):
            x[m, : len(a)] = a
            labels[m, : len(lab)] = lab
        rows = torch.tensor([a.shape[0] for a in arrays], dtype=torch.int64, device=device)
        return TrainBatch(torch.as_tensor(x, dtype=self.dtype, device=device), rows, list(seeds),
                          torch.as_tensor(labels, dtype=self.dtype, device=device))

    def sample(self, n: int, *, seed: int = 0) -> pd.DataFrame:
        if self._batch is None:
            raise ConfigError(f"{self.name}: call fit() before sample()")
        return self._batch.sample([self._index], n, [seed])[0]

    @staticmethod
    def sample_many(models: Sequence["BatchedGenerator"], n: int, seeds: Sequence[int]) -> list[pd.DataFrame]:
        """Sample from many fitted models, one forward pass per training batch."""
        out: list[pd.DataFrame | None] = [None] * len(models)
        for batch, members in _by_batch(models):
            dfs = batch.sample([models[i]._index for i in members], n, [seeds[i] for i in members])
            for i, df in zip(members, dfs):
                out[i] = df
        return out


    @staticmethod
    def white_box_many(models: Sequence["BatchedGenerator"], target: pd.DataFrame, n: int,
                       seeds: Sequence[int]) -> list[WhiteBoxView]:
        """Each model's white-box view: ``n`` fresh samples (seeded by ``seeds``) and, where
        its training loop kept the critic, the critic's logits at ``target`` (one row, the
        table's columns, encoded by the model's own encoder) and at the samples.
        One forward pass per training batch."""
        out: list[WhiteBoxView | None] = [None] * len(models)
        for batch, members in _by_batch(models):
            index = [models[i]._index for i in members]
            x = batch.sample_encoded(index, n, [seeds[i] for i in members])
            s_logits = batch.critic_logits(index, x)
            t_logits = None
            if s_logits is not None:
                enc = np.stack([batch.encoders[i].transform(target) for i in index])
                # a target outside a model's encoded range (its encoder never saw it)
                # is still a point the critic can score; only non-numbers are cleared
                enc = np.nan_to_num(enc, nan=0.0, posinf=1e6, neginf=-1e6)
                t_logits = batch.critic_logits(index, torch.as_tensor(enc))
            xs = x.cpu().numpy()
            for j, i in enumerate(members):
                out[i] = WhiteBoxView(batch.encoders[index[j]].inverse(xs[j]),
                                      None if t_logits is None else float(t_logits[j, 0]),
                                      None if s_logits is None else s_logits[j])
        return out  # type: ignore[return-value]


def _by_batch(models: Sequence[BatchedGenerator]) -> list[tuple[Any, list[int]]]:
    """The training batches ``models`` came from, each with the positions of its models in
    ``models`` (first seen first): one forward pass serves each batch's models."""
    members: dict[int, list[int]] = {}
    for i, g in enumerate(models):
        members.setdefault(id(g._batch), []).append(i)
    return [(models[m[0]]._batch, m) for m in members.values()]


def _plain(hp: Any) -> Any:
    """Hyperparameters as JSON-ready values (dataclass -> dict)."""
    if hasattr(hp, "__dataclass_fields__"):
        from dataclasses import asdict
        return asdict(hp)
    return hp
