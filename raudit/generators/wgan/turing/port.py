"""`turing`: reprosyn's PATE-GAN (Alan Turing Institute; TensorFlow), derived from `original`.

Spec section 4. The same discriminator-only WGAN-GP as `original` (see
:mod:`raudit.generators.wgan.gp`) with its own scaling bug, sigma bug and gradient-penalty weight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from raudit.data.dataset import ColumnMeta
from raudit.generators.wgan.original.port import ScaleEncoder
from raudit.generators.wgan.turing.options import TuringOptions
from raudit.generators.wgan.gp import WganGpGenerator


@dataclass
class TuringEncoder(ScaleEncoder):
    """reprosyn's encoding: x' = (x - min) / (max + 1e-8) (``denominator="max"``, the bug).

    Decoding is x * (max + 1e-8) + min with no clipping, so a sigmoid output in
    (0, 1) decodes to (min, min + max): past the column's max when min > 0, short
    of it when min < 0 (and the data encode outside [0, 1] then). Integer-dtype
    columns are truncated (``integers="truncate"``: astype(int)), which turns a
    0/1 label into 0 unless the sigmoid saturates.

    ``one_hot``: columns whose ColumnMeta kind is "categorical" become one-hot
    blocks decoded by argmax (reprosyn's CATEGORICAL path; the study's tables have
    no category dtype, so it is off by default). ``extra_column``: a constant-zero
    column appended after the data, as the study's harness builds it (it sizes the
    network with ``X_shape[1] + 1`` columns but fills only ``X_shape[1]``).
    """

    denominator: str = "max"
    integers: str = "truncate"
    one_hot: bool = False
    extra_column: bool = False

    def fit(self, df: pd.DataFrame, columns: tuple[ColumnMeta, ...] | None) -> "TuringEncoder":
        super().fit(df, columns)
        meta = {c.name: c for c in columns or ()}
        self.cats: dict[int, np.ndarray] = {}
        if self.one_hot:
            for j, name in enumerate(self.names):
                c = meta.get(str(name))
                if c is not None and c.kind == "categorical":
                    self.cats[j] = np.asarray(c.categories or np.unique(df[name]), dtype=float)
        return self

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        scaled = super().transform(df)
        raw = df.to_numpy(dtype=float)
        blocks = []
        for j in range(len(self.names)):
            if j in self.cats:
                blocks.append((raw[:, j:j + 1] == self.cats[j][None, :]).astype(float))
            else:
                blocks.append(scaled[:, j:j + 1])
        if self.extra_column:
            blocks.append(np.zeros((len(df), 1)))
        return np.concatenate(blocks, axis=1)

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        x = np.asarray(x, dtype=float)
        y = np.empty((x.shape[0], len(self.names)))
        pos = 0
        for j in range(len(self.names)):
            if j in self.cats:
                width = len(self.cats[j])
                y[:, j] = self.cats[j][np.argmax(x[:, pos:pos + width], axis=1)]
                pos += width
            else:
                y[:, j] = x[:, pos] * self.scale[j] + self.lo[j]
                pos += 1
        return self._frame(y)  # the extra column, if any, is dropped here


class TuringPateGan(WganGpGenerator):
    """reprosyn's PATE-GAN, bugs included; every deviation is an option (faithful default).

    ============================  =====================  =========================================
    deviation from the paper      option                 faithful default (alternative)
    ============================  =====================  =========================================
    no PATE: one critic, k steps  ``teachers``           max(2, N // 1000) (the study's harness)
    each step reads ALL the data  ``partition``          "none" ("disjoint")
    label noise is Gaussian       ``noise``              "gaussian" ("laplace", same scale)
    sigma uses 1.25 * 10**delta   ``delta_bug``          "power" ("correct": sqrt(2 ln(1.25/delta)))
    scaling divides by max        ``encoding_bug``       True (False: max - min, as original)
    integers truncated            ``integers``           "truncate" ("round": the study's audit
                                                         version; "none")
    bounds read off the data      ``bounds``             "data" (the study's create_metadata;
                                                         "metadata": public ColumnMeta bounds)
    GP weight = num_teachers      ``gp_coef``            None = k (a number overrides it)
    output rows shuffled          ``shuffle``            True
    categoricals one-hot          ``one_hot``            False (no category columns in the study)
    harness's extra zero column   ``extra_column``       False (True: the study's X_shape + 1)
    fixed iteration count         ``max_iter``           100 (reprosyn's n_iters)
    ============================  =====================  =========================================

    Fixed as upstream: z ~ U(-1,1), z_dim = int(d/4) (at least 1), G {d, d, d}
    tanh/tanh/sigmoid, D {d, d, 1} ReLU/ReLU/linear, init N(0, 2/fan_in), Adam lr
    1e-4 betas (0.5, 0.999), no clipping on decode.

    Presets: ``default`` is the study's audit harness (batch min(128, N // k));
    ``paper`` uses table 3's first column where turing has the knob: batch 64 and
    generator widths {d, d/2, d}; iterations stay ``max_iter`` (no accountant).
    """

    name = "turing"
    description = "reprosyn (Turing) PATE-GAN: one WGAN-GP critic, scaling and sigma bugs, no PATE"
    default_max_iter = 100
    default_gp_coef = None  # the number of critic steps
    delta_bugs = ("power", "correct")
    shuffle_output = True

    Options = TuringOptions

    def __init__(self, options: TuringOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: reprosyn's behaviour) with ``overrides`` by name, the form
        -o KEY=VALUE and campaign YAML arrive in."""
        opts = TuringOptions.build(options, overrides, self.name).as_dict()
        self._check({"preset": preset, **opts})
        super().__init__(preset=preset, device=device, dtype=dtype, **opts)

    def encoder(self, seed: int) -> TuringEncoder:
        o = self.options
        return TuringEncoder(denominator="max" if o["encoding_bug"] else "range",
                             integers=o["integers"], bounds=o["bounds"], one_hot=o["one_hot"],
                             extra_column=o["extra_column"])
