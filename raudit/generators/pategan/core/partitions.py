"""Which rows each teacher trains on: how the PATE family splits each model's training
rows among its k teachers, the distinct rows of a chunk's tables, and batch order.

A partition is a (M, k, P) tensor of row ids plus (M, k) sizes: teacher t of model m
owns rows ``parts[m, t, :sizes[m, t]]``. How it is drawn is where the ports differ
(shuffled disjoint chunks, chunks in row order, each row to a random teacher), so the
generators build it here and hand it to :class:`raudit.generators.pategan.core.teachers.LocalTeachers`.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from raudit.generators.nn.rng import CounterRNG


def split_sizes(rows: torch.Tensor, k: int) -> torch.Tensor:
    """np.array_split sizes: the first N % k teachers get one row more. (M,) -> (M, k)."""
    t = torch.arange(k, device=rows.device)[None, :]
    return rows[:, None] // k + (t < rows[:, None] % k).long()


def partition_from_order(order: torch.Tensor, rows: torch.Tensor, k: int,
                         sizes: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Cut each model's row order (M, N) into k consecutive chunks (array_split, or ``sizes`` (M, k))."""
    sizes = split_sizes(rows, k) if sizes is None else sizes
    starts = torch.cumsum(sizes, dim=1) - sizes
    p = int(sizes.max())
    offs = starts[:, :, None] + torch.arange(p, device=order.device)[None, None, :]
    offs = torch.minimum(offs, (rows - 1).clamp(min=0)[:, None, None])
    parts = torch.gather(order, 1, offs.reshape(order.shape[0], -1)).view(order.shape[0], k, p)
    return parts, sizes


def shuffled_partition(rng: CounterRNG, rows: torch.Tensor, n_max: int, k: int):
    """Shuffle once, then k disjoint chunks (the paper's Algorithm 1, line 3)."""
    return partition_from_order(rng.permutation(n_max, rows), rows, k)


def iid_partition(rng: CounterRNG, rows: torch.Tensor, n_max: int, k: int):
    """Each row to a teacher drawn uniformly and independently (``fixed``).

    Adding or removing a record then changes one teacher's data and no other's (a
    shuffled order cut into equal chunks shifts every later boundary). Sizes are
    multinomial; a teacher may get no row when N is small.
    """
    m = rows.shape[0]
    owner = rng.integers(torch.full((m, 1), k, device=rows.device), n_max)
    valid = torch.arange(n_max, device=rows.device)[None, :] < rows[:, None]
    owner = torch.where(valid, owner, torch.full_like(owner, k))  # padding sorts last
    order = torch.argsort(owner * n_max + torch.arange(n_max, device=rows.device)[None, :], dim=1)
    sizes = torch.stack([(owner == t).sum(1) for t in range(k)], dim=1)
    return partition_from_order(order, rows, k, sizes)


def contiguous_partition(rows: torch.Tensor, n_max: int, k: int):
    """Disjoint chunks in row order, no shuffle (borealis, smartnoise)."""
    order = torch.arange(n_max, device=rows.device).expand(rows.shape[0], n_max)
    return partition_from_order(order, rows, k)


def distinct_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(M, N, d) tables -> (U, d) distinct rows and (M, N) ids into them.

    The M tables of an audit chunk are near copies (shadow datasets differ by a few
    records), so the distinct rows fit in cache where the (M, N, d) block does not:
    gathering the teachers' real batches from them is 2-5x faster. Values are copied
    unchanged, so training is bit-identical. Tables holding NaN keep the plain layout.
    """
    m, n, d = x.shape
    flat = x.reshape(m * n, d)
    tables = np.ascontiguousarray(x.detach().cpu().numpy())
    # the distinct tables first (a chunk's M tables are one or two): sorting their rows
    # gives the same distinct rows in the same order as sorting all M*N, at a fraction
    # of the cost; models with equal tables get equal ids
    source: dict[bytes, int] = {}
    copy_of = np.array([source.setdefault(t.tobytes(), i) for i, t in enumerate(tables)])
    distinct = np.unique(copy_of)
    if not np.isfinite(tables[distinct]).all():
        return flat, torch.arange(m * n, device=x.device).view(m, n)
    # rows as opaque byte strings: numpy sorts those ~10x faster than torch.unique(dim=0)
    a = tables[distinct].reshape(-1, d)
    _, first, ids = np.unique(a.view(np.dtype((np.void, a.itemsize * d))).ravel(),
                              return_index=True, return_inverse=True)
    ids = ids.reshape(len(distinct), n)[np.searchsorted(distinct, copy_of)]
    rows = torch.as_tensor(a[first], device=x.device).to(x.dtype)
    return rows, torch.as_tensor(ids, device=x.device)


def lowest_first(keys: torch.Tensor, b: int) -> torch.Tensor:
    """``torch.argsort(keys, dim=1, stable=True)[:, :b]``, by a partial sort where it gives
    the same: when the b + 1 smallest keys of every row are distinct, the b smallest and
    their order are unique (a tie anywhere in them falls back to the stable sort)."""
    if b + 1 <= keys.shape[1]:
        vals, idx = torch.topk(keys, b + 1, dim=1, largest=False, sorted=True)
        if bool((vals[:, 1:] > vals[:, :-1]).all()):
            return idx[:, :b]
    return torch.argsort(keys, dim=1, stable=True)[:, :b]


def gather_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """x (M, N, d) at rows (M, B) -> (M, B, d)."""
    m, n, d = x.shape
    flat = (rows + (torch.arange(m, device=rows.device) * n)[:, None]).reshape(-1)
    return F.embedding(flat, x.reshape(m * n, d)).view(m, -1, d)


def lowest_valid(keys: torch.Tensor, valid: torch.Tensor, b: int) -> torch.Tensor:
    """Positions of the b smallest keys among the first valid[m] columns: the first b
    entries of a random permutation, i.e. np.random.permutation(n)[:b]."""
    cols = torch.arange(keys.shape[1], device=keys.device)[None, :]
    keys = torch.where(cols < valid[:, None], keys, keys + 2.0)
    return torch.topk(keys, b, dim=1, largest=False).indices
