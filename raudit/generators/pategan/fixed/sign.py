"""`fixed -o sign_query=on`: one private GNMax answer decides whether the released labels flip.

Why (lab/learning.md, "Breast-cancer: a one-bit sign query"): on breast-cancer a `fixed`
fit's generator makes a strong feature-label link whose SIGN is a coin flip, with the
teachers' votes and with coins alike, so what utility measures on that table is about one
bit per fit, and thousands of noisy labelled fakes did not pass it at eps 10. This asks the
teachers that bit directly, once, after training:

* **The query.** ``SIGN_ROWS`` rows are drawn from the trained generator (its own named
  stream, ``fixed-sign-sample``: post-processing of the trained generator). Teacher t, from
  ONLY the rows of its own partition (the one `fixed` trained it on), votes "as is" or
  "flipped" by the sign of <d_t, d_s>: d_t its rows' class-conditional mean difference (mean
  of the label-1 rows' encoded features minus the label-0 rows') and d_s the synthetic
  sample's. (Three other rules -- in the synthetic min-max scale, nearest centroid, a linear
  discriminant's AUROC -- were screened on dev seeds and dropped: lab/learning.md, "a one-bit
  sign query".)
  A teacher whose rows hold one class only, or whose score is exactly 0, abstains.
* **The release.** The two-bin histogram (as is, flipped) gets N(0, sigma_s^2) per bin and
  its argmax is released: flip iff flipped + noise > as is + noise. Adding or removing a
  record changes one teacher's rows (the iid partition), so one vote moves between the bins
  or to/from abstaining: L2 sensitivity at most sqrt 2, one GNMax answer
  (:class:`~raudit.events.GNMaxAnswer`, RDP alpha / sigma_s^2), composed in the run's RDP
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

import numpy as np
import torch

from raudit.events import GNMaxAnswer
from raudit.errors import ConfigError
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.events import Votes
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.core.noise_calibration import _bisect, _eps, calibrate

__all__ = ["SIGN_ROWS", "plan_sign", "sign_sigma", "teacher_votes", "answer", "with_flip", "run",
           "check_label"]

SIGN_ROWS = 1000  # synthetic rows the teachers judge (every measured sign-query cell used 1,000)
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
                  synth: torch.Tensor) -> np.ndarray:
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
    score = (d_t * d_s_of(synth[..., :-1], synth[..., -1])[:, None, :]).sum(-1)  # (M, k)
    votes = (n1 > 0) & (n0 > 0)  # a teacher with one class abstains
    as_is = ((score > 0) & votes).sum(1)
    flipped = ((score < 0) & votes).sum(1)
    return torch.stack([as_is, flipped], 1).cpu().numpy().astype(np.int64)


def d_s_of(fs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """The synthetic sample's class-conditional mean difference (M, d - 1)."""
    s1, s0 = ys.sum(1).clamp(min=1), (1 - ys).sum(1).clamp(min=1)
    return (fs * ys[..., None]).sum(1) / s1[:, None] - (fs * (1 - ys)[..., None]).sum(1) / s0[:, None]


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


def run(trained: Trained, batch: TrainBatch, partition, *, sigma: float, control: str | None,
        accountant, delta, observer, iteration: int) -> tuple[Trained, list[dict]]:
    """Ask the sign query of every model of ``batch`` once (module docstring); charge it,
    report it to ``observer`` as one two-bin vote, and return the flipping generator and
    each model's record of the query (for the summary)."""
    parts, sizes = partition
    sample_rng = CounterRNG(batch.seeds, purpose="fixed-sign-sample", device=batch.x.device,
                            dtype=batch.x.dtype)
    with torch.no_grad():
        synth = trained.sample_fn(trained.generator, sample_rng, SIGN_ROWS)
        counts = teacher_votes(batch.x, parts, sizes, synth)
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
