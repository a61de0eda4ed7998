"""A width-1 linear layer on rows gathered from a table, computed in cache-sized blocks.

The paper's teachers are logistic regressions on real batches: G = M*k teachers, each
B rows of d features picked by index from the chunk's distinct rows. Written the plain
way (``linear(F.embedding(ids, table), w, b)``) every step makes four passes over a
(G, B, d) block (the gather, the products, their sum, and in the backward the products
again and their sum): at M = 128 that is 4.7 MB per pass, out of cache, and it was 40 % of
`paper`'s step. Here the same torch operations run on blocks of teachers whose (b, B, d)
slice fits in the L2 cache, and the backward gathers its block again (the table does fit)
instead of keeping the (G, B, d) batch alive.

Bit-identical to the plain way: every output element is the same elementwise products
reduced by the same torch reduction over the same axis; a block only shortens the
leading axis, along which nothing is summed (tests/generators/test_teachers.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

BLOCK_BYTES = 1 << 18  # one block's (b, B, d) slice: 256 KiB, well inside a core's L2


def _rows_per_block(batch: int, d: int, itemsize: int) -> int:
    return max(1, BLOCK_BYTES // max(1, batch * d * itemsize))


class _GatheredLinear1(torch.autograd.Function):
    """logits (G, B, 1) = sum_i table[ids[g, b], i] * w[g, i, 0] + b[g]; grads for w and b."""

    @staticmethod
    def forward(ctx, w: torch.Tensor, b: torch.Tensor, ids: torch.Tensor,
                table: torch.Tensor) -> torch.Tensor:
        g, batch = ids.shape
        wt = w.transpose(1, 2)  # (G, 1, d), as linear() multiplies
        step = _rows_per_block(batch, table.shape[1], table.element_size())
        out = torch.empty(g, batch, 1, dtype=table.dtype, device=table.device)
        for s in range(0, g, step):
            x = F.embedding(ids[s:s + step], table)
            torch.sum(x * wt[s:s + step], -1, keepdim=True, out=out[s:s + step])
        ctx.save_for_backward(ids, table)
        ctx.step = step
        return out + b.unsqueeze(1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        ids, table = ctx.saved_tensors
        g, batch = ids.shape
        d, step = table.shape[1], ctx.step
        # autograd's formulas for (x * w^T).sum(-1, keepdim=True) + b.unsqueeze(1):
        # grad_b = grad summed over the batch axis; grad_w^T = (grad expanded * x) summed
        # over it (MulBackward's product, then sum_to_size)
        grad_w = torch.empty(g, 1, d, dtype=grad.dtype, device=grad.device)
        for s in range(0, g, step):
            x = F.embedding(ids[s:s + step], table)
            gs = grad[s:s + step]
            torch.sum(gs.expand(gs.shape[0], batch, d) * x, 1, keepdim=True,
                      out=grad_w[s:s + step])
        grad_b = grad.sum(1, keepdim=True).squeeze(1)
        return grad_w.transpose(1, 2), grad_b, None, None


def gathered_linear1(w: torch.Tensor, b: torch.Tensor, ids: torch.Tensor,
                     table: torch.Tensor) -> torch.Tensor:
    """``linear(F.embedding(ids, table), w, b)`` for a width-1 layer (w (G, d, 1), b (G, 1),
    ids (G, B)) on CPU, blocked; the same bits."""
    return _GatheredLinear1.apply(w, b, ids, table)
