"""`original`: the PATE-GAN code released by the paper's authors (2018/2019, TensorFlow 1).

Spec section 1. The release has no PATE at all: one WGAN-GP critic trained on
every row with Gaussian-noised real/fake labels (see :mod:`raudit.generators.wgan.gp`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from raudit.data.dataset import ColumnMeta
from raudit.generators.batch_types import Encoder
from raudit.generators.wgan.original.options import OriginalOptions
from raudit.generators.wgan.gp import WganGpGenerator


@dataclass
class ScaleEncoder(Encoder):
    """Per-column min-max scaling as original and turing write it; never clipped.

    x' = (x - min) / (span + eps), decoded x * (span + eps) + min, where span is
    max - min (``denominator="range"``, original) or max (``"max"``, turing's bug).
    ``integers``: integer-dtype columns come back rounded ("round", the study's
    harness), truncated ("truncate", numpy's astype(int)) or as floats ("none").
    ``bounds``: "data" reads min/max off the training table (both upstream codes);
    "metadata" takes the ColumnMeta bounds of the columns marked public.
    ``label_raw``: the label (last column) passes unscaled (original's conditional mode).
    """

    shareable = True  # a function of (table, columns): no seed, nothing mutates it

    denominator: str = "range"
    eps: float = 1e-8
    integers: str = "round"
    bounds: str = "data"
    label_raw: bool = False

    def fit(self, df: pd.DataFrame, columns: tuple[ColumnMeta, ...] | None) -> "ScaleEncoder":
        x = df.to_numpy(dtype=float)
        self.names, self.dtypes = list(df.columns), list(df.dtypes)
        lo, hi = x.min(axis=0), x.max(axis=0)
        if self.bounds == "metadata" and columns:
            meta = {c.name: c for c in columns}
            for j, name in enumerate(self.names):
                c = meta.get(str(name))
                if c is not None and c.bounds == "public":
                    lo[j], hi[j] = c.lower, c.upper
        self.lo = lo
        self.scale = (hi - lo if self.denominator == "range" else hi) + self.eps
        if self.label_raw:
            self.lo[-1], self.scale[-1] = 0.0, 1.0
        return self

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        return (df.to_numpy(dtype=float) - self.lo) / self.scale

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        y = np.asarray(x, dtype=float) * self.scale + self.lo
        return self._frame(y)

    def _frame(self, y: np.ndarray) -> pd.DataFrame:
        """Decoded values as a table in the training schema."""
        out = {}
        for j, (name, dtype) in enumerate(zip(self.names, self.dtypes)):
            col = y[:, j]
            integral = pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
            if integral and self.integers != "none":
                col = (np.round(col) if self.integers == "round" else np.trunc(col)).astype(np.int64)
                out[name] = col.astype(bool) if pd.api.types.is_bool_dtype(dtype) else col.astype(dtype)
            else:
                out[name] = col.astype(dtype) if not integral else col
        return pd.DataFrame(out, columns=self.names)


class OriginalPateGan(WganGpGenerator):
    """The authors' release, bugs included; every deviation is an option (faithful default).

    ============================  =====================  =========================================
    deviation from the paper      option                 faithful default (alternative)
    ============================  =====================  =========================================
    no PATE: one critic, k steps  ``teachers``           max(2, N // 1000) critic steps/iteration
    each step reads ALL the data  ``partition``          "none" ("disjoint": shuffle once, step t
                                                         draws from chunk t)
    label noise is Gaussian       ``noise``              "gaussian" ("laplace", same scale)
    sigma uses 10 XOR 5 = 15      ``delta_bug``          "xor" ("correct": sqrt(2 ln(1.25/delta)))
    bounds read off the data      ``bounds``             "data" ("metadata": public ColumnMeta)
    conditional mode (2019)       ``conditional``        False (True: G([z, y]), D([x, y]); samples
                                                         reuse the real training labels unchanged)
    WGAN-GP instead of BCE        ``gp_coef``            10
    integer columns               ``integers``           "round" (study's harness; "none": the
                                                         raw floats upstream returns; "truncate")
    fixed iteration count         ``max_iter``           10,000 (study audits: 1,000 and 100)
    ============================  =====================  =========================================

    Fixed as upstream: z ~ U(-1,1), z_dim = int(d/4) (at least 1), G widths
    {d, d, d} tanh/tanh/sigmoid, D widths {d, d, 1} ReLU/ReLU/linear, init
    N(0, 2/fan_in), Adam lr 1e-4 betas (0.5, 0.999), min-max scaling with +1e-8.
    In conditional mode d counts the features only (the label is y).

    Presets: ``default`` is the study's harness (batch min(128, N // k));
    ``paper`` takes table 3's first column where original has the knob: batch
    64 and generator widths {d, d/2, d} (``generator_widths``); there is no
    accountant, so the iteration count stays ``max_iter``.
    """

    name = "original"
    description = "PATE-GAN authors' release: one WGAN-GP critic with noisy labels, no PATE"
    default_max_iter = 10_000
    default_gp_coef = 10.0
    delta_bugs = ("xor", "correct")

    Options = OriginalOptions

    def __init__(self, options: OriginalOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the release's behaviour) with ``overrides`` by name, the
        form -o KEY=VALUE and campaign YAML arrive in."""
        opts = OriginalOptions.build(options, overrides, self.name).as_dict()
        self._check({"preset": preset, **opts})
        super().__init__(preset=preset, device=device, dtype=dtype, **opts)

    def encoder(self, seed: int) -> ScaleEncoder:
        o = self.options
        return ScaleEncoder(denominator="range", integers=o["integers"], bounds=o["bounds"],
                            label_raw=o["conditional"])
