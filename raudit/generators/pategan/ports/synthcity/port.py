"""`synthcity`: the synthcity library's PATE-GAN (v0.2.10, PyTorch), ported faithfully.

Source read: github.com/vanderschaarlab/synthcity ``plugins/privacy/plugin_pategan.py``
(the inner ``PATEGAN`` class the study instantiates), ``core/models/{tabular_gan,gan,mlp,
layers,factory,feature_encoder,tabular_encoder}.py``, ``utils/samplers.py``, and the
study's harness copy ``pate_gans/synthcity/{synthcity_audit,gan}.py`` (spec section 3).

Outer iteration, per model, while eps_hat < eps and it < max_iter:

1. Teachers: the row permutation is RE-DRAWN; teacher t gets rows perm[t s:(t+1) s]
   (s = int(N/k)), of which the study's harness keeps a random ``batch`` (label 1),
   plus ``batch`` generated rows (label 0, conditionals from ``sample_conditional``);
   a fresh ``LogisticRegression(solver="sag", max_iter=10000)`` (L2, C = 1) is fit.
   Over a run every teacher sees almost every record.
2. ``epochs`` (generator_n_iter = 10) "epochs", each ONE loader batch in the study's
   harness (:mod:`cond` explains which rows the loader hands out): one critic step
   and one generator step.
   * Critic (WGAN-GP, trained on REAL data): fakes G([z, c]) are labelled by the
     teachers, ((n1 + Lap(1/lambda)) / (k + 1e-8)) > 0.5; if at least half the batch
     is labelled real the labels become all 0 AND the accountant is not charged
     (uncharged queries); otherwise every sample charges it. errD = -mean(D(real) and
     D(fakes labelled 1)) + mean(D(fakes labelled 0)) + 10 * GP; Adam lr 1e-4, betas
     (0.9, 0.999), weight decay 1e-3, gradient-norm clip 1.
   * Generator: -mean(D(G([z, c]))) + the conditional cross-entropy penalty; Adam as
     the critic's.
3. eps_hat = min_l (alpha_l - log delta) / l with synthcity's accountant (L = 100,
   ``exp(2 lambda lidx + 1)`` index bug, clipped to [0, 2 lambda^2 (l)(l+1)]), computed
   after the 10 epochs (overshoot); delta is forced to 1/(N sqrt N) whatever is passed.

Networks: :mod:`~raudit.generators.pategan.ports.synthcity.nets` (latent 100, z ~ N(0, 1),
dense skip connections, Gumbel-softmax heads). Encoding:
:mod:`~raudit.generators.pategan.ports.synthcity.encoding`. The loop above:
:mod:`~raudit.generators.pategan.ports.synthcity.training`.

Deviations, each an option whose default is the upstream behaviour (as the study ran it):

==================  ==============  ==================================================
option              default         alternative
==================  ==============  ==================================================
accountant          "synthcity-     any raudit accountant ("paper", "fixed-threshold")
                    index-bug"
early_return        True            False (always label with the votes and charge them)
delta_rule          "forced"        "given" (use the delta passed, default 10^-5)
teacher_data        "batch"         "partition" (upstream plugin: all s rows + s fakes)
integers            "astype"        "round" (pandas astype truncates toward zero)
==================  ==============  ==================================================

Presets: ``default`` is the study's harness (k = max(2, N // 1000), batch min(200, N // k),
at most 1,000 iterations, the class default); ``paper`` is batch 64 and no iteration cap.

Not reproduced: the upstream plugin's full-epoch loader (every epoch one pass over the
loader; the study's harness, ported here, takes one batch per epoch); the ``!= 0``
filters on critic outputs (they drop outputs that are exactly 0.0, a measure-zero event).
"""

from __future__ import annotations

from raudit.accountants import VARIANTS
from raudit.errors import ConfigError
from raudit.generators.base import group_tables
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.pategan.core.options import (PRESETS, check_pate_options, choice, pate_schedule,
                                                    positive)
