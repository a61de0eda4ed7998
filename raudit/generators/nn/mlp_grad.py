"""The gradient of a stacked leaky-ReLU MLP's BCE written out by hand, in autograd's own ops.

Why: smartnoise's teachers (30 -> 20 -> 10 -> 1 at cervical's width) take 25 small
steps per model and iteration, and autograd's bookkeeping around their tiny batched
products (graph nodes, one full (G, P) gradient per forward concatenated and then summed)
was about a fifth of each forward-and-backward. This computes the same gradient with the
very kernels autograd calls, on the same operands, so the bits are the same
(tests/generators/test_mlp_grad.py compares the two to the last bit):

* a hidden layer is ``baddbmm(b, x, w)`` (computed as :func:`hidden_`, the same bits); its
  backward ``grad.bmm(w^T)`` (input), ``x^T.bmm(grad)`` (weight) and ``grad.sum(1)``
  (bias: autograd's sum_to the broadcast shape); leaky ReLU's backward is
  ``leaky_relu_backward`` on its output (in place: the output's sign is the input's);
* the width-1 output layer is :func:`~raudit.generators.nn.stacked.linear`'s product
  and sum over the input axis on CPU; its backward multiplies the expanded gradient by
  the other factor and sums over the batch axis;
* BCE with logits: ``(sigmoid(z) - target) * weight``, ``weight`` the mean's (or the
  masked mean's) per-element gradient;
* the real and fake halves each give a gradient and the parameter's gradient is their
  sum, as autograd accumulates it (addition commutes, so the order does not matter).

Only what the smartnoise (and borealis) teachers are: hidden layers of width > 1 with
leaky ReLU (slope 0.2), one logit out, on CPU (:func:`supported`); anything else uses
autograd.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch
import torch.nn.functional as F

from raudit.generators.nn import whole
from raudit.generators.nn.stacked import MLP, Stacked, linear

SLOPE = 0.2  # stacked.ACTIVATIONS' leaky ReLU
_LEAKY_BACKWARD = torch.ops.aten.leaky_relu_backward.grad_input  # its out= form


def supported(net: MLP, device: torch.device) -> bool:
    """Whether :func:`bce_grad` reproduces ``net``'s autograd gradient: a plain MLP (its own
    forward) of leaky-ReLU hidden layers wider than 1 and one sigmoid logit, on CPU."""
    acts, widths = net.activations, net.widths
    return (device.type == "cpu" and type(net).__call__ is MLP.__call__ and len(acts) >= 2
            and all(a == "leaky_relu" for a in acts[:-1]) and acts[-1] == "sigmoid"
            and widths[-1] == 1 and all(w > 1 for w in widths[1:-1]))


def hidden_(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """leaky_relu(baddbmm(b, x, w)) without gradients, as ``bmm`` then the bias and the
    activation in place where that gives baddbmm's bits. Why: ``baddbmm`` first copies the
    broadcast bias into its output and then has MKL add the product onto it (beta = 1),
    which at the teachers' shapes ((60, 64, 32) x (60, 32, 21)) cost more than the add:
    301 -> 263 and 156 -> 133 us per layer with the activation. Whether MKL's beta = 1 adds
    the finished product to the output in one rounding, as ``add_`` does, depends on the
    host's kernels: yes on the AVX-512 Xeon hosts it was measured on, no on an AVX2 EPYC
    host (2026-11-25: a few ulps apart at every shape). So it is checked once per shape
    and dtype on this host (:func:`_add_is_baddbmm`) and baddbmm itself runs where it
    differs (tests/generators/test_mlp_grad.py compares the gradients with autograd's to
    the bit)."""
    if not _add_is_baddbmm(tuple(x.shape), tuple(w.shape), x.dtype):
        return F.leaky_relu_(torch.baddbmm(b.unsqueeze(1), x, w), SLOPE)
    h = torch.bmm(x, w)
    h.add_(b.unsqueeze(1))
    return F.leaky_relu_(h, SLOPE)


@lru_cache(maxsize=None)
def _add_is_baddbmm(xs: tuple, ws: tuple, dtype: torch.dtype) -> bool:
    """Whether ``bmm`` then ``add_`` gives ``baddbmm``'s bits at these shapes on this host:
    random operands (a fixed seed) at scales 1e-6, 1 and 1e6, as the check that chose the
    fast path was made."""
    gen = torch.Generator().manual_seed(0)
    for s in (1e-6, 1.0, 1e6):
        x = torch.randn(xs, dtype=dtype, generator=gen) * s
        w = torch.randn(ws, dtype=dtype, generator=gen)
        b = torch.randn(xs[0], 1, ws[-1], dtype=dtype, generator=gen) * s
        if not torch.equal(torch.bmm(x, w).add_(b), torch.baddbmm(b, x, w)):
            return False
    return True


def _forward(v: dict[str, torch.Tensor], x: torch.Tensor, layers: int) -> tuple[list, torch.Tensor]:
    """Logits (G, B, 1) and, per hidden layer, (its input, its output)."""
    saved: list[tuple[torch.Tensor, torch.Tensor | None]] = []
    for i in range(layers - 1):
        h = hidden_(x, v[f"w{i}"], v[f"b{i}"])
        # in place, one tensor fewer per layer: the backward needs only where the input was
        # > 0, and with a positive slope that is where the output is (ATen's self_is_result)
        saved.append((x, h))
        x = h
    w_t = v[f"w{layers - 1}"].transpose(1, 2)
    # stacked.linear's product, sum and bias, the bias added in place (the sum is new)
    logits = (x * w_t).sum(-1, keepdim=True).add_(v[f"b{layers - 1}"].unsqueeze(1))
    saved.append((x, None))
    return saved, logits


@torch.no_grad()
def probs_shared(net: MLP, p: Stacked, x: torch.Tensor, shared: int) -> torch.Tensor:
    """``net(p, x, shared=shared)`` (probabilities, (G, B, 1)) without gradients, for a
    :func:`supported` net: the same ops (MLP's shared first layer, then per group), each
    hidden layer through :func:`hidden_` (the same bits, without baddbmm's bias copy, the
    activation in place)."""
    v = {n: t.detach() for n, t in p.views().items()}
    layers = len(net.activations)
    w, b = v["w0"], v["b0"]
    g, n_in, n_out = w.shape
    if shared > 1:  # as MLP.__call__: one (M, B, in) @ (M, in, k*out) product for a model's k
        m = g // shared
        w = w.view(m, shared, n_in, n_out).permute(0, 2, 1, 3).reshape(m, n_in, shared * n_out)
        h = hidden_(x, w, b.reshape(m, shared * n_out))
        # contiguous for every m, as MLP.__call__ (at m = 1 reshape would give a strided view)
        h = h.view(m, h.shape[1], shared, n_out).permute(0, 2, 1, 3).contiguous().view(g, -1, n_out)
    else:
        h = hidden_(x, w, b)
    for i in range(1, layers - 1):
        h = hidden_(h, v[f"w{i}"], v[f"b{i}"])
    return whole.sigmoid(linear(h, v[f"w{layers - 1}"], v[f"b{layers - 1}"]))  # MLP's sigmoid


def logit_backward(w: torch.Tensor, x: torch.Tensor, g: torch.Tensor):
    """The width-1 logit layer's backward (its forward: stacked.linear's product and sum over
    the input axis): (bias grad (G, 1), weight grad (G, in, 1), input grad (G, B, in)) from
    the logits' gradient ``g`` (G, B, 1) and the layer's input ``x``, as autograd computes them."""
    ge = g.expand(x.shape)
    return g.sum(1, keepdim=True).squeeze(1), (ge * x).sum(1, keepdim=True).transpose(1, 2), \
        ge * w.transpose(1, 2)


def _backward(v: dict[str, torch.Tensor], saved: list, g: torch.Tensor, layers: int) -> dict:
    """Parameter gradients from the logits' gradient ``g`` (G, B, 1)."""
    out = {}
    last = layers - 1
    x, _ = saved[last]
    out[f"b{last}"], out[f"w{last}"], g = logit_backward(v[f"w{last}"], x, g)
    for i in range(last - 1, -1, -1):
        x, h = saved[i]
        g = _LEAKY_BACKWARD(g, h, SLOPE, True, grad_input=g)  # in place: g is this call's own
        out[f"b{i}"] = g.sum(1, keepdim=True)
        out[f"w{i}"] = x.transpose(1, 2).bmm(g)
        if i > 0:  # the first layer's input is data: autograd computes no gradient for it
            g = g.bmm(v[f"w{i}"].transpose(1, 2))
    return out


