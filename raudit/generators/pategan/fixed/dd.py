"""`fixed -o analysis=data-dependent`: Confident-GNMax votes and a released data-dependent eps.

Papernot et al. 2018 ("Scalable private learning with PATE", section 4) on `fixed`'s
teachers: each query is first a noisy threshold check, max(n0, n1) + N(0, sigma1^2) >= T
(charged on every query); only the queries that pass get a GNMax label,
argmax(n_j + N(0, sigma2^2)) with sigma2 < sigma1, and only those enter the student's
loss. Confident votes (most teachers agree) pass often and cost almost nothing under the
data-dependent RDP of Theorem 6; split votes are mostly dropped and pay only the check.

Decided once, before any vote, from (eps, delta, the query count Q, k, the number of
columns without public bounds) and the options -- never from the records:

* T = ``dd_threshold`` * k; sigma2 = ``dd_sigma2`` * k, a fraction of the gap (2T - k) of a
  confident vote, so that such a vote's GNMax answer is nearly free; where even an infinite
  sigma1 cannot pay Q such answers (few teachers or a small eps), sigma2 = sigma1 / 4
  instead (the plan degrades to noisy answers rather than failing);
* the release: the Renyi order lambda, beta = ``dd_beta`` / lambda, sigma_s = ``dd_sigma_s``;
* sigma1, by bisection: the PLANNED eps -- all Q threshold checks at the data-independent
  lambda / (2 sigma1^2), all Q answered at the GNMax bound of a histogram at the threshold
  (T, k - T), the bounds histogram, the GNSS release itself -- is eps; lambda is its
  minimising order.
* T iterations as the default `fixed` (no stopping on eps: the loop never reads it).

At the end, the data-dependent RDP of the votes actually cast at lambda is released with
smooth sensitivity (:mod:`raudit.accountants.release`): the run's eps_hat is that released
value, a private number that can land above or below eps (above when the votes were less
confident than the plan's reference, or by the release's noise); training's notes say so
when it is above. There is no privacy-loss distribution for this analysis: eps_true is the
data-dependent RDP bound, labelled as such (:mod:`raudit.accountants.true_curve`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from raudit.accountants.confident import ConfidentGNMaxAccountant
from raudit.accountants.gnmax import DEFAULT_ORDERS, logq_gnmax, rdp_gnmax
from raudit.accountants.release import GnssPlan, release_eps
from raudit.errors import ConfigError
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core import fused_step
from raudit.generators.pategan.core.aggregation import ConfidentVotes
from raudit.generators.pategan.core.noise_calibration import bounds_noise
from raudit.generators.pategan.core.loop import TeacherSource, to_trained, train_pate_gan
from raudit.generators.pategan.core.partitions import iid_partition
from raudit.generators.pategan.core.nets import LoopConfig
from raudit.generators.pategan.fixed.nets import Z

__all__ = ["DDPlan", "EPS_OVER", "RecordingGNMax", "plan_dd", "bounds_rdp", "train_dd"]


SIGMA2_MIN = 0.25  # the fallback sigma2 / sigma1 (module docstring)


@dataclass(frozen=True)
class DDPlan:
    """Everything a data-dependent run fixes before training (module docstring)."""

    votes: ConfidentVotes
    gnss: GnssPlan
    z_bounds: float | None
    planned_eps: float


def bounds_rdp(z_bounds: float | None, orders) -> np.ndarray:
    """RDP of the bounds histogram (one Gaussian release of sensitivity 1, multiplier z)."""
    o = np.asarray(orders, dtype=np.float64)
    return np.zeros_like(o) if z_bounds is None else o / (2.0 * z_bounds ** 2)


def _planned(sigma1: float, *, queries: int, k: int, top: int, sigma2: float, beta_order: float,
             sigma_s: float, other: np.ndarray, delta: float) -> tuple[float, float]:
    """(planned eps, its order) at threshold noise ``sigma1``."""
    o = DEFAULT_ORDERS[1:]  # integer orders 2..199 (GNSS at order 1.1 would need beta < 0.45)
    if sigma2 <= 0:  # the fallback: a fixed ratio to the threshold noise
        sigma2 = SIGMA2_MIN * sigma1
    lq = logq_gnmax(np.array([top, k - top], dtype=np.float64), sigma2)
    gn = rdp_gnmax(np.array([lq]), sigma2, o)[0]
    beta = beta_order / o
    gnss = o * np.exp(2 * beta) / sigma_s ** 2 + (beta * o - 0.5 * np.log1p(-2 * o * beta)) / (o - 1)
    eps = queries * (o / (2 * sigma1 ** 2) + gn) + other + gnss + math.log(1 / delta) / (o - 1)
    i = int(np.argmin(eps))
    return float(eps[i]), float(o[i])


@functools.lru_cache(maxsize=256)
def plan_dd(epsilon: float, delta: float, queries: int, k: int, dp_columns: int,
            bounds_share: float, threshold: float, sigma2_share: float, sigma_s: float,
            beta_order: float) -> DDPlan:
    """The run's plan (module docstring); a one-line ConfigError when eps cannot pay even
    the release and the (eps, delta) conversion with no votes at all."""
    z_bounds = bounds_noise(epsilon, delta, dp_columns, bounds_share)
    other = bounds_rdp(z_bounds, DEFAULT_ORDERS[1:])
    top = min(k, max(math.ceil(threshold * k), (k + 1) // 2))
    sigma2 = sigma2_share * k
    kw = dict(queries=queries, k=k, top=top, sigma2=sigma2, beta_order=beta_order,
              sigma_s=sigma_s, other=other, delta=delta)
    lo, hi = math.log(1e-3), math.log(1e9)
    if _planned(math.exp(hi), **kw)[0] > epsilon:  # k too small for sigma2 = dd_sigma2 * k
        kw["sigma2"] = 0.0
    floor, _ = _planned(math.exp(hi), **kw)
    if floor > epsilon:
        raise ConfigError(f"epsilon {epsilon:g} is below what the data-dependent release alone "
                          f"costs ({floor:.4g} at delta={delta:g}: the smooth-sensitivity release "
                          f"and the RDP-to-(eps, delta) conversion); raise epsilon or dd_sigma_s")
    for _ in range(100):  # bisection on log sigma1: the smallest noise whose plan fits eps
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _planned(math.exp(mid), **kw)[0] <= epsilon else (mid, hi)
        if hi - lo < 1e-9:
            break
    sigma1 = math.exp(hi)
    eps, order = _planned(sigma1, **kw)
    sigma2 = kw["sigma2"] or SIGMA2_MIN * sigma1
    return DDPlan(ConfidentVotes(threshold * k, sigma1, sigma2),
                  GnssPlan(order, beta_order / order, sigma_s), z_bounds, eps)


class RecordingGNMax(ConfidentGNMaxAccountant):
    """The data-dependent GNMax accountant that also keeps the two-class votes it charged:
    the release needs every query's histogram, not only the running RDP."""

    def __init__(self, models: int):
        super().__init__(models)
        self._n1, self._answered, self._k = [], [], None

    def compose(self, event) -> None:
        super().compose(event)  # a rejected event raises here and nothing is kept
        mask = getattr(event, "mask", None)
        if mask is not None and not np.all(mask):
            raise ConfigError("the data-dependent release needs every model active at every "
                              "query (a planned run never stops a model early)")
        self._n1.append(np.asarray(event.counts)[:, :, 1].astype(np.int32))
        self._answered.append(np.asarray(event.answered, dtype=bool))
        self._k = int(np.asarray(event.counts)[0, 0].sum())

    def votes(self) -> tuple[np.ndarray, np.ndarray]:
        """(counts (M, Q, 2), answered (M, Q)) of every query charged so far."""
        if not self._n1:
            return np.zeros((self.models, 0, 2), dtype=np.int32), np.zeros((self.models, 0), bool)
        n1 = np.concatenate(self._n1, axis=1)
        return np.stack([self._k - n1, n1], axis=-1), np.concatenate(self._answered, axis=1)


