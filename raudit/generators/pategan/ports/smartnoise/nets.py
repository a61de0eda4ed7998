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

import torch

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
