"""`gpate`: G-PATE (Long et al., NeurIPS 2021) on the batched engine.

Teacher discriminators on disjoint partitions (non-private); the generator never sees a
teacher's verdict, only a private aggregate of their gradients w.r.t. its records
(DPGradAgg: random projection, clipping, binning, Confident-GNMax per coordinate), and
regresses G(z) onto G(z) + that aggregate. Accounting: the data-dependent RDP of
Confident-GNMax (``accountant="gnmax"``), stopping before the step that would exceed eps;
``accountant="gnmax-independent"`` charges the data-independent curves instead.

Reference defaults (the authors' TensorFlow code, image-only): Adam lr 1e-3, beta1 0.5,
orders [1.1, 2..199], clip c = 1e-4, B = 10 bins, T = 0.5 k, delta 10^-5; MNIST at eps = 1:
4,000 teachers, sigma1 = 3000, sigma2 = 1000, projection to 10 dimensions.

``config="tabular"`` (no public configuration exists; ours, see the README): PATE-GAN's
networks (:mod:`.nets`), projection to 5 dimensions (the paper), and the reference MNIST
run's proportions: k = max(2, N // 15) teachers (15 rows each), sigma1 = 0.75 k,
sigma2 = 0.25 k, T = 0.5 k; batch 30 generated records, teacher batch min(30, N // k), at
most 10,000 iterations. ``config="image"``: MNIST (784 pixels + label), the small DCGAN of
:mod:`.nets`, projection to 10 dimensions, the same proportions.

Why these scale with k: with sigma proportional to k, one query's data-independent RDP is
about 17 alpha / k^2, so the number of queries eps can pay for grows as k^2, i.e. as N^2
at a fixed number of rows per teacher. The data-dependent bound only beats that where
the teachers nearly agree.

``conditional=True`` (off by default; image: the label head is dropped): the label is drawn from
Bernoulli(``label_prior``), a public constant, and fed to the generator, which writes
the other columns, so a synthetic table always has both classes
(:mod:`raudit.generators.labelled`; why: lab/learning.md). ``classes=10`` (image and
conditional only; the ``mnist10`` dataset): the label is the digit, uniform over the ten,
fed one-hot to the generator and to the teachers (the G-PATE authors' conditioning).
``label_input="one-hot"`` (binary, image, conditional): the 0/1 label enters the generator as
two one-hot inputs; the default, one 0/1 value, is an extra bias only class 1 has, which drifts
class-1 images further under label-blind teacher gradients (measured: lab/learning.md).

``config="image"`` defaults to the authors' recipe (issue 47): their teacher
(:class:`.nets.UpstreamTeacher`), the generator batch clamped to the rows per teacher (64 when
not given, as their ``--batch_size``), which is also each teacher's real batch, taken in order
from its once-shuffled partition (the whole partition when it holds one batch), and, for a
generator conditioned on a one-hot class, each teacher's generated batch drawn with its real
batch's labels; ``recipe=raudit`` / ``teacher_net=small`` give every earlier image run.
``preset="paper-eps1"`` / ``"paper-eps10"``: the authors' two MNIST commands
(:data:`.options.PRESETS`); ``"paper-tabular"``: the paper's tabular setting, ``config="tabular"``
with that recipe (no batch norm there, so nothing to pass separately).

The authors' privacy bugs are switches, off by default: ``shared_teacher_state`` and
``shared_teacher_init`` (:mod:`.slots`: the teachers time-sharing one in-graph slot share
Adam's moments and start equal) and ``accountant="gnmax"``, the data-dependent stop, whose
eps and stopping time depend on the votes and are released without smooth sensitivity
(the image default is ``gnmax-independent``; the tabular default stays ``gnmax`` so that its
earlier numbers stand).
"""

from __future__ import annotations

from dataclasses import fields

from raudit.errors import ConfigError, NoStep
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.capabilities import Capabilities
from raudit.generators.gpate.budget import StepCost, smallest_teachers, step_cost
from raudit.generators.gpate.dpgradagg import AggConfig
from raudit.generators.gpate.loop import GPateConfig, train_gpate
from raudit.generators.gpate.nets import ImageTeacherChoice, nets_for
from raudit.generators.gpate.options import (CONFIGS, PRESETS, UPSTREAM_BATCH, GPateHP, GPateOptions,
                                             accountant_of, check_options, recipe_of,
                                             teacher_net_of, with_preset)
