"""SmartNoise's PATE-GAN networks on stacked parameters (spec section 6).

Generator (snsynth ``Generator(latent_dim, output_dim, binary)``): three blocks
Linear(bias=False) -> LayerNorm -> activation, the activation LeakyReLU(0.2), or
Tanh in every block when ``binary=True``; the first two blocks are residual
(x = block(x) + x), the third maps to the output width and keeps its LayerNorm
and activation (so the output is not squashed into [-1, 1] by default).

Discriminator (teachers and student): Linear(d, 2d//3) -> LeakyReLU(0.2) ->
Linear(2d//3, d//3) -> LeakyReLU(0.2) -> Linear(d//3, 1) -> Sigmoid.

Initialisation: snsynth's ``weights_init`` applies Xavier-uniform to every
``nn.Linear`` weight and touches nothing else, so Linear biases keep PyTorch's
default U(-1/sqrt(fan_in), 1/sqrt(fan_in)) and LayerNorm starts at gamma = 1,
beta = 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from raudit.generators.nn import native
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import ACTIVATIONS, MLP, Stacked, constant, layer_norm, linear, xavier_uniform

# latent numbers per block of models when drawing fakes without gradients (loop.fakes):
# 2^17 float64 numbers are 1 MB, half of a 2 MB per-core L2, so that a block's draw and
# its layers' outputs stay in the core's cache. Chosen by
# measurement against 2^16 (1.02-1.15x at M = 32 and 128, lab/performance.md); the block
# never changes a number
BLOCK_ELEMENTS = 1 << 17
SLOPE = 0.2  # LeakyReLU(0.2), stacked.ACTIVATIONS' slope
EPS = 1e-5  # F.layer_norm's default, the epsilon stacked.layer_norm uses
_LEAKY_BACKWARD = torch.ops.aten.leaky_relu_backward.default
_LEAKY_BACKWARD_INTO = torch.ops.aten.leaky_relu_backward.grad_input  # its out= form


class TorchInitMLP(MLP):
    """An MLP whose biases start as ``nn.Linear``'s default, U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""

    def create(self, rng: CounterRNG, copies: int = 1) -> Stacked:
        inits = {}
        for i, (a, b) in enumerate(zip(self.widths, self.widths[1:])):
            inits[f"w{i}"] = xavier_uniform(rng, a, b, copies)
            bound = 1.0 / math.sqrt(a) if a > 0 else 0.0
            inits[f"b{i}"] = (rng.uniform(copies, b) * (2 * bound) - bound).reshape(-1, b)
        return Stacked.create(self.shapes(), inits)


