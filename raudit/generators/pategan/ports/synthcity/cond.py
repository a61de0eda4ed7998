"""synthcity's CTGAN-style conditional vector and its data loader (``ConditionalDatasetSampler``, v0.2.10).

The conditional vector has one slot per category of every one-hot (discrete) column.
``sample_conditional(n)`` picks, per row, a discrete column uniformly and a category
with its frequency in the REAL training data (non-private), and one-hot encodes it.

The critic's real batches come from a DataLoader whose sampler synthcity builds once
per fit (faithfully reproduced here, quirks included):

1. ``train_test_split(range(N), train_size=0.8)``: a random 80 % "train" split;
2. N "dataset conditionals" are drawn with ``sample_conditional``, and for each a
   random real row holding that category; the rows that fall in the train split are
   kept, in order: the list ``train_idx`` (length L ~ 0.8 N, with repeats);
3. ``mapping[row] = position`` of its LAST occurrence in ``train_idx``; every epoch the
   sampler shuffles ``train_idx`` and yields ``mapping[row]``, i.e. POSITIONS
   0..L-1, which the DataLoader uses as row indices into the whole table.

So the real row at a batch slot is ``X[position]`` (not the sampled row) and its
conditional is that of item ``position``: the critic only ever reads rows whose index
is below L (about 0.8 N; with no discrete column exactly the first floor(0.8 N)
rows), and real rows and conditionals are paired at random. The generator's
conditional cross-entropy penalty is then computed against these pairs.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from raudit.generators.nn.rng import CounterRNG


def split_sizes(n: int, train_size: float = 0.8) -> tuple[int, int]:
    """scikit-learn's train_test_split sizes (n_train, n_test) for a float train_size."""
    n_test = math.ceil((1.0 - train_size) * n)
    return math.floor(train_size * n), n_test


class CondSampler:
    """Per-model conditional tables and loader positions for M encoded tables."""

    def __init__(self, rng: CounterRNG, x: torch.Tensor, rows: torch.Tensor,
                 blocks: list[tuple[int, int]]):
        m, n_max, _ = x.shape
        dev = x.device
        self.blocks, self.models = blocks, m
        self.width = sum(w for _, w in blocks)
        self.max_cat = max([w for _, w in blocks], default=1)
        starts = np.cumsum([0] + [w for _, w in blocks])[:-1]
        self.cond_offsets = torch.as_tensor(starts, dtype=torch.long, device=dev)
        xn = x.detach().cpu().numpy()
        n_rows = rows.cpu().numpy()
        probs = np.zeros((m, len(blocks), self.max_cat))
        for j, (o, w) in enumerate(blocks):
            freq = np.stack([xn[i, :n_rows[i], o:o + w].sum(0) for i in range(m)])
            probs[:, j, :w] = freq / freq.sum(1, keepdims=True)
        self.probs = torch.as_tensor(probs, dtype=torch.float64, device=dev)
        perm = rng.permutation(n_max, rows).cpu().numpy()  # the 80/20 split
        cond = np.zeros((m, n_max, self.width))
        positions = []
        if blocks:
            col_u, cat_r, row_u = (rng.open_uniform(n_max).cpu().numpy() for _ in range(3))
        for i in range(m):
            n = int(n_rows[i])
            n_train, n_test = split_sizes(n)
            train = perm[i, n_test:n_test + n_train]
            if not blocks:  # no conditional: the loader yields positions 0..n_train-1
                positions.append(np.arange(n_train))
                continue
            in_train = np.zeros(n, dtype=bool)
            in_train[train] = True
            col = np.minimum((col_u[i, :n] * len(blocks)).astype(int), len(blocks) - 1)
            cum = np.cumsum(probs[i, col], axis=1)
            cat = np.argmax(cum > cat_r[i, :n, None], axis=1)
            cond[i, np.arange(n), starts[col] + cat] = 1.0
            sampled = np.empty(n, dtype=np.int64)
            for j in range(n):  # a random real row with that category in that column
                o = blocks[col[j]][0]
                match = np.flatnonzero(xn[i, :n, o + cat[j]] == 1)
                sampled[j] = match[min(int(row_u[i, j] * len(match)), len(match) - 1)]
            train_idx = sampled[in_train[sampled]]
            last = {int(r): p for p, r in enumerate(train_idx)}
            positions.append(np.array([last[int(r)] for r in train_idx], dtype=np.int64))
        self.length = torch.as_tensor([len(p) for p in positions], dtype=torch.long, device=dev)
        l_max = max(1, int(self.length.max()))
        pos = np.zeros((m, l_max), dtype=np.int64)
        for i, p in enumerate(positions):
            pos[i, :len(p)] = p
        self.positions = torch.as_tensor(pos, device=dev)
        self.cond = torch.as_tensor(cond, dtype=x.dtype, device=dev)

    def select(self, index: torch.Tensor) -> "CondSampler":
        """The sampler of models ``index`` only. The tables keep their widths (the longest
        loader list of the whole chunk), so every draw keeps its shape and each model's numbers."""
        sub = object.__new__(CondSampler)
        sub.__dict__.update(self.__dict__)
        sub.models = int(index.numel())
        sub.probs, sub.length = self.probs[index], self.length[index]
        sub.positions, sub.cond = self.positions[index], self.cond[index]
        return sub

    def batch(self, rng: CounterRNG, b: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The first DataLoader batch of a fresh shuffle: row ids (M, b) and validity (M, b).

        A model whose list is shorter than b gets a short batch (the DataLoader's).
        """
        keys = rng.open_uniform(self.positions.shape[1])
        cols = torch.arange(self.positions.shape[1], device=keys.device)[None, :]
        keys = torch.where(cols < self.length[:, None], keys, keys + 2.0)
        order = torch.argsort(keys, dim=1, stable=True)
        if order.shape[1] < b:
            order = torch.cat([order, order[:, :1].expand(-1, b - order.shape[1])], dim=1)
        rows = torch.gather(self.positions, 1, order[:, :b])
        valid = torch.arange(b, device=keys.device)[None, :] < self.length[:, None]
        return rows, valid

    def sample(self, rng: CounterRNG, n: int, probs: torch.Tensor | None = None) -> torch.Tensor:
        """``sample_conditional(n)``: (M, n, width) one-hot conditionals (width 0 without discrete columns)."""
        return sample_conditional(rng, self.probs if probs is None else probs, self.cond_offsets, n,
                                  self.width)


def sample_conditional(rng: CounterRNG, probs: torch.Tensor, offsets: torch.Tensor, n: int,
                       width: int) -> torch.Tensor:
    m, n_disc, max_cat = probs.shape
    if n_disc == 0:
        return torch.zeros(m, n, 0, dtype=rng.dtype, device=probs.device)
    col = (rng.open_uniform(n) * n_disc).long().clamp(max=n_disc - 1)
    r = rng.open_uniform(n)
    p = torch.gather(probs, 1, col[..., None].expand(-1, -1, max_cat))
    cat = (torch.cumsum(p, dim=-1) > r[..., None]).to(torch.int8).argmax(-1)
    out = torch.zeros(m, n, width, dtype=rng.dtype, device=probs.device)
    out.scatter_(2, (offsets[col] + cat)[..., None], 1.0)
    return out
