"""The teachers' real-batch plumbing: distinct rows of a chunk, and the blocked real-batch
forward/backward, against the plain computations they replace (bit for bit)."""

import numpy as np
import pytest
import torch

from raudit.generators.pategan.core.partitions import distinct_rows


def _reference(x: torch.Tensor):
    """distinct_rows as it was: np.unique over all M*N rows."""
    m, n, d = x.shape
    a = np.ascontiguousarray(x.reshape(m * n, d).numpy())
    _, first, ids = np.unique(a.view(np.dtype((np.void, a.itemsize * d))).ravel(),
                              return_index=True, return_inverse=True)
    return x.reshape(m * n, d)[torch.as_tensor(first)], torch.as_tensor(ids.reshape(m, n))


def _chunk(kind: str, dtype) -> torch.Tensor:
    g = np.random.default_rng(5)
    base = g.integers(0, 4, size=(40, 6)).astype(float) / 3
    tables = [base.copy() for _ in range(7)]
    if kind == "one-row":  # a world's tables: with and without the target row
        for t in tables[::2]:
            t[17] = g.random(6)
    if kind == "padded":  # unequal lengths: zero padding after each table's rows
        for i, t in enumerate(tables):
            t[40 - i:] = 0.0
    if kind == "all-differ":
        tables = [g.random((40, 6)) for _ in range(7)]
    return torch.as_tensor(np.stack(tables), dtype=dtype)


@pytest.mark.parametrize("kind", ["same", "one-row", "padded", "all-differ"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_distinct_rows_equal_the_sort_over_all_rows(kind, dtype):
    x = _chunk(kind, dtype)
    rows, ids = distinct_rows(x)
    want_rows, want_ids = _reference(x)
    assert rows.dtype == dtype and torch.equal(rows, want_rows) and torch.equal(ids, want_ids)
    assert torch.equal(rows[ids], x)  # every model's table is recovered exactly


def test_distinct_rows_keep_the_plain_layout_with_nan():
    x = _chunk("one-row", torch.float64)
    x[3, 5, 2] = float("nan")
    rows, ids = distinct_rows(x)
    assert rows.shape == (7 * 40, 6) and torch.equal(ids, torch.arange(7 * 40).view(7, 40))


def _logits_and_grads(fn, flat, d):
    flat.grad = None
    g = flat.shape[0]
    out = fn(flat[:, :d].view(g, d, 1), flat[:, d:])
    (out.sigmoid().log().sum() + out.square().sum()).backward()
    return out.detach(), flat.grad.clone()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("block_bytes", [1, 3000, 1 << 18])
def test_blocked_width_one_layer_on_gathered_rows_has_the_plain_bits(dtype, block_bytes, monkeypatch):
    import torch.nn.functional as F

    from raudit.generators.nn import gathered
    from raudit.generators.nn.stacked import linear
    monkeypatch.setattr(gathered, "BLOCK_BYTES", block_bytes)  # 1: a block per teacher
    g = torch.Generator().manual_seed(3)
    d, teachers, batch = 29, 37, 64  # 37: the last block is short
    table = torch.rand(50, d, generator=g, dtype=dtype)
    ids = torch.randint(0, 50, (teachers, batch), generator=g)
    flat = torch.randn(teachers, d + 1, generator=g, dtype=dtype).requires_grad_(True)
    plain = _logits_and_grads(lambda w, b: linear(F.embedding(ids, table), w, b), flat, d)
    blocked = _logits_and_grads(lambda w, b: gathered.gathered_linear1(w, b, ids, table), flat, d)
    assert torch.equal(plain[0], blocked[0]) and torch.equal(plain[1], blocked[1])


def test_lowest_first_is_the_stable_sort_prefix_with_and_without_ties():
    from raudit.generators.pategan.core.partitions import lowest_first
    g = torch.Generator().manual_seed(0)
    keys = torch.rand(50, 40, generator=g, dtype=torch.float64)
    tied = torch.randint(0, 6, (50, 40), generator=g).to(torch.float64)  # ties everywhere
    for k in (keys, tied, torch.cat([keys[:, :10], keys[:, :10] + 2.0], 1)):
        for b in (1, 7, k.shape[1] - 1, k.shape[1]):
            assert torch.equal(lowest_first(k, b), torch.argsort(k, dim=1, stable=True)[:, :b])