@torch.no_grad()
def bce_input_grad(net: MLP, p: Stacked, x: torch.Tensor, target: float, weight: float) -> torch.Tensor:
    """The (G, B, d) gradient, with respect to the input ``x``, of a BCE loss of ``net``'s
    logits against ``target`` whose gradient at logit z is ``(sigmoid(z) - target) * weight``
    (a per-model mean over B rows: 1/B), for a :func:`supported` net whose parameters need
    no gradient: what autograd computes when a generator's loss goes through a fixed
    student (pategan/core/loop.py), with the same kernels as :func:`bce_grad`'s backward.
    Why: the generator's step then needs no autograd graph at all (its own backward is
    written out too, e.g. smartnoise's :meth:`ResidualGenerator.hand_grad`)."""
    v = {n: t.detach() for n, t in p.views().items()}
    layers = len(net.activations)
    saved, logits = _forward(v, x, layers)
    g = whole.sigmoid(logits).sub_(target).mul_(weight)  # as _block_grad: the same bits
    last = layers - 1
    g = g.expand(saved[last][0].shape) * v[f"w{last}"].transpose(1, 2)  # logit_backward's input grad
    for i in range(last - 1, -1, -1):
        g = _LEAKY_BACKWARD(g, saved[i][1], SLOPE, True, grad_input=g)  # in place: g is ours
        g = g.bmm(v[f"w{i}"].transpose(1, 2))
    return g