def discriminator(d: int) -> TorchInitMLP:
    """snsynth's ``Discriminator(d)`` (widths 2d//3, d//3, 1)."""
    return TorchInitMLP([d, 2 * d // 3, d // 3, 1], ["leaky_relu", "leaky_relu", "sigmoid"])


class ResidualGenerator:
    """snsynth's generator: latent -> latent (residual) -> latent (residual) -> d."""

    def __init__(self, latent: int, out: int, binary: bool = False):
        self.latent, self.out = latent, out
        self.act = ACTIVATIONS["tanh" if binary else "leaky_relu"]
        self.binary = binary
        self.act_ = torch.tanh_ if binary else native.leaky_(SLOPE)  # in place

    def shapes(self) -> dict[str, tuple[int, ...]]:
        widths = [(self.latent, self.latent), (self.latent, self.latent), (self.latent, self.out)]
        out: dict[str, tuple[int, ...]] = {}
        for i, (a, b) in enumerate(widths):
            out[f"w{i}"], out[f"g{i}"], out[f"b{i}"] = (a, b), (b,), (b,)
        return out

    def create(self, rng: CounterRNG, copies: int = 1) -> Stacked:
        shapes = self.shapes()
        inits = {}
        for i in range(3):
            a, b = shapes[f"w{i}"]
            inits[f"w{i}"] = xavier_uniform(rng, a, b, copies)
            inits[f"g{i}"] = constant(rng, (b,), 1.0, copies)  # LayerNorm weight
            inits[f"b{i}"] = constant(rng, (b,), 0.0, copies)  # LayerNorm bias
        return Stacked.create(shapes, inits)

    def fused_key(self) -> tuple:
        """What RAUDIT_COMPILE=step's graph bakes in of this network (fused_step.net_key):
        its forward with gradients enabled is a pure function of (parameters, z), which the
        fused step traces; it never takes the in-place no-grad path there."""
        return ("residual", self.latent, self.out, self.act is ACTIVATIONS["tanh"])

    def __call__(self, p: Stacked, z: torch.Tensor, *, logits: bool = False, shared: int = 1) -> torch.Tensor:
        v = p.views()
        if not torch.is_grad_enabled():
            return self._no_grad(v, z)

        def block(x: torch.Tensor, i: int) -> torch.Tensor:
            return self.act(layer_norm(linear(x, v[f"w{i}"]), v[f"g{i}"], v[f"b{i}"]))

        x = block(z, 0) + z
        x = block(x, 1) + x
        return block(x, 2)

    def hand_grad(self, p: Stacked, z: torch.Tensor,
                  head: Callable[[torch.Tensor, int, int], torch.Tensor],
                  block: int | None = None) -> torch.Tensor | None:
        """The (G, P) gradient, laid out as ``p.flat``, of a loss of the output ``G(z)`` whose
        gradient ``head(x, lo, hi)`` gives for models lo..hi-1's output ``x``, or None where
        autograd must compute it (Tanh blocks, a layer one wide: :func:`linear` takes
        another path there). ``block``: that many models at a time (None: all at once), so
        that a block's activations stay in the core's cache between the forward and the
        backward; every kernel here works on each model alone, so a block is only for the
        caller to choose where the head's kernels are per model too.

        Why: at the advertised audit's k = 2 the generator's step was a large part of an
        iteration, and of it autograd's own work (the graph, the concatenation that
        :meth:`Stacked.views`' split is differentiated into, a tensor per node) a fifth. This is
        the backward autograd runs, with the same ATen kernels on the same operands, so the
        bits are the same (tests/generators/test_residual_grad.py): per block, LeakyReLU's
        backward on its output (the output's sign is the input's), addcmul's (the product
        with gamma for the normalised rows; for gamma the product with them, and for beta the
        gradient itself, each summed over the batch axis, as the engine's ``sum_to`` does),
        ``native_layer_norm_backward`` from the saved mean and rstd, and ``bmm``'s two
        products; a residual input's gradient is the block's plus the sum's (one addition:
        the order in which the engine adds the two does not matter)."""
        if self.binary or min(self.latent, self.out) < 2:
            return None
        flat = torch.empty_like(p.flat)
        size = p.groups if block is None else block
        with torch.no_grad():
            for lo in range(0, p.groups, size):
                hi = min(p.groups, lo + size)
                part = Stacked(p.flat.detach()[lo:hi], p.layout)
                self._hand_grad(part, z[lo:hi], head, (lo, hi), flat[lo:hi])
        return flat

    def _hand_grad(self, p: Stacked, z: torch.Tensor, head: Callable[[torch.Tensor, int, int], torch.Tensor],
                   block: tuple[int, int], flat: torch.Tensor) -> None:
        """:meth:`hand_grad` for models ``block`` = (lo, hi), written into ``flat`` (their rows)."""
        v = p.views()
        saved, x = [], z
        for i in range(3):  # __call__'s forward, keeping what the backward reads
            h = torch.bmm(x, v[f"w{i}"])  # linear(x, w) for a layer wider than 1
            n, mean, rstd = torch.native_layer_norm(h, [h.shape[-1]], None, None, EPS)
            y = F.leaky_relu_(torch.addcmul(v[f"b{i}"].unsqueeze(1), n, v[f"g{i}"].unsqueeze(1)),
                              SLOPE)  # layer_norm's affine, then the activation in place
            saved.append((x, h, n, mean, rstd, y))
            x = y + x if i < 2 else y
        grad = head(x, *block)
        out = {}
        for i in (2, 1, 0):
            x, h, n, mean, rstd, y = saved[i]
            if i == 1:  # grad (x2's) also reaches x1 through the residual sum: keep it
                ga = _LEAKY_BACKWARD(grad, y, SLOPE, True)
            else:
                ga = _LEAKY_BACKWARD_INTO(grad, y, SLOPE, True, grad_input=grad)
            out[f"b{i}"] = ga.sum(1, keepdim=True)
            out[f"g{i}"] = (ga * n).sum(1, keepdim=True)
            gh = torch.ops.aten.native_layer_norm_backward(
                ga * v[f"g{i}"].unsqueeze(1), h, [h.shape[-1]], mean, rstd, None, None,
                [True, False, False])[0]
            out[f"w{i}"] = x.transpose(1, 2).bmm(gh)
            if i == 1:
                grad = gh.bmm(v["w1"].transpose(1, 2)).add_(grad)
            elif i == 2:
                grad = gh.bmm(v["w2"].transpose(1, 2))
        for name, (offset, shape) in p.layout.items():
            size = math.prod(shape)
            flat[:, offset:offset + size].copy_(out[name].reshape(-1, size))

    def _no_grad(self, v: dict[str, torch.Tensor], z: torch.Tensor) -> torch.Tensor:
        """The same forward without autograd, each block's affine, activation and residual
        sum written into the block's layer-norm output: two new tensors per block instead
        of five (most of the generator's rows are drawn for the teachers and votes without
        gradients). The same kernels on the same operands: the same bits. Where
        :mod:`raudit.generators.nn.native` reproduces them (checked per row width against
        torch, bit for bit), the layer norm, affine, activation and residual sum of a block
        are one pass over its GEMM's output instead (1.3-1.4x less CPU per block at 64 wide)."""
        x = z
        for i in range(3):
            h = linear(x, v[f"w{i}"])
            res = x if i < 2 else None  # block(x) + x
            how = self._native(h, res, v[f"g{i}"])
            if how is not None:  # the four ATen calls below in one pass, the same bits
                native.ln_leaky_block(h, res, v[f"g{i}"], v[f"b{i}"], SLOPE, how)
            else:
                native.reference_block(h, res, v[f"g{i}"], v[f"b{i}"], self.act_)
            x = h
        return x

    def _native(self, h: torch.Tensor, res: torch.Tensor | None, gamma: torch.Tensor):
        """How :func:`native.ln_leaky_block` gives this block's bits here, or None (torch)."""
        if (self.binary or h.dtype != torch.float64 or h.device.type != "cpu"
                or not h.is_contiguous() or gamma.stride(-1) != 1
                or (res is not None and not res.is_contiguous())):
            return None
        return native.block_ok(h.shape[-1], SLOPE)
