"""`fixed -o sign_query=on`: one private GNMax answer decides whether the released labels flip.

Why (lab/learning.md, "Breast-cancer: a one-bit sign query"): on breast-cancer a `fixed`
fit's generator makes a strong feature-label link whose SIGN is a coin flip, with the
teachers' votes and with coins alike, so what utility measures on that table is about one
bit per fit, and thousands of noisy labelled fakes did not pass it at eps 10. This asks the
teachers that bit directly, once, after training:

* **The query.** ``sign_rows`` rows are drawn from the trained generator (its own named
  stream, ``fixed-sign-sample``: post-processing of the trained generator). Teacher t, from
  ONLY the rows of its own partition (the one `fixed` trained it on), votes "as is" or
  "flipped" by ``sign_rule``:

  - ``mean``: the sign of <d_t, d_s>, d_t its rows' class-conditional mean difference
    (mean of the label-1 rows' encoded features minus the label-0 rows') and d_s the
    synthetic sample's;
  - ``scaled``: the same in the synthetic sample's min-max scale (each feature divided by
    its synthetic range, as the utility's classifiers scale their training table):
    <d_t, d_s / range^2>, whose direction a strongly regularised linear classifier trained
    on the synthetic sample points along;
  - ``centroid``: whether the teacher's nearest-centroid classifier (its two class means)
    labels the synthetic rows right more often than wrong;
  - ``lda``: a linear discriminant w = (S + ridge)^-1 d_s fitted to the synthetic sample
    alone (S its pooled within-class covariance: public, the same for every teacher) scores
    the teacher's rows; the teacher votes by whether that score's AUROC on its rows is above
    or below 1/2. This is Setting B (train on synthetic, test on real) in miniature, on each
    teacher's rows.

  A teacher whose rows hold one class only, or whose score is exactly 0 (1/2), abstains.
* **The release.** The two-bin histogram (as is, flipped) gets N(0, sigma_s^2) per bin and
  its argmax is released: flip iff flipped + noise > as is + noise. Adding or removing a
  record changes one teacher's rows (the iid partition), so one vote moves between the bins
  or to/from abstaining: L2 sensitivity at most sqrt 2, one GNMax answer
  (:class:`~raudit.accountants.GNMaxAnswer`, RDP alpha / sigma_s^2), composed in the run's RDP
  accountant after the training votes (adaptive composition: the query reads the released
  generator, a post-processing of the earlier releases).
* **The budget, decided once.** sigma_s is the smallest noise whose one answer alone costs
  ``sign_share`` x eps at delta; then the training votes' sigma is calibrated as before with
  the bounds histogram AND the sign answer composed in (:func:`plan_sign`): the whole run
  costs eps, eps_hat is that accountant's eps.
* **Control.** ``--control coin``: the released flip is a fair coin (stream ``fixed-sign``,
  like the answer's noise), the teachers' answer is still charged.
* **Sampling.** Every later sample has its label column replaced by 1 - y where the answer
  said "flipped" (:func:`with_flip`): the bit travels with the generator's parameters.

A PATE-style mechanism in the plain sense: k disjoint teachers, one noisy-argmax answer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from raudit.accountants import GNMaxAnswer
from raudit.errors import ConfigError
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.events import Votes
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.core.noise_calibration import _bisect, _eps, calibrate

__all__ = ["RULES", "SignQuery", "plan_sign", "sign_sigma", "teacher_votes", "answer", "with_flip", "run",
           "check_label"]

RULES = ("mean", "scaled", "centroid", "lda")
RIDGE = 1e-3  # lda: the ridge on the synthetic covariance, times its mean variance
FLIP = "sign_flip"  # the name of the flip bit in the generator's parameters


@functools.lru_cache(maxsize=256)
def sign_sigma(epsilon: float, delta: float, share: float) -> float:
    """sigma_s: the smallest GNMax noise whose one answer alone costs ``share`` * eps."""
    return _bisect(lambda s: _eps([GNMaxAnswer(s)], delta), share * epsilon)


@functools.lru_cache(maxsize=256)
def plan_sign(epsilon: float, delta: float, queries: int, dp_columns: int, bounds_share: float,
              sign_share: float) -> tuple[float | None, float, float]:
    """(z of the bounds histogram or None, sigma of the training votes, sigma_s of the sign
    answer): bounds + sign answer + ``queries`` training answers cost eps in RDP. A function
    of the privacy parameters, the query count and the schema only."""
    s = sign_sigma(epsilon, delta, sign_share)
    z_bounds, sigma = calibrate(epsilon, delta, dp_columns, bounds_share,
                                lambda sig: GNMaxAnswer(sig, count=queries),
                                before=(GNMaxAnswer(s),))
    return z_bounds, sigma, s


def check_label(tables) -> None:
    """A one-line ConfigError unless every table's label (last column) is 0/1."""
    for t in tables:
        label = t.columns[-1]
        if not t[label].isin((0, 1)).all():
            raise ConfigError(f"sign_query=on needs a binary 0/1 label; column {label!r} holds "
                              "other values (use -o sign_query=off)")


