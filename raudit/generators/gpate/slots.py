"""The authors' teacher slots, and their two privacy bugs as switches (issue 47).

The reference code builds ``batch_teachers`` teacher networks in its graph ("slots") and
time-shares each among ``teachers_batch`` teachers (40 in both of the authors' MNIST
commands): teacher ``t`` lives in slot ``t % slots`` and is swapped in by restoring its
checkpoint. Two things leak across the teachers of a slot:

* **shared optimiser state** (``shared_state``): one Adam per slot, whose moments and
  step count are never saved or restored (``saver_d`` holds only the trainable
  variables), so the teachers of a slot step one after another through the SAME m and v:
  with beta1 = 0.5 half of a teacher's update is the other partitions' gradients, and its
  votes are no longer a function of its own partition (the sensitivity argument fails).
* **shared initialisation** (``shared_init``): every teacher starts from the one
  checkpoint saved before training, so the teachers of a slot start equal.

Both off (the default) every teacher has its own Adam state and its own draw. On, the
state and the update order are the reference code's: per generator step, the teachers of
slot s take their Adam steps in the order of their batch number ``t // slots``, each
reading the moments the previous one left; gradients do not depend on the moments, so
they are all computed first (in blocks) and only the updates run in that order.
"""

from __future__ import annotations

import math

import torch

from raudit.generators.nn.optim import Adam, _Frozen, _sqrt
from raudit.generators.nn.stacked import Stacked


def slot_count(k: int, per_slot: int) -> int:
    """How many slots k teachers use when ``per_slot`` share each (the authors'
    batch_teachers = k / teachers_batch)."""
    return max(1, math.ceil(k / per_slot))


def slot_members(t: int, k: int, slots: int) -> tuple[int, ...]:
    """The teachers sharing teacher t's slot (t included): every u with u % slots == t % slots."""
    return tuple(range(t % slots, k, slots))


def share_initialisation(params: Stacked, models: int, k: int, slots: int) -> None:
    """Every teacher takes the initial parameters of the first teacher of its slot
    (teacher t of a model copies teacher t % slots of the same model), in place."""
    with torch.no_grad():
        flat = params.flat.view(models, k, -1)
        src = torch.arange(k, device=flat.device) % slots
        flat.copy_(flat[:, src].clone())


class SlotSharedAdam(Adam):
    """Adam whose moments and step count are per (model, slot), not per teacher: the
    teachers of a slot update in turn through the slot's state (the reference code's one
    ``AdamOptimizer`` per in-graph teacher). The arithmetic is :class:`Adam`'s eager path."""

    def __init__(self, params: Stacked, *, models: int, k: int, slots: int, lr: float = 1e-4,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        # not Adam.__init__: its per-teacher moments are the memory this class exists to share
        self.p, self.lr = params, lr
        self.b1, self.b2 = betas
        self.eps, self.weight_decay, self.max_grad_norm = eps, weight_decay, None
        self.models, self.k, self.slots = models, k, slots
        n = params.flat.shape[1]
        flat = params.flat
        self.m = torch.zeros(models, slots, n, dtype=flat.dtype, device=flat.device)
        self.v = torch.zeros_like(self.m)
        self.t = torch.zeros(models, slots, 1, dtype=flat.dtype, device=flat.device)

    @torch.no_grad()
    def step(self, active: torch.Tensor | None = None) -> None:
        p, g = self.p.flat, self.p.flat.grad
        if g is None:
            return
        m_, k, s = self.models, self.k, self.slots
        p3, g3 = p.view(m_, k, -1), g.view(m_, k, -1)
        per_model = None if active is None else active.view(m_, k)[:, 0]
        # a model's teachers stop together: freeze whole models (their slots' state too)
        with _Frozen(per_model, p3, self.m, self.v, self.t):
            for lo in range(0, k, s):  # batch number lo // s: slots 0..hi-lo-1 in turn
                hi = min(k, lo + s)
                n = hi - lo
                gb, pb = g3[:, lo:hi], p3[:, lo:hi]
                if self.weight_decay:
                    gb = gb + self.weight_decay * pb
                m, v, t = self.m[:, :n], self.v[:, :n], self.t[:, :n]
                t += 1
                m.mul_(self.b1).add_(gb, alpha=1 - self.b1)
                v.mul_(self.b2).addcmul_(gb, gb, value=1 - self.b2)
                denom = (_sqrt(v) / torch.sqrt(1 - self.b2 ** t)).add_(self.eps)
                pb.sub_(self.lr / (1 - self.b1 ** t) * m / denom)
