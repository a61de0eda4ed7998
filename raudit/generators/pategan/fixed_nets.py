"""Network families for ``fixed`` (``-o arch=...``): the privacy mechanism is the same
for every one; only the networks that turn noisy labels into a generator change.

* ``mlp``: generator {z=d, 2d, 2d, d} ReLU, student {d, d, 1}, teachers {d, d/2, 1}.
* ``borealis``: Borealis AI's widths (z = d/4, generator {z, 2z, d}, teachers and
  student {d, (d-1)/2, 1}, biases 0.01), without its train/sample noise mismatch.
* ``smartnoise``: snsynth's residual LayerNorm generator (latent 64) and its
  three-layer LeakyReLU discriminators.

In the conditional mode the generator's last input coordinate is the public label
(:class:`~raudit.generators.pategan.fixed.LabelledNets`), so ``z_dim`` counts it, and
the generator writes the d - 1 feature columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from raudit.generators.nn.stacked import MLP
from raudit.generators.pategan.borealis.port import borealis_z_dim
from raudit.generators.pategan.smartnoise.nets import ResidualGenerator, discriminator

SMARTNOISE_LATENT = 64


@dataclass(frozen=True)
class Arch:
    z_dim: Callable[[int, int], int]  # (columns, conditional 0/1) -> generator input width
    build: Callable[[int, int, int, str], dict]

    def nets(self, d: int, z: int, conditional: int, output: str) -> dict:
        """generator / student / teacher for a d-column table; the generator writes d - conditional."""
        return self.build(d, z, d - conditional, output)


def _mlp(d: int, z: int, out: int, output: str) -> dict:
    return dict(generator=MLP([z, 2 * d, 2 * d, out], ["relu", "relu", output]),
                student=MLP([d, d, 1], ["relu", "sigmoid"]),
                teacher=MLP([d, max(1, d // 2), 1], ["relu", "sigmoid"]))


def _borealis(d: int, z: int, out: int, output: str) -> dict:
    hidden = max(1, (d - 1) // 2)
    return dict(generator=MLP([z, 2 * z, out], ["relu", output], bias=0.01),
                student=MLP([d, hidden, 1], ["relu", "sigmoid"], bias=0.01),
                teacher=MLP([d, hidden, 1], ["relu", "sigmoid"], bias=0.01))


def _smartnoise(d: int, z: int, out: int, output: str) -> dict:
    # snsynth's generator ends in LayerNorm + LeakyReLU whatever ``output`` says
    return dict(generator=ResidualGenerator(z, out), student=discriminator(d),
                teacher=discriminator(d))


ARCHS = {
    "mlp": Arch(lambda d, c: d, _mlp),
    "borealis": Arch(lambda d, c: borealis_z_dim(d) + c, _borealis),
    "smartnoise": Arch(lambda d, c: SMARTNOISE_LATENT, _smartnoise),  # residual: input = latent
}