def teacher_votes(x: torch.Tensor, parts: torch.Tensor, sizes: torch.Tensor,
                  synth: torch.Tensor, rule: str) -> np.ndarray:
    """(M, 2) int votes (as is, flipped) of the k teachers of each model.

    ``x`` (M, N, d) encoded training rows, label last; ``parts`` (M, k, P) / ``sizes`` (M, k)
    the partition; ``synth`` (M, n, d) the synthetic sample, label last."""
    x, synth = x.to(torch.float64), synth.to(torch.float64)
    m, k, p = parts.shape
    rows = torch.gather(x, 1, parts.reshape(m, k * p, 1).expand(-1, -1, x.shape[2]))
    rows = rows.reshape(m, k, p, -1)
    valid = (torch.arange(p, device=x.device)[None, None, :] < sizes[:, :, None]).to(x.dtype)
    y, f = rows[..., -1] * valid, rows[..., :-1]
    n1, n0 = y.sum(2), (valid - y).sum(2)
    mu1 = (f * y[..., None]).sum(2) / n1.clamp(min=1)[..., None]
    mu0 = (f * (valid - y)[..., None]).sum(2) / n0.clamp(min=1)[..., None]
    d_t = mu1 - mu0  # (M, k, d - 1)
    ys, fs = synth[..., -1], synth[..., :-1]
    if rule == "mean":
        score = (d_t * d_s_of(fs, ys)[:, None, :]).sum(-1)  # (M, k)
    elif rule == "scaled":  # sklearn's MinMaxScaler: a constant feature keeps scale 1
        span = fs.amax(1) - fs.amin(1)
        span = torch.where(span > 0, span, torch.ones_like(span))
        score = (d_t * (d_s_of(fs, ys) / span ** 2)[:, None, :]).sum(-1)
    elif rule == "centroid":  # label 1 iff the row is nearer mu1: (f - (mu1 + mu0) / 2) . d_t > 0
        mid = ((mu1 + mu0) / 2 * d_t).sum(-1)  # (M, k)
        pred = torch.einsum("mnd,mkd->mkn", fs, d_t) > mid[..., None]
        score = (pred == (ys[:, None, :] > 0.5)).to(x.dtype).mean(-1) - 0.5
    elif rule == "lda":
        score = _lda_auc(fs, ys, d_s_of(fs, ys), f, rows[..., -1], valid) - 0.5
    else:
        raise ConfigError(f"sign_rule must be one of {', '.join(RULES)}; got {rule!r}")
    votes = (n1 > 0) & (n0 > 0)  # a teacher with one class abstains
    as_is = ((score > 0) & votes).sum(1)
    flipped = ((score < 0) & votes).sum(1)
    return torch.stack([as_is, flipped], 1).cpu().numpy().astype(np.int64)