from raudit.generators.labelled import public_label
from raudit.generators.pategan.core.encoding import MinMaxEncoder
from raudit.generators.pategan.core.options import teachers_for

SMOOTH_SENSITIVITY_NOTE = (
    "with accountant=gnmax (the tabular default; image: -o accountant=gnmax) eps_hat is the "
    "data-dependent RDP bound of Confident-GNMax, released (and used to stop) without smooth "
    "sensitivity: the reported eps and the stopping time themselves leak the votes (a known "
    "issue of the published method)")


class GPate(BatchedGenerator):
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)
    name = "gpate"
    description = "G-PATE: private aggregation of teacher gradients (Confident-GNMax, data-dependent RDP)"
    presets = tuple(PRESETS)
    capabilities = Capabilities(device=True, progress=True,
                                events=("teacher_batch", "gradient_votes", "accountant_step"),
                                privacy_events=("ConfidentGNMax",),
                                notes=(SMOOTH_SENSITIVITY_NOTE,), controls=("coin",),
                                releases=("gaussian",),
                                canonical_chunk=1)  # batching models does not pay (yet)

    Options = GPateOptions

    def __init__(self, options: GPateOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the tabular configuration) with ``overrides`` by name
        (-o KEY=VALUE)."""
        check_options(GPateOptions(), preset)  # an unknown preset first, in one line
        o = GPateOptions.build(with_preset(options, preset), overrides, self.name)
        check_options(o, preset)
        super().__init__(preset=preset, device=device, dtype=dtype, **o.as_dict())

    def fit_many(self, tables, *, columns=None, **kw):
        if self.options["conditional"] and len(tables):
            columns = public_label(tables, columns, self.options["classes"])
        return super().fit_many(tables, columns=columns, **kw)

    def resolve(self, n_rows: int, n_cols: int) -> GPateHP:
        o = self.options
        base = CONFIGS[o["config"]]
        if o["config"] == "image" and n_cols != 785:
            raise ConfigError(f"config=image takes MNIST's 784 pixel columns plus the label; "
                              f"this table has {n_cols} columns (use config=tabular)")
        oo = GPateOptions(**{f.name: o[f.name] for f in fields(GPateOptions)})
        k = teachers_for(n_rows, o["teachers"], ratio=base["ratio"])
        upstream = recipe_of(oo) == "upstream"
        if upstream:  # the authors' model.py 283-285: the batch clamped to a partition's rows,
            # which is also each teacher's real batch (one batch_size for both)
            batch = teacher_batch = max(1, min(o["batch"] or UPSTREAM_BATCH, n_rows // k))
        else:
            batch = o["batch"] or base["batch"]
            teacher_batch = o["teacher_batch"] or max(1, min(batch, n_rows // k))
        chunk = o["teacher_chunk"] or base["reference_chunk" if o["teacher_kernels"] == "reference"
                                           else "teacher_chunk"]
        # per-teacher generated labels need a generator conditioned on a one-hot class
        class_input = o["conditional"] and (o["classes"] > 2 or o["label_input"] == "one-hot")
        return GPateHP(o["config"], k, batch, teacher_batch, o["max_iter"] or base["max_iter"],
                       o["k_proj"] or base["k_proj"], o["clip"], o["bins"], o["thresh"],
                       o["sigma1"] or base["sigma1"] * k, o["sigma2"] or base["sigma2"] * k, o["lr"],
                       o["beta1"], o["teacher_steps"], accountant_of(oo), o["projection"],
                       o["z_dim"], chunk, o["teacher_hidden"], o["label_channel"],
                       o["teacher_label"], o["teacher_lr"], float(o["teacher_decay"]),
                       o["teacher_kernels"], o["classes"], o["label_input"], teacher_net_of(oo),
                       "sequential" if upstream else "with-replacement",
                       bool(upstream and class_input), o["slot_teachers"],
                       o["shared_teacher_state"], o["shared_teacher_init"])

    def encoder(self, seed: int) -> MinMaxEncoder:
        return MinMaxEncoder(eps=0.0, clip=True, integers="round", bounds="metadata")

    def step_cost(self, hp: GPateHP, d: int, delta: float, k: int | None = None) -> StepCost:
        """What one step costs at ``k`` teachers (default: the run's), in this config's
        proportions when the noise was not given explicitly (see :mod:`.budget`)."""
        o, base = self.options, CONFIGS[hp.config]
        k = hp.teachers if k is None else k
        q = hp.k_proj if hp.projection == "random" else d
        return step_cost(k=k, queries=hp.batch * q, bins=hp.bins, threshold=hp.thresh * k,
                         sigma1=o["sigma1"] or base["sigma1"] * k,
                         sigma2=o["sigma2"] or base["sigma2"] * k, delta=float(delta),
                         data_dependent=hp.accountant == "gnmax")

    def check(self, data, *, epsilon: float, delta: float | None = None, columns=None) -> None:
        """The base checks, then :meth:`check_step` on the table's shape: a run that
        cannot take one step is refused before any work (a sweep skips that point)."""
        super().check(data, epsilon=epsilon, delta=delta, columns=columns)
        # the encoded width only; gpate's encoder draws no noise, so any seed gives it
        d = self.encoder(0).fit(data, tuple(columns) if columns else None).transform(data.iloc[:1]).shape[1]
        delta = self.default_delta if delta is None else delta
        self.check_step(self.resolve(len(data), data.shape[1]), d, float(epsilon), float(delta))

    def check_step(self, hp: GPateHP, d: int, epsilon: float, delta: float) -> None:
        """Refuse, before training, a run that cannot take one step whatever the votes,
        naming the eps (and the table size) at which it could."""
        cost = self.step_cost(hp, d, delta)
        if epsilon >= cost.floor:
            return
        o = self.options
        size = ""
        if o["teachers"] is None and o["sigma1"] is None and o["sigma2"] is None:
            ratio = CONFIGS[hp.config]["ratio"]
            k = smallest_teachers(epsilon, lambda kk: self.step_cost(hp, d, delta, kk), hp.teachers)
            size = (f", or a training table of at least {k * ratio:,} rows ({k:,} teachers of "
                    f"{ratio} rows)" if k is not None else "")
        raise NoStep(f"gpate cannot take a single step at eps={epsilon:g} (delta={delta:g}): its "
                     f"{cost.queries} queries per step cost at least eps={cost.floor:.4g} whatever "
                     f"the votes ({hp.teachers} teachers, sigma1={hp.sigma1:g}); use "
                     f"eps >= {cost.floor:.4g} (a step is certain from {cost.guaranteed:.4g})"
                     f"{size}")

    def train(self, batch: TrainBatch, hp: GPateHP, *, epsilon, delta, observer, progress,
              control: str | None = None) -> Trained:
        self.check_step(hp, batch.dim, float(epsilon), float(delta))
        agg = AggConfig(k_proj=hp.k_proj, clip=hp.clip, bins=hp.bins,
                        threshold=hp.thresh * hp.teachers, sigma1=hp.sigma1, sigma2=hp.sigma2,
                        projection=hp.projection, control=control)
        cfg = GPateConfig(k=hp.teachers, batch=hp.batch, teacher_batch=hp.teacher_batch, agg=agg,
                          max_iter=hp.max_iter, lr=hp.lr, beta1=hp.beta1,
                          teacher_steps=hp.teacher_steps, accountant=hp.accountant,
                          teacher_chunk=hp.teacher_chunk, teacher_lr=hp.teacher_lr,
                          teacher_decay=hp.teacher_decay, teacher_sample=hp.teacher_sample,
                          teacher_labels=hp.teacher_labels, slot_teachers=hp.slot_teachers,
                          shared_state=hp.shared_teacher_state, shared_init=hp.shared_teacher_init)
        prior = self.options["label_prior"] if self.options["conditional"] else None
        image = ImageTeacherChoice(hp.teacher_net, hp.teacher_kernels, hp.label_channel)
        nets = nets_for(hp.config, batch.dim, prior, z_dim=hp.z_dim, teacher_hidden=hp.teacher_hidden,
                        teacher_label=hp.teacher_label, classes=hp.classes,
                        label_input=hp.label_input, image=image)
        trained = train_gpate(batch, cfg, nets, epsilon=epsilon,
                              delta=delta, observer=observer, progress=progress)
        certain = self.step_cost(hp, batch.dim, float(delta)).guaranteed
        for i, n in enumerate(trained.iterations):
            if n == 0:  # the votes made the first step too dear: say so, never silently
                trained.extra[i]["no_step"] = (
                    f"took no step: the first step's data-dependent cost exceeded eps="
                    f"{float(epsilon):g}; a step is certain from eps={certain:.4g}")
        return trained