EPS_OVER = ("the data-dependent eps is released as measured, with smooth-sensitivity noise, "
            "after a fixed number of iterations: the votes were less confident than the plan "
            "assumed, or the release's noise was positive")


def train_dd(gen, batch, hp, *, epsilon, delta, observer, progress, control):
    """``fixed``'s training with ``analysis=data-dependent`` (module docstring): the loop with
    Confident-GNMax votes, then the smooth-sensitivity release of the run's eps."""
    k, b, iters = hp
    o = gen.options
    deltas = np.broadcast_to(np.asarray(delta, dtype=np.float64), (batch.models,))
    if np.unique(deltas).size != 1:
        raise ConfigError("analysis=data-dependent trains one delta per batch")
    plan = plan_dd(float(epsilon), float(deltas[0]), gen.queries(), int(k), gen._n_dp,
                   o["bounds_share"], o["dd_threshold"], o["dd_sigma2"], o["dd_sigma_s"],
                   o["dd_beta"])
    acct = RecordingGNMax(batch.models)
    v = plan.votes
    cfg = LoopConfig(k=k, batch=b, lam=1.0 / v.sigma2, noise_scale=v.sigma2, aggregation="argmax",
                     accountant="gnmax", teacher_steps=o["teacher_steps"],
                     student_steps=o["student_steps"], check="planned", max_iter=iters,
                     z_dim=gen.z_dim(batch.dim), z_train=Z, generator_loss="non-saturating",
                     lr=o["lr"], teacher_sample="first-shuffled", partial_batch=True,
                     noise="gaussian", student_batch=o["query_batch"], control=control,
                     confident=v, teacher_lr=o["teacher_lr"])
    nets = gen.nets(batch.dim)
    params, it, _, student = train_pate_gan(
        batch, cfg, nets, epsilon=epsilon, delta=float(deltas[0]), observer=observer,
        progress=progress, accountant=acct,
        source=TeacherSource(lambda rng, bt: iid_partition(rng, bt.rows, bt.x.shape[1], k)),
        fast_step=fused_step.prepare)
    z = CounterRNG(batch.seeds, purpose="gnss-release", device="cpu",
                   dtype=torch.float64).normal(1)[:, 0].numpy()
    counts, answered = acct.votes()
    rel = release_eps(counts, answered, k=k, threshold=v.threshold, sigma1=v.sigma1,
                      sigma2=v.sigma2, plan=plan.gnss, delta=float(deltas[0]), z=z,
                      rdp_other=float(bounds_rdp(plan.z_bounds, [plan.gnss.order])[0]))
    trained = to_trained(params, nets, cfg, it, [r.eps for r in rel], z_sample=Z,
                         student=student)
    trained.extra = [{"sigma": v.sigma2, "bounds_noise_multiplier": plan.z_bounds,
                      "dp_bounds_columns": gen._n_dp, "queries": gen.queries(),
                      "analysis": "data-dependent", "threshold": v.threshold,
                      "sigma1": v.sigma1, "sigma2": v.sigma2, "answered": int(answered[m].sum()),
                      "gnss_order": plan.gnss.order, "gnss_beta": plan.gnss.beta,
                      "gnss_sigma": plan.gnss.sigma_s, "planned_eps": plan.planned_eps,
                      "eps_over_note": EPS_OVER}
                     for m in range(batch.models)]
    return trained