def d_s_of(fs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """The synthetic sample's class-conditional mean difference (M, d - 1)."""
    s1, s0 = ys.sum(1).clamp(min=1), (1 - ys).sum(1).clamp(min=1)
    return (fs * ys[..., None]).sum(1) / s1[:, None] - (fs * (1 - ys)[..., None]).sum(1) / s0[:, None]


def _lda_auc(fs, ys, d_s, f, y, valid) -> torch.Tensor:
    """(M, k) AUROC on each teacher's rows of the synthetic sample's linear discriminant
    (ties count 1/2; 1/2 where a teacher lacks a class)."""
    s1, s0 = ys.sum(1).clamp(min=1), (1 - ys).sum(1).clamp(min=1)
    mu1 = (fs * ys[..., None]).sum(1) / s1[:, None]
    mu0 = (fs * (1 - ys)[..., None]).sum(1) / s0[:, None]
    c = fs - torch.where(ys[..., None] > 0.5, mu1[:, None, :], mu0[:, None, :])
    cov = c.transpose(1, 2) @ c / fs.shape[1]  # (M, d - 1, d - 1)
    eye = torch.eye(cov.shape[-1], dtype=cov.dtype, device=cov.device)
    ridge = RIDGE * cov.diagonal(dim1=1, dim2=2).mean(-1).clamp(min=1e-12)
    w = torch.linalg.solve(cov + ridge[:, None, None] * eye, d_s[..., None])[..., 0]
    sc = (f * w[:, None, None, :]).sum(-1)  # (M, k, P)
    pos, neg = y * valid, (1 - y) * valid
    diff = sc[..., :, None] - sc[..., None, :]  # (M, k, P, P): row i positive, row j negative
    wins = (diff > 0).to(sc.dtype) + 0.5 * (diff == 0).to(sc.dtype)
    pairs = pos[..., :, None] * neg[..., None, :]
    n = pairs.sum((-1, -2))
    return torch.where(n > 0, (wins * pairs).sum((-1, -2)) / n.clamp(min=1), torch.full_like(n, 0.5))


def answer(counts: np.ndarray, sigma: float, rng: CounterRNG, control: str | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """(flip (M,) bool, noise (M, 2)): GNMax's argmax of the two bins, or a fair coin."""
    if control is not None:
        u = rng.uniform(2).to(torch.float64).cpu().numpy()
        return u[:, 0] < 0.5, np.zeros_like(u)
    noise = rng.normal(2, std=sigma).to(torch.float64).cpu().numpy()
    noisy = counts + noise
    return noisy[:, 1] > noisy[:, 0], noise


def with_flip(trained: Trained, flip: np.ndarray) -> Trained:
    """``trained`` whose samples' label column (last) is 1 - y where ``flip``: the bit is
    appended to the generator's parameters so that it follows any selection of models."""
    gen = trained.generator
    size = gen.flat.shape[1]
    bit = torch.as_tensor(flip, dtype=gen.flat.dtype, device=gen.flat.device)[:, None]
    stacked = Stacked(torch.cat([gen.flat.detach(), bit], 1),
                      {**gen.layout, FLIP: (size, (1,))})
    inner = trained.sample_fn

    def sample_fn(p: Stacked, rng: CounterRNG, n: int) -> torch.Tensor:
        layout = {k: v for k, v in p.layout.items() if k != FLIP}
        x = inner(Stacked(p.flat[:, :size], layout), rng, n)
        f = p.flat[:, size:size + 1].to(x.dtype)[:, :, None]  # (M, 1, 1)
        return torch.cat([x[..., :-1], x[..., -1:] * (1 - 2 * f) + f], -1)

    return Trained(stacked, sample_fn, trained.iterations, trained.eps_hat, trained.extra,
                   trained.critic)


@dataclass(frozen=True)
class SignQuery:
    """What the plan and the options fix: the answer's noise, the vote rule, the sample size."""

    sigma: float
    rule: str
    rows: int


def run(trained: Trained, batch: TrainBatch, partition, *, query: SignQuery, control: str | None,
        accountant, delta, observer, iteration: int) -> tuple[Trained, list[dict]]:
    """Ask the sign query of every model of ``batch`` once (module docstring); charge it,
    report it to ``observer`` as one two-bin vote, and return the flipping generator and
    each model's record of the query (for the summary)."""
    parts, sizes = partition
    sigma, rule, rows = query.sigma, query.rule, query.rows
    sample_rng = CounterRNG(batch.seeds, purpose="fixed-sign-sample", device=batch.x.device,
                            dtype=batch.x.dtype)
    with torch.no_grad():
        synth = trained.sample_fn(trained.generator, sample_rng, rows)
        counts = teacher_votes(batch.x, parts, sizes, synth, rule)
    rng = CounterRNG(batch.seeds, purpose="fixed-sign", dtype=torch.float64)
    flip, noise = answer(counts, sigma, rng, control)
    accountant.compose(GNMaxAnswer(sigma))
    eps_hat = [float(e) for e in accountant.eps(delta)]
    if observer is not None:
        active = np.ones(batch.models, dtype=bool)
        k = int(parts.shape[1])
        observer(Votes(iteration, counts[:, 1:2].copy(), k, sigma, noise[:, None, :],
                       flip[:, None].copy(), active, active.copy(), "argmax", "gaussian"))
    out = with_flip(trained, flip)
    out.eps_hat = eps_hat
    notes = [{"sign_sigma": sigma, "sign_votes": [int(c) for c in counts[m]],
              "sign_flip": bool(flip[m])} for m in range(batch.models)]
    return out, notes