from raudit.generators.pategan.ports.refit import CAPABILITIES
from raudit.generators.pategan.ports.synthcity.encoding import SynthcityEncoder, column_kinds
from raudit.generators.pategan.ports.synthcity.options import SynthcityOptions
from raudit.generators.pategan.ports.synthcity.training import SynthcityHP, train_synthcity
from raudit.privacy import STUDY_DELTA


class SynthcityPateGan(BatchedGenerator):
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)
    name = "synthcity"
    description = "synthcity's PATE-GAN: LR teachers, critic on real data (faithful port, bugs on)"
    default_delta = None  # forced to 1/(N sqrt N) per model

    presets = PRESETS
    capabilities = CAPABILITIES  # its votes, for --threat-model transcript

    Options = SynthcityOptions

    def __init__(self, options: SynthcityOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the plugin's behaviour) with ``overrides`` by name, the
        form -o KEY=VALUE and campaign YAML arrive in."""
        o = SynthcityOptions.build(options, overrides, self.name)
        check_pate_options(preset, o.lam, o.orders, o.batch, o.max_iter)
        for name in ("epochs", "latent"):
            positive(name, getattr(o, name), integer=True)
        positive("teachers", o.teachers, integer=True, allow_none=True)
        positive("lr", o.lr)
        positive("clip", o.clip)
        if not (isinstance(o.weight_decay, (int, float)) and o.weight_decay >= 0 and o.gp >= 0):
            raise ConfigError("weight_decay and gp must be numbers >= 0")
        if not isinstance(o.early_return, bool):  # strict, as the plugin's flag
            raise ConfigError(f"early_return must be true or false, got {o.early_return!r}")
        choice("accountant", o.accountant, tuple(VARIANTS.names()))  # the registry's set
        super().__init__(preset=preset, device=device, dtype=dtype, **o.as_dict())

    def resolve(self, n_rows: int, n_cols: int) -> SynthcityHP:
        o = self.options
        cap = 64 if self.preset == "paper" else 200
        k, batch, max_iter = pate_schedule(self.preset, n_rows, teachers=o["teachers"], batch=o["batch"],
                                           max_iter=o["max_iter"], batch_cap=cap, iteration_cap=1000)
        return SynthcityHP(k, batch, o["lam"], o["orders"], max_iter, o["lr"], o["epochs"],
                           float(o["weight_decay"]), float(o["clip"]), float(o["gp"]), o["latent"])

    def delta_rule(self) -> float | str:
        """Upstream forces delta = 1/(N sqrt N) whatever is passed (``delta_rule="forced"``);
        declaring it lets train and audit record, and bound with, the delta it trains with."""
        return "1/(N sqrt N)" if self.options["delta_rule"] == "forced" else STUDY_DELTA

    def encoder(self, seed: int) -> SynthcityEncoder:
        return SynthcityEncoder(integers=self.options["integers"])

    def fit_many(self, tables, *, epsilon, delta=None, seeds, columns=None, observer=None,
                 progress=None, train_options=None):
        """Tables train together only when they encode to the same layout (one-hot widths
        come from the records, so neighbouring tables may differ)."""
        groups = group_tables(tables, seeds, epsilon=epsilon, delta=delta,
                              allow_nan=self.allow_nan, key=column_kinds)
        out: list = [None] * len(tables)
        for idx in groups.values():
            fitted = super().fit_many([tables[i] for i in idx], epsilon=epsilon, delta=delta,
                                      seeds=[seeds[i] for i in idx], columns=columns,
                                      observer=observer, progress=progress, train_options=train_options)
            for i, f in zip(idx, fitted):
                out[i] = f
        return out

    def _pack(self, tables, encoders, seeds, device) -> TrainBatch:
        self._layout = encoders[0]  # the loop needs the block layout (the group shares it)
        return super()._pack(tables, encoders, seeds, device)

    def train(self, batch: TrainBatch, hp: SynthcityHP, *, epsilon, delta, observer, progress) -> Trained:
        enc = self._layout
        return train_synthcity(batch, hp, enc.discrete_blocks(), enc.softmax_blocks(),
                               options=self.options, epsilon=epsilon, delta=delta,
                               observer=observer, progress=progress)


