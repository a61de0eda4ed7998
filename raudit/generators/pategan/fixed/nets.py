"""Network families for ``fixed`` (``-o arch=...``): the privacy mechanism is the same
for every one; only the networks that turn noisy labels into a generator change.

* ``mlp``: generator {z=d, 2d, 2d, d} ReLU, student {d, d, 1}, teachers {d, d/2, 1}.
* ``borealis``: Borealis AI's widths (z = d/4, generator {z, 2z, d}, teachers and
  student {d, (d-1)/2, 1}, biases 0.01), without its train/sample noise mismatch.
* ``smartnoise``: snsynth's residual LayerNorm generator (latent 64) and its
  three-layer LeakyReLU discriminators.

In the conditional mode the generator's last input coordinate is the public label
(:class:`LabelledNets`), so ``z_dim`` counts it, and
the generator writes the d - 1 feature columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import torch

from raudit.errors import ConfigError
from raudit.generators.labelled import with_label
from raudit.generators.nn.stacked import MLP
from raudit.generators.pategan.fixed import grad as fixed_grad
from raudit.generators.pategan.ports.borealis.port import borealis_z_dim
from raudit.generators.pategan.core.nets import PateNets
from raudit.generators.pategan.ports.smartnoise.nets import ResidualGenerator, discriminator

SMARTNOISE_LATENT = 64
Z = "normal"  # the generator's latent noise, N(0, 1), in training and sampling alike


@dataclass(frozen=True)
class Arch:
    z_dim: Callable[[int, int], int]  # (columns, conditional 0/1) -> generator input width
    build: Callable[[int, int, int], dict]

    def nets(self, d: int, z: int, conditional: int) -> dict:
        """generator / student / teacher for a d-column table; the generator writes d - conditional."""
        return self.build(d, z, d - conditional)


def _mlp(d: int, z: int, out: int) -> dict:
    return dict(generator=MLP([z, 2 * d, 2 * d, out], ["relu", "relu", "linear"]),
                student=MLP([d, d, 1], ["relu", "sigmoid"]),
                teacher=MLP([d, max(1, d // 2), 1], ["relu", "sigmoid"]))


def _borealis(d: int, z: int, out: int) -> dict:
    hidden = max(1, (d - 1) // 2)
    return dict(generator=MLP([z, 2 * z, out], ["relu", "linear"], bias=0.01),
                student=MLP([d, hidden, 1], ["relu", "sigmoid"], bias=0.01),
                teacher=MLP([d, hidden, 1], ["relu", "sigmoid"], bias=0.01))


def _smartnoise(d: int, z: int, out: int) -> dict:
    # snsynth's generator ends in LayerNorm + LeakyReLU
    return dict(generator=ResidualGenerator(z, out), student=discriminator(d),
                teacher=discriminator(d))


class JointCritic(MLP):
    """A critic (teacher or student) whose first layer has one weight block per label class:
    rows (..., d) with the 0/1 label last enter as [x * y, x * (1 - y), y] (2d - 1 columns).

    Why: with the rows as they are, the label is one input among d, and a teacher that
    learnt 50 real rows judges the features' marginal and barely the label-feature
    relation; a conditional generator then pairs its labels with features arbitrarily
    (Setting B AUROCs from 0.01 to 0.89 across seeds with exact votes, lab/learning.md).
    Per-class weights make that relation first-order. A fixed, public map of each row:
    the privacy mechanism does not change."""

    def __init__(self, widths: list[int], activations: list[str], **kw):
        d = widths[0]
        super().__init__([2 * d - 1] + list(widths[1:]), activations, **kw)

    def joint(self, x: torch.Tensor) -> torch.Tensor:
        """The first layer's input: rows (..., d) -> [x * y, x * (1 - y), y] (2d - 1)."""
        y, f = x[..., -1:], x[..., :-1]
        return torch.cat([f * y, f * (1 - y), y], -1)

    def __call__(self, p, x, **kw):
        return super().__call__(p, self.joint(x), **kw)

    # LocalTeachers' fast path (pategan/fixed/grad.py): the same bits as autograd and as
    # ``__call__(..., shared=k)``, the shared first layer ``first`` made once per teacher update
    def shared_first(self, p, k: int, device: torch.device) -> tuple | None:
        """The permuted first layer for a batch shared by k teachers, or None (no fast path)."""
        return fixed_grad.shared_first(p, k) if fixed_grad.supported(self, device) else None

    def shared_forward(self, p, x, k: int, first: tuple, *, logits: bool = False):
        return fixed_grad.forward(self, p, self.joint(x), k, first, logits=logits)

    def teacher_grad(self, p, real: tuple, fake: tuple, k: int, first: tuple) -> torch.Tensor:
        """The joint step's gradient; ``real``/``fake``: (rows, d(loss)/d(per-row BCE))."""
        return fixed_grad.teacher_grad(self, p, (self.joint(real[0]), real[1]),
                                       (self.joint(fake[0]), fake[1]), k, first)


class OffsetMLP(MLP):
    """A generator whose output is ``offset`` + the MLP's (``fixed -o output_offset``).

    Why: a linear output layer starts near 0, the encoding's lower bound, and on a table
    whose rows sit mid-encoding (epileptic: mean 0.498) the fakes start far from the data;
    the teachers reject them all and the generator never gets a direction. A public
    constant moves the start (0.5: the centre of the bounds, the binned DP median with
    ``bounds_centre``); nothing is read from the records."""

    def __init__(self, widths: list[int], activations: list[str], *, offset: float, **kw):
        super().__init__(widths, activations, **kw)
        self.offset = float(offset)

    def __call__(self, p, x, **kw):
        return super().__call__(p, x, **kw) + self.offset


def offset(nets: dict, value: float) -> dict:
    """``output_offset``: the generator as an :class:`OffsetMLP` (plain MLPs only)."""
    net = nets["generator"]
    if type(net) is not MLP:
        raise ConfigError("output_offset needs an MLP generator (arch=mlp or arch=borealis)")
    return dict(nets, generator=OffsetMLP(net.widths, net.activations, offset=value,
                                          bias=net.bias, init=net.init))


def joint_critics(nets: dict) -> dict:
    """``critic=joint``: the student and the teachers as :class:`JointCritic` (plain MLPs only)."""
    out = dict(nets)
    for name in ("student", "teacher"):
        net = nets[name]
        if type(net) is not MLP:
            raise ConfigError("critic=joint needs an MLP critic (arch=mlp or arch=borealis)")
        out[name] = JointCritic(net.widths, net.activations, bias=net.bias, init=net.init)
    return out


ARCHS = {
    "mlp": Arch(lambda d, c: d, _mlp),
    "borealis": Arch(lambda d, c: borealis_z_dim(d) + c, _borealis),
    "smartnoise": Arch(lambda d, c: SMARTNOISE_LATENT, _smartnoise),  # residual: input = latent
}


class LabelledNets(PateNets):
    """A generator conditioned on its label: the last z coordinate becomes a label drawn
    from Bernoulli(``prior``) (a public constant: no record is read), fed to the network
    next to the other z coordinates and written as the row's label (encoded 0/1, the
    label's public bounds). Teachers and student still judge whole rows."""

    def __init__(self, prior: float, z_kind: str, **nets):
        super().__init__(**nets)
        self.prior, self.z_kind = prior, z_kind

    def generate(self, p, z: torch.Tensor) -> torch.Tensor:
        return with_label(lambda zy: self.generator(p, zy), z, self.prior, self.z_kind)
