"""`fixed`'s joint-critic teachers (``-o critic=joint``): their step's gradient by hand, and the
shared fake batch's first layer computed once per teacher update.

Why: with many teachers (epileptic, k = 92-184, d = 179) the teachers' first layer is
k x 357 x 89 weights a model (12-24 MB in float32), and one teacher step under autograd
walked it about a dozen times: the permuted copy that lets one product serve the k teachers
of a model (:class:`~raudit.generators.nn.stacked.MLP`'s ``shared`` form) in the forward and
again in the backward, one (G, P) concatenation per forward (the backward of
``Stacked.views``) and their sum. The votes made that permuted copy twice more per iteration,
of weights that had not changed. Here:

* :func:`shared_first` makes the permuted first layer, and LocalTeachers keeps it from the
  votes to its next step (each step drops it: the teachers' parameters change only there),
  so the two vote rounds and the next teacher step share one copy. Not keyed on the tensor's
  version counter: torch's fused Adam updates the parameters in place without bumping it;
* :func:`teacher_grad` computes autograd's gradient of LocalTeachers' joint loss with the
  very kernels autograd calls on the same operands (relu's backward is
  ``threshold_backward`` on its result; a weight's gradient ``x^T.bmm(g)``; a bias's the
  sum over rows; the width-1 logit layer as :func:`~raudit.generators.nn.stacked.linear`),
  and writes each parameter's real + fake gradient once into the flat gradient (autograd adds
  the two halves' flat gradients; addition commutes, so the bits are the same).
  ``tests/generators/test_fixed_grad.py`` compares both with autograd to the last bit.

Only on CPU (where the kernels above are the ones autograd runs), for relu hidden layers
wider than 1 and one sigmoid logit: ``fixed``'s ``mlp`` and ``borealis`` critics.
"""

from __future__ import annotations

import torch

from raudit.generators.nn import whole
from raudit.generators.nn.mlp_grad import logit_backward
from raudit.generators.nn.stacked import ACTIVATIONS, MLP, Stacked, linear


def supported(net: MLP, device: torch.device) -> bool:
    """Whether :func:`teacher_grad` reproduces autograd for ``net`` (see the module)."""
    acts, widths = net.activations, net.widths
    return (device.type == "cpu" and len(acts) >= 2 and all(a == "relu" for a in acts[:-1])
            and acts[-1] == "sigmoid" and widths[-1] == 1 and all(w > 1 for w in widths[1:-1]))


@torch.no_grad()
def shared_first(p: Stacked, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The first layer as one (M, in, k*out) product for a batch shared by the k networks of a
    model, and its (M, k*out) bias: the copies MLP's ``shared`` form makes on every call."""
    v = p.views()
    w, b = v["w0"], v["b0"]
    g, n_in, n_out = w.shape
    m = g // k
    return (w.view(m, k, n_in, n_out).permute(0, 2, 1, 3).reshape(m, n_in, k * n_out),
            b.reshape(m, k * n_out))


def _first_shared(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, k: int) -> torch.Tensor:
    """(M, B, in) through the shared first layer -> (M*k, B, out), as MLP computes it."""
    out = linear(x, w, b)
    m, rows = out.shape[0], out.shape[1]
    n_out = out.shape[2] // k
    return out.view(m, rows, k, n_out).permute(0, 2, 1, 3).reshape(m * k, -1, n_out)


@torch.no_grad()
def forward(net: MLP, p: Stacked, x: torch.Tensor, k: int, first: tuple, *,
            logits: bool = False) -> torch.Tensor:
    """``MLP.__call__(p, x, shared=k)`` (x already the network's input) with ``first``, the
    current :func:`shared_first` of ``p``. No gradients."""
    v = p.views()
    last = len(net.activations) - 1
    for i, act in enumerate(net.activations):
        if i == 0:
            x = _first_shared(x, *first, k)
        else:
            x = linear(x, v[f"w{i}"], v[f"b{i}"])
        if not (logits and i == last):
            x = ACTIVATIONS[act](x)
    return x


def _forward(net: MLP, v: dict, x: torch.Tensor, first: tuple | None, k: int):
    """Logits and, per hidden layer, (its input, its output); ``first``: the shared first layer."""
    saved = []
    layers = len(net.activations)
    for i in range(layers - 1):
        if i == 0 and first is not None:
            h = _first_shared(x, *first, k)
        else:
            h = linear(x, v[f"w{i}"], v[f"b{i}"])
        a = torch.relu(h)
        saved.append((x, a))
        x = a
    return saved, linear(x, v[f"w{layers - 1}"], v[f"b{layers - 1}"]), x


def _backward(v: dict, saved: list, x_last: torch.Tensor, g: torch.Tensor, layers: int,
              shared: tuple[int, int] | None) -> dict:
    """Parameter gradients from the logits' gradient g (G, B, 1); ``shared`` = (M, k) when the
    first layer ran shared: its weight and bias gradients stay in the (M, in, k*out) layout."""
    out, last = {}, layers - 1
    out[f"b{last}"], out[f"w{last}"], g = logit_backward(v[f"w{last}"], x_last, g)
    for i in range(last - 1, -1, -1):
        x, a = saved[i]
        g = torch.ops.aten.threshold_backward(g, a, 0)
        if i == 0 and shared is not None:
            m, k = shared
            rows, n_out = g.shape[1], g.shape[2]
            g = g.view(m, k, rows, n_out).permute(0, 2, 1, 3).reshape(m, rows, k * n_out)
        out[f"b{i}"] = g.sum(1, keepdim=True)
        out[f"w{i}"] = x.transpose(1, 2).bmm(g)
        if i > 0:  # the first layer's input is data: no gradient
            g = g.bmm(v[f"w{i}"].transpose(1, 2))
    return out


@torch.no_grad()
def teacher_grad(net: MLP, p: Stacked, real: tuple, fake: tuple, k: int,
                 first: tuple) -> torch.Tensor:
    """The (G, P) gradient of LocalTeachers' joint loss: ``real`` = (x (G, B, in), weight) with
    target 1, ``fake`` = (x (M, B, in), weight) with target 0, one batch shared by the k
    teachers of a model; x already the network's input; ``weight`` d(loss)/d(per-row BCE);
    ``first`` the current :func:`shared_first` of ``p``."""
    v = {n: t.detach() for n, t in p.views().items()}
    layers = len(net.activations)
    grads = []
    for (x, weight), target, first in ((real, 1.0, None), (fake, 0.0, first)):  # noqa: B020 - built once, from the argument
        saved, logits, x_last = _forward(net, v, x, first, k)
        g = (whole.sigmoid(logits) - target) * weight  # same bits in any chunk (nn/whole.py)
        grads.append(_backward(v, saved, x_last, g, layers, None if first is None else
                               (first[0].shape[0], k)))
    flat = torch.empty_like(p.flat)
    g_count, m = flat.shape[0], flat.shape[0] // k
    for name, (offset, shape) in p.layout.items():
        size = int(torch.Size(shape).numel())
        dest = flat[:, offset:offset + size]
        r, f = grads[0][name], grads[1][name]
        if name in ("w0", "b0"):  # the fake half's first layer is (M, in | 1, k, out): per teacher
            n_in, n_out = (shape[0], shape[1]) if name == "w0" else (1, shape[0])
            f = f.view(m, n_in, k, n_out).permute(0, 2, 1, 3)
            torch.add(r.reshape(m, k, n_in, n_out), f, out=dest.view(m, k, n_in, n_out))
        else:
            torch.add(r.reshape(g_count, size), f.reshape(g_count, size), out=dest)
    return flat
