"""`borealis`: Borealis AI's private-data-generation PATE-GAN (PyTorch, float64), ported faithfully.

Source read: github.com/BorealisAI/private-data-generation ``models/pate_gan.py``,
``utils/architectures.py``, ``utils/helper.py`` (commit 737df84, the one the study
cites), and the study's harness around it (spec section 5).

What the port reproduces, per iteration: 5 rounds in which every teacher takes
the first batch of a freshly shuffled loader over its own contiguous slice of
the table (label 1) plus a fresh generated batch (label 0) and one Adam step;
5 student steps on generated batches labelled 1[votes + Lap(1/lambda) > k/2],
each charged to the accountant; one generator step on BCE(S(G(z)), 1). eps_hat
is computed after the iteration, so the last iteration overshoots eps.

Networks (din = d - 1 feature columns; the label is the last column and goes
through the networks like a feature in the unconditional mode the study runs):
z_dim = din//4 + 1 if din % 4 == 0 else din//4 (at least 1); generator
Linear(z, 2z) -> ReLU -> Linear(2z, d), linear output; teachers and student
Linear(d, din//2) -> ReLU -> Linear(., 1) -> Sigmoid; Xavier-uniform weights,
biases 0.01; Adam lr 1e-4.

Deviations, each a constructor option whose default is the upstream behaviour:

==================  =================  ============================================
option              default            alternative
==================  =================  ============================================
accountant          "missing-log"      any raudit accountant ("paper" restores the log)
check               "after"            "top" (no overshoot past the floor check)
generation_noise    "normal"           "uniform" (train and generate alike: U(0,1))
partition           "contiguous"       "shuffled" (shuffle once, as the paper)
aggregation         "threshold"        "argmax" (the analysed two-noise mechanism)
bounds              "data"             "metadata" (public bounds where declared)
lam                 1e-4 (upstream)    the study's average-case audits use 1e-3
==================  =================  ============================================

Also: ``teacher_fakes="per-teacher"`` (upstream draws a fresh fake batch inside
the teacher loop; "shared" is the engine's faster one-batch-per-round),
``teacher_update="joint"`` (upstream: one Adam step on real + fake; "split" is the
study's audit copy, which steps after each), ``generator_loss="non-saturating"``,
``integers="round"`` (raudit's schema: integer and binary columns come back
integral; upstream returns floats; "none" keeps them).

Preprocessing (the study's addition; upstream expects pre-scaled data):
MinMaxScaler(clip=True) fitted on the training table (non-private bounds), the
generated rows clipped to [0, 1] and inverted. A constant column is scaled by 1,
as scikit-learn does, so it decodes to [min, min + 1].

Not reproduced: the conditional mode (class ratios of the real labels fed to the
generator; the study runs unconditional). Upstream crashes when a partition is
smaller than the batch (label/output size mismatch in BCELoss); the port uses the
short batch, as the DataLoader hands it out. BCE is computed on logits, not on
sigmoid outputs with BCELoss's log clamp at -100 (equal unless saturated).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from raudit.data.dataset import ColumnMeta
from raudit.generators.nn.stacked import MLP
from raudit.generators.pategan.ports.borealis.options import BorealisOptions
from raudit.generators.pategan.core.encoding import MinMaxEncoder
from raudit.generators.pategan.core.nets import PateNets
from raudit.generators.pategan.ports.base import PortPateGan


class BorealisEncoder(MinMaxEncoder):
    """scikit-learn's MinMaxScaler(clip=True): a zero range is replaced by 1 (``_handle_zeros_in_scale``)."""

    def fit(self, df: pd.DataFrame, columns: tuple[ColumnMeta, ...] | None) -> "BorealisEncoder":
        super().fit(df, columns)
        self.hi = np.where(self.hi == self.lo, self.lo + 1.0, self.hi)
        return self


def borealis_sizes(rows: torch.Tensor, k: int) -> torch.Tensor:
    """Teacher t owns rows int(t N/k) .. int((t+1) N/k); the last takes the remainder. (M,) -> (M, k)."""
    t = torch.arange(k + 1, device=rows.device)[None, :]
    bounds = (t * rows[:, None]) // k
    return bounds[:, 1:] - bounds[:, :-1]


def borealis_z_dim(d: int) -> int:
    din = d - 1
    return max(1, din // 4 + 1 if din % 4 == 0 else din // 4)


class BorealisPateGan(PortPateGan):
    name = "borealis"
    description = "Borealis AI private-data-generation PATE-GAN (faithful port, bugs on)"

    Options = BorealisOptions

    def __init__(self, options: BorealisOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the repository's behaviour) with ``overrides`` by name, the
        form -o KEY=VALUE and campaign YAML arrive in."""
        opts = BorealisOptions.build(options, overrides, self.name).as_dict()
        super().__init__(preset=preset, device=device, dtype=dtype, **opts)

    def encoder(self, seed: int) -> BorealisEncoder:
        return BorealisEncoder(eps=0.0, clip=True, integers=self.options["integers"],
                               bounds=self.options["bounds"])

    def z_dim(self, d: int) -> int:
        return borealis_z_dim(d)

    def nets(self, d: int) -> PateNets:
        z, hidden = borealis_z_dim(d), (d - 1) // 2
        return PateNets(
            generator=MLP([z, 2 * z, d], ["relu", "linear"], bias=0.01),
            student=MLP([d, hidden, 1], ["relu", "sigmoid"], bias=0.01),
            teacher=MLP([d, hidden, 1], ["relu", "sigmoid"], bias=0.01),
        )

    def partition_sizes(self, rows: torch.Tensor, k: int) -> torch.Tensor:
        return borealis_sizes(rows, k)