# rows per block of groups (see bce_grad): at 64 rows a batch, 64 teachers; a block's
# activations (~1 MB at cervical's width) then stay in a core's L2 cache between the forward
# and the backward. Measured on smartnoise's teachers (G = 160, d = 29): one call 9.6 ms,
# blocks of 30-80 groups 6.6 ms, of 10 8.6 ms
BLOCK_ROWS = 4096
ROW_MULTIPLE = 64  # blocks only for batches of a multiple of this many rows (see bce_grad)


@dataclass(frozen=True)
class Blockwise:
    """A half's inputs made block by block: ``make(lo, hi)`` gives groups lo..hi-1's
    (hi - lo, rows, d) rows. Why: smartnoise's teachers read M*k*64 real and as many fake
    rows a round (10 MB each at M = 128); gathered or generated whole, each is written to
    memory and read back, which cost more than the arithmetic on it; made per block, they
    stay in cache between being made and being used. The values are the same either way."""

    rows: int
    make: Callable[[int, int], torch.Tensor]


def rows_of(x) -> int:
    """Rows per group of a half's x (a tensor or a :class:`Blockwise`)."""
    return x.rows if isinstance(x, Blockwise) else x.shape[1]


@torch.no_grad()
def bce_grad(net: MLP, p: Stacked, halves: list[tuple[Any, torch.Tensor | float, torch.Tensor | float]],
             *, align: int | None = None) -> torch.Tensor:
    """The (G, P) gradient of the sum over ``halves`` of BCE losses of ``net`` with logits.

    Each half is (x (G, B, d) or :class:`Blockwise`, target, weight): the loss's gradient at logit z is
    ``(sigmoid(z) - target) * weight``, ``weight`` a number or a (G, B, 1) tensor (a mean
    over B rows: 1/B; a masked mean: mask / count). Returns a new tensor laid out as
    ``p.flat``. One or two halves: autograd sums two gradients in either order (addition
    commutes), a third would depend on its order.

    ``align``: compute in blocks of a multiple of this many groups (the k teachers of a model)
    of about :data:`BLOCK_ROWS` rows, so that a block's working set stays in cache. Every
    kernel here works on each group alone (a batched GEMM is one GEMM per group, sums run
    within a group), and a block of whole models computes what a chunk of those models alone
    computes: the chunk-size invariance the engine keeps (tests/generators/test_chunk_invariance.py) is
    what makes a model's bits the same in any block. Only where a group's batch is a
    multiple of :data:`ROW_MULTIPLE` rows: ATen's sum over a last axis of a few elements (the
    logit layer's) is vectorised across rows, and where the row count has a remainder, which
    rows fall in the scalar tail depends on the count, so on the block (measured: batch 7,
    blocks of 3 groups against 12). None: one block.
    """
    if not 1 <= len(halves) <= 2:
        raise ValueError("bce_grad takes one or two halves")
    v = {n: t.detach() for n, t in p.views().items()}
    flat = torch.empty_like(p.flat)
    g_count = flat.shape[0]
    rows = rows_of(halves[0][0])
    size = g_count
    if align is not None and rows % ROW_MULTIPLE == 0:
        size = max(1, BLOCK_ROWS // rows // align) * align
    for lo in range(0, g_count, size):
        hi = min(g_count, lo + size)
        part = {n: t[lo:hi] for n, t in v.items()}
        block = [tuple(t.make(lo, hi) if isinstance(t, Blockwise) else t[lo:hi] if torch.is_tensor(t)
                       else t for t in half) for half in halves]
        _block_grad(net, part, block, p.layout, flat[lo:hi])
    return flat


def _block_grad(net: MLP, v: dict[str, torch.Tensor], halves: list, layout: dict,
                flat: torch.Tensor) -> None:
    """:func:`bce_grad` for one block of groups, written into ``flat`` (that block's rows)."""
    layers = len(net.activations)
    grads = []
    for x, target, weight in halves:
        saved, logits = _forward(v, x, layers)
        # same bits in any chunk (nn/whole.py); the subtraction and product in place on the
        # new tensor whole.sigmoid returns: the same kernels, two tensors fewer
        g = whole.sigmoid(logits).sub_(target).mul_(weight)
        grads.append(_backward(v, saved, g, layers))
    g_count = flat.shape[0]
    for name, (offset, shape) in layout.items():
        size = int(torch.Size(shape).numel())
        parts = [gr[name].reshape(g_count, size) for gr in grads]
        dest = flat[:, offset:offset + size]
        if len(parts) == 1:
            dest.copy_(parts[0])
        else:
            torch.add(parts[0], parts[1], out=dest)
