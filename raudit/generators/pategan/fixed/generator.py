"""`fixed`: a PATE-GAN whose privacy claim holds (spec section 7).

What it changes against the paper and the ports, each closing a measured leak:

* **Partition.** Every record is assigned to one of k teachers by an independent
  uniform draw (not shuffle-and-cut: under add/remove, cutting a shuffled order into
  equal chunks moves the boundary rows of every later chunk, so one record changes up
  to k teachers). Removing a record changes exactly one teacher's data. Teachers are
  persistent and read only their own rows (a teacher left without rows, possible for
  tiny tables, never sees a real row: its real loss is masked). The student sees
  only generated samples and their noisy labels.
* **Votes and accountant.** GNMax: r = argmax_j (n_j + N(0, sigma^2)); one record
  moves one vote, so (n0, n1) moves by sqrt 2 in L2 and each answer is a Gaussian
  mechanism with noise multiplier sigma / sqrt 2. Every answer is charged as a
  :class:`~raudit.events.GNMaxAnswer` to dp_accounting's ``RdpAccountant``
  (data-independent RDP: no q-validity condition to check, and eps_hat is a function
  of the query count only, so releasing it leaks nothing).
* **No overshoot, no data-dependent stopping.** The number of iterations T is fixed
  in advance (``iterations``); sigma is calibrated before training (bisection on the
  same accountant) so that the bounds plus all T * student_steps * batch answers cost
  at most eps. The loop therefore runs exactly T iterations for every table.
* **Bounds.** Public bounds from the column metadata where declared; the others are
  estimated with a Gaussian noisy histogram (:mod:`raudit.generators.pategan.core.dp_bounds`; 0/1 binary
  columns take [0, 1] as schema) paid from ``bounds_share`` of eps, composed in the
  same RDP accountant (so the total is accounted, not the sum of two claims). The
  label is public (0/1 by construction).
* **No label leak, no model selection**: nothing reads the real label distribution
  (the conditional generator's label share is the public ``label_prior``),
  and the last generator is released (no checkpoint picked on real data).

**Data-dependent analysis** (``-o analysis=data-dependent``, :mod:`.dd`): Confident-
GNMax votes, only the answered queries label the student, and the data-dependent eps is
released at the end with smooth sensitivity (the run's eps_hat); the default above is
unchanged. **Sign query** (``-o sign_query=on``, :mod:`.sign`): after training, one
GNMax answer of the same teachers decides whether the released labels flip, its cost
(``sign_share`` of eps) planned with the rest; off by default.

**Where the data sits** (lab/learning.md, "Epileptic" and "fixed's default bounds"):
``bounds_mass`` / ``bounds_centre`` / ``bounds_keep`` read the DP bounds off the same noisy
histogram as the noisy counts' central mass (default 0.9, within the run from the mode),
symmetric about their median's bin (post-processing: no extra cost; ``-o bounds_mass=1 -o
bounds_centre=false`` is the rule before 2026-11-25); ``output_offset`` (default off) adds a
public constant to the generator's output (0.5: it starts at the encoding's centre).

Hyperparameters: k = max(2, N // 50) teachers (N is treated as public, as in the
study); T = 100 iterations of 5 teacher rounds, 2 student rounds of ``query_batch``
(default: ``batch`` = 64) queries and one generator step (12,800 answers); the
paper's Adam lr 1e-4; generator {d, 2d, 2d, d} ReLU, student {d, d, 1}, teachers
{d, d/2, 1}; non-saturating generator loss. At eps = 1 these votes carry no usable
information, and ``--control coin`` scores the same (lab/learning.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from raudit.accountants import create
from raudit.events import GNMaxAnswer, GaussianStep
from raudit.errors import ConfigError
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.capabilities import Capabilities, OptionsObject, option
from raudit.generators.labelled import public_label
from raudit.generators.pategan.fixed import sign as fixed_sign
from raudit.generators.mechanism import DryRun, vote_releases
from raudit.generators.pategan.core.aggregation import CONTROLS
from raudit.generators.pategan.core.dp_bounds import DPBoundsFitting
from raudit.generators.pategan.core.noise_calibration import calibrate
from raudit.generators.pategan.fixed.dd import train_dd
from raudit.generators.pategan.fixed.nets import ARCHS, Z, LabelledNets, joint_critics, offset
from raudit.generators.pategan.core import fused_step
from raudit.generators.pategan.core.nets import LoopConfig, PateNets
from raudit.generators.pategan.core.loop import TeacherSource, to_trained, train_pate_gan
from raudit.generators.pategan.core.options import positive
from raudit.generators.pategan.core.partitions import iid_partition


@functools.lru_cache(maxsize=256)
def plan(epsilon: float, delta: float, queries: int, dp_columns: int, bounds_share: float
         ) -> tuple[float | None, float]:
    """(z of the bounds histogram or None, sigma of the votes) so that the whole run costs eps.

    Data-independent: a function of the privacy parameters, the query count and the
    number of columns without public bounds (schema), never of the records.
    """
    return calibrate(epsilon, delta, dp_columns, bounds_share,
                     lambda sigma: GNMaxAnswer(sigma, count=queries))


@dataclass(frozen=True)
class FixedOptions(OptionsObject):
    """`fixed`'s options, one frozen object; the defaults are the class's settings. Only the
    vote schedule (iterations x student_steps x query_batch answers), ``bounds_share``,
    ``analysis`` with its ``dd_*`` and ``sign_query`` with ``sign_share`` change what is
    charged; the others shape training or read the same noisy histogram (post-processing).

    Why the defaults stay the audited recipe (12,800 answers at k = N // 50): each recipe
    that learned (lab/learning.md, "Where it stands") sets its own table's teachers and
    schedule and, on breast-cancer and cervical, the sign query, all of which change what
    is charged; no recipe was measured to learn at this schedule."""

    teachers: int | None = option(None, "k, the number of teachers (null: N // teacher_ratio, at least 2)")
    teacher_ratio: int = option(50, "training rows per teacher when teachers is null")
    batch: int = option(64, "rows per teacher step and, unless query_batch, queries per student round")
    iterations: int = option(100, "T, the iterations run, fixed before training")
    max_iter: int | None = option(None, "a cap on T (audits and tests); the noise is planned for the T run")
    teacher_steps: int = option(5, "teacher updates per iteration")
    student_steps: int = option(2, "student rounds (of query_batch answers) per iteration")
    lr: float = option(1e-4, "Adam lr of the generator and the student")
    teacher_lr: float | None = option(None, "Adam lr of the teachers (null: lr)")
    query_batch: int | None = option(None, "answers per student round (null: batch)")
    conditional: bool = option(True, "the generator draws the 0/1 label from label_prior and writes it")
    label_prior: float = option(0.5, "the public share of label 1 the conditional generator draws")
    arch: Literal["mlp", "borealis", "smartnoise"] = option(
        "mlp", "network family (nets.py); the mechanism and budget are the same")
    # critic=joint: per-label first layers; part of every recipe that learned
    # (lab/learning.md, "A `fixed` that learns"), it needs conditional=true and an MLP critic
    critic: Literal["rows", "joint"] = option(
        "rows", "joint: teachers and student weigh features per label class (conditional only)")
    output_offset: float = option(0.0, "a public constant added to the generator's output")
    bounds_share: float = option(0.2, "share of eps paid for the DP bounds of non-public columns")
    # the central 90 % of the noisy histogram's counts within the run from its mode, symmetric
    # about their median's bin (dp_bounds.trim; lab/learning.md, "fixed's default bounds").
    # Before 2026-11-25: 1.0 / false, which clamped 40-67 % of epileptic's values at eps 1-10
    bounds_mass: float = option(0.9, "central share of the noisy histogram kept as a column's bounds")
    bounds_centre: bool = option(True, "bounds symmetric about the noisy median's bin")
    bounds_keep: Literal["run", "all"] = option(
        "run", "trim within the run of passing bins from the mode, or over all passing bins")
    analysis: Literal["independent", "data-dependent"] = option(
        "independent", "data-dependent: Confident-GNMax votes and a released eps (dd.py)")
    dd_threshold: float = option(0.8, "data-dependent: T / k of the noisy threshold check")
    dd_sigma2: float = option(0.1, "data-dependent: sigma2 / k, the answered queries' noise")
    dd_sigma_s: float = option(20.0, "data-dependent: sigma_s of the smooth-sensitivity release")
    dd_beta: float = option(0.4, "data-dependent: beta * lambda of the release (< 0.5)")
    sign_query: Literal["off", "on"] = option(
        "off", "on: one GNMax answer after training decides whether the labels flip (sign.py)")
    sign_share: float = option(0.1, "share of eps the sign answer alone costs")


class FixedPateGan(DPBoundsFitting, BatchedGenerator):
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)
    name = "fixed"
    description = "raudit's privacy-correct PATE-GAN (GNMax votes, RDP, fixed budget, DP bounds)"
    capabilities = Capabilities(device=True, progress=True, critic=True,
                                events=("teacher_batch", "votes", "gradient_votes",
                                        "accountant_step"),
                                privacy_events=("GNMaxAnswer", "GaussianStep", "ConfidentGNMax"),
                                controls=CONTROLS, releases=("gaussian",))

    Options = FixedOptions

    def __init__(self, options: FixedOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the class's settings) with ``overrides`` by name (-o KEY=VALUE)."""
        if preset != "default":
            raise ConfigError(f"fixed has one preset, 'default'; got {preset!r}")
        o = FixedOptions.build(options, overrides, self.name)
        for name, value in (("teacher_ratio", o.teacher_ratio), ("batch", o.batch),
                            ("iterations", o.iterations), ("teacher_steps", o.teacher_steps),
                            ("student_steps", o.student_steps)):
            positive(name, value, integer=True)
        positive("teachers", o.teachers, integer=True, allow_none=True)
        positive("query_batch", o.query_batch, integer=True, allow_none=True)
        positive("max_iter", o.max_iter, integer=True, allow_none=True)
        positive("lr", o.lr)
        positive("teacher_lr", o.teacher_lr, allow_none=True)
        if not isinstance(o.conditional, bool):
            raise ConfigError(f"conditional must be true or false, got {o.conditional!r}")
        if not 0.0 < o.label_prior < 1.0:
            raise ConfigError(f"label_prior must lie in (0, 1), got {o.label_prior!r}")
        if not 0.0 < o.bounds_share < 1.0:
            raise ConfigError(f"bounds_share must lie in (0, 1), got {o.bounds_share!r}")
        if not 0.0 < o.bounds_mass <= 1.0:
            raise ConfigError(f"bounds_mass must lie in (0, 1], got {o.bounds_mass!r}")
        if not isinstance(o.bounds_centre, bool):
            raise ConfigError(f"bounds_centre must be true or false, got {o.bounds_centre!r}")
        if not 0.0 <= o.output_offset <= 1.0:
            raise ConfigError(f"output_offset must lie in [0, 1] (the encoding's range), got "
                              f"{o.output_offset!r}")
        if o.output_offset and o.arch == "smartnoise":
            raise ConfigError("output_offset needs an MLP generator (arch=mlp or arch=borealis)")
        if o.critic == "joint" and o.arch == "smartnoise":
            raise ConfigError("critic=joint needs an MLP critic (arch=mlp or arch=borealis)")
        if o.critic == "joint" and not o.conditional:
            raise ConfigError("critic=joint needs conditional=true (the label must be 0/1)")
        for name in ("dd_threshold", "dd_sigma2", "dd_sigma_s"):
            positive(name, getattr(o, name))
        if not 0.5 < o.dd_threshold <= 1.0:
            raise ConfigError(f"dd_threshold (T / k) must lie in (0.5, 1]: a two-class top count "
                              f"is always >= k / 2; got {o.dd_threshold!r}")
        if not 0.0 < o.dd_beta < 0.5:
            raise ConfigError(f"dd_beta (beta * lambda) must lie in (0, 0.5), got {o.dd_beta!r}")
        if not (isinstance(o.sign_share, (int, float)) and 0.0 < o.sign_share < 1.0
                and o.sign_share + o.bounds_share < 1.0):
            raise ConfigError(f"sign_share must lie in (0, 1 - bounds_share) = (0, "
                              f"{1 - o.bounds_share:g}), got {o.sign_share!r}")
        if o.sign_query == "on" and (o.analysis != "independent" or not o.conditional):
            raise ConfigError("sign_query=on needs analysis=independent and conditional=true "
                              "(a 0/1 label the generator draws)")
        super().__init__(preset=preset, device=device, dtype=dtype, **o.as_dict())

    def fit_many(self, tables, *, columns=None, **kw):
        if self.options["sign_query"] == "on":
            fixed_sign.check_label(tables)
        if self.options["conditional"] and len(tables):
            columns = public_label(tables, columns)
        return super().fit_many(tables, columns=columns, **kw)

    def iterations(self) -> int:
        """T, fixed before training; ``max_iter`` (the audits' and tests' cap) only lowers it,
        and the noise is calibrated for the T actually run."""
        o = self.options
        return min(o["iterations"], o["max_iter"] or o["iterations"])

    def resolve(self, n_rows: int, n_cols: int) -> tuple:
        o = self.options
        k = o["teachers"] or max(2, n_rows // o["teacher_ratio"])
        if k > n_rows:
            raise ConfigError(f"{k} teachers for {n_rows} training rows; use --teachers "
                              f"{max(1, n_rows // 2)} or fewer")
        return k, o["batch"], self.iterations()

    def queries(self) -> int:
        o = self.options
        return self.iterations() * o["student_steps"] * (o["query_batch"] or o["batch"])

    def has_dry_run(self) -> bool:
        """The data-dependent analysis answers the queries its votes let through
        (Confident-GNMax): one run's events give its releases."""
        return self.options["analysis"] != "data-dependent"

    def mechanism(self, table, *, epsilon, delta, columns=None) -> DryRun:
        """GNMax with the sigma its planner calibrates for its T x student_steps x batch
        queries (fixed before training), modelled with public bounds; with
        ``sign_query=on`` one more answer at the sign query's sigma, folded into the one
        sigma that gives the Q + 1 Gaussian answers the same mu (exact for eps_true)."""
        o = self.options
        if not self.has_dry_run():
            raise ConfigError("fixed with analysis=data-dependent answers the queries its noisy "
                              "threshold check lets through (Confident-GNMax): no dry-run "
                              "schedule models it; its eps_true is the data-dependent RDP bound "
                              "of a run's votes (raudit train --events)")
        q = self.queries()
        if o["sign_query"] == "on":  # Gaussians: Q at sigma and one at sigma_s have the
            # same mu^2 = 2 sum 1/sigma_i^2 as Q + 1 answers at one sigma
            from raudit.generators.pategan.fixed.sign import plan_sign

            _, sigma, s = plan_sign(float(epsilon), float(delta), q, 0, o["bounds_share"],
                                    o["sign_share"])
            eq = ((q + 1) / (q / sigma ** 2 + 1 / s ** 2)) ** 0.5
            return DryRun((vote_releases("gaussian", eq, q + 1, "argmax"),),
                          f"dry run of the schedule: {q:,} answers at its planner's sigma "
                          f"{sigma:.4g} and the sign answer at {s:.4g}, as {q + 1:,} at the "
                          "sigma of the same mu; public bounds")
        _, sigma = plan(float(epsilon), float(delta), q, 0, o["bounds_share"])
        return DryRun((vote_releases("gaussian", sigma, q, "argmax"),),
                      "dry run of the schedule: its planner's sigma, public bounds")

    def z_dim(self, d: int) -> int:
        """Width of the generator's input (with the conditional label as its last coordinate)."""
        return ARCHS[self.options["arch"]].z_dim(d, int(self.options["conditional"]))

    def nets(self, d: int) -> PateNets:
        o = self.options
        c = int(o["conditional"])
        kw = ARCHS[o["arch"]].nets(d, self.z_dim(d), c)
        if o["critic"] == "joint":
            kw = joint_critics(kw)
        if o["output_offset"]:
            kw = offset(kw, o["output_offset"])
        if c:
            return LabelledNets(o["label_prior"], Z, **kw)
        return PateNets(**kw)

    def train(self, batch: TrainBatch, hp, *, epsilon, delta, observer, progress,
              control: str | None = None) -> Trained:
        k, b, iters = hp
        o = self.options
        n_dp = self._n_dp
        if o["analysis"] == "data-dependent":
            return train_dd(self, batch, hp, epsilon=epsilon, delta=delta, observer=observer,
                            progress=progress, control=control)
        sign = o["sign_query"] == "on"
        args = (float(epsilon), float(delta), self.queries(), n_dp, o["bounds_share"])
        z_bounds, sigma, sigma_s = (fixed_sign.plan_sign(*args, o["sign_share"]) if sign
                                    else plan(*args) + (None,))
        drawn = []  # the partition, kept for the sign query (the same draws either way)
        acct = create("rdp", models=batch.models)
        if z_bounds is not None:  # the histogram behind the bounds, charged before training
            acct.compose(GaussianStep(z_bounds))
        cfg = LoopConfig(k=k, batch=b, lam=1.0 / sigma, noise_scale=sigma, aggregation="argmax",
                         accountant="rdp", teacher_steps=o["teacher_steps"],
                         student_steps=o["student_steps"], check="planned", max_iter=iters,
                         z_dim=self.z_dim(batch.dim), z_train=Z, generator_loss="non-saturating",
                         lr=o["lr"], teacher_sample="first-shuffled", partial_batch=True,
                         noise="gaussian", student_batch=o["query_batch"], control=control,
                         teacher_lr=o["teacher_lr"])
        nets = self.nets(batch.dim)
        gen, it, eps_hat, student = train_pate_gan(
            batch, cfg, nets, epsilon=epsilon, delta=delta, observer=observer, progress=progress,
            source=TeacherSource(lambda rng, bt: _kept(drawn, iid_partition(
                rng, bt.rows, bt.x.shape[1], k))),
            accountant=acct, fast_step=fused_step.prepare)
        trained = to_trained(gen, nets, cfg, it, eps_hat, z_sample=Z, student=student)
        notes = [{}] * batch.models
        if sign:
            trained, notes = fixed_sign.run(
                trained, batch, drawn[0], control=control, accountant=acct, delta=delta,
                sigma=sigma_s,
                observer=observer, iteration=iters)
        trained.extra = [{"sigma": sigma, "bounds_noise_multiplier": z_bounds,
                          "dp_bounds_columns": n_dp, "queries": self.queries(), **note}
                         for note in notes]
        return trained


def _kept(box: list, partition):  # the partition, also kept for the sign query
    box.append(partition)
    return partition
