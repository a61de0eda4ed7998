"""G-PATE's teachers in blocks of groups: the same numbers in a fraction of the memory.

At the G-PATE paper's MNIST settings (3,733 teachers, 64 generated records and 15 real rows
per teacher) one teacher step holds about 3,733 x 79 x (16 x 14 x 14 + 32 x 7 x 7) floats
of activations, twice (before and after the leaky ReLU), plus their gradients: well over
10 GB, which a shared machine cannot give. Every teacher's loss and gradient depend on its
own parameters and batch only (the loss is a sum over groups of per-group means), so the
teachers can be taken ``chunk`` groups at a time: each block's gradient is computed on a
detached slice of the stacked parameters and written into the full gradient, then ONE
Adam step updates every teacher as before. The arithmetic per group is the same, except
that oneDNN may pick another convolution kernel for another number of groups: per-teacher
gradients then differ by float rounding (at most 5e-8 of the largest, measured), which the
votes' binning almost always absorbs (tests/generators/test_gpate_mnist.py: a trained
generator bit-identical for blocks of 1, 3, 4 and 7 teachers; gradients within 1e-6).
Small blocks also spare the system time of faulting in huge buffers every step.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from raudit.generators.nn import whole
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.core.teachers import LocalTeachers, bce_logits


class ChunkedTeachers(LocalTeachers):
    """:class:`LocalTeachers` whose joint real + fake step runs ``chunk`` groups at a time.

    ``sample="sequential"`` (the authors' recipe): step i takes each teacher's rows
    ``(i mod n) * batch`` .. ``+ batch - 1`` of its (once shuffled) partition, n = size //
    batch: with the batch clamped to the rows per teacher, the whole partition every step.
    """

    _next: torch.Tensor | None = None  # positions drawn by :meth:`next_rows` for the next step

    def __init__(self, *args, chunk: int | None = None, **kw):
        super().__init__(*args, **kw)
        self.chunk = chunk
        self._calls = 0  # steps taken (sample="sequential")

    def next_rows(self) -> torch.Tensor:
        """The rows (M, k, B) the next :meth:`step` will train on (drawn now, kept for it):
        the authors feed each teacher's generated batch its real batch's labels."""
        self._next = self._positions()
        return torch.gather(self.parts, 1, self._next).view(self.models, self.k, -1)

    def _positions(self) -> torch.Tensor:
        kept, self._next = self._next, None
        if kept is not None:
            return kept
        if self.sample != "sequential":
            return super()._positions()
        batches = (self.sizes // self.batch).clamp(min=1)  # (G, 1)
        start = (self._calls % batches) * self.batch
        self._calls += 1
        pos = start + torch.arange(self.batch, device=self.sizes.device)[None, :]
        return torch.minimum(pos, (self.sizes - 1).clamp(min=0))

    def _blocks(self):
        g = self.models * self.k
        c = g if not self.chunk else self.chunk
        return [(a, min(g, a + c)) for a in range(0, g, c)]

    def _sub(self, a: int, b: int) -> Stacked:
        return Stacked(self.params.flat.detach()[a:b].requires_grad_(True), self.params.layout)

    def _fake_rows(self, fake: torch.Tensor, a: int, b: int) -> torch.Tensor:
        """The generated batch of groups a..b-1 (teacher t of model m sees model m's batch)."""
        if fake.shape[0] == self.models * self.k:
            return fake[a:b]
        return fake[torch.arange(a, b, device=fake.device) // self.k]

    def step(self, fake: torch.Tensor, active: torch.Tensor | None) -> torch.Tensor:
        # the small image teachers' fast kernels take real and generated rows in ONE forward
        # (half the convolution calls, each on a larger batch), in blocks even when one block
        # holds every teacher, so that the block size never changes which path runs. A
        # batch-norm teacher never: its statistics are per call, and one call over both
        # batches would pool them (the authors call the discriminator once per batch); it
        # always takes the blocks below, whose separate calls it needs.
        batch_norm = getattr(self.net, "batch_norm", False)
        one_pass = getattr(self.net, "kernels", None) == "fast" and not batch_norm
        if ((len(self._blocks()) == 1 and not one_pass and not batch_norm) or self.update != "joint"
                or (self.partial_batch and self.sample == "first-shuffled")):
            return super().step(fake, active)
        pos = self._positions()
        rows = torch.gather(self.parts, 1, pos).view(self.models, self.k, -1)
        real = F.embedding(torch.gather(self.ids, 1, pos), self.table)
        mask = None if active is None else active.repeat_interleave(self.k)
        fake = fake.detach()
        grad = torch.empty_like(self.params.flat)
        nr = real.shape[1]
        for a, b in self._blocks():
            sub = self._sub(a, b)
            if one_pass:  # the same per-group means; the weight sums run over both batches at once
                logits = self.net(sub, torch.cat([real[a:b], self._fake_rows(fake, a, b)], dim=1),
                                  logits=True)
                loss = bce_logits(logits[:, :nr], 1.0) + bce_logits(logits[:, nr:], 0.0)
            else:
                loss = (bce_logits(self.net(sub, real[a:b], logits=True), 1.0)
                        + bce_logits(self.net(sub, self._fake_rows(fake, a, b), logits=True), 0.0))
            (grad[a:b],) = torch.autograd.grad(loss, sub.flat)
        self.params.flat.grad = grad
        self.opt.step(mask)
        return rows

    def generator_gradients(self, fake: torch.Tensor) -> torch.Tensor:
        """Each teacher's ``-d/dx`` of mean_b BCE(D_t(x_b), 1), block by block: (M, k, B, d).

        Only the input gradient is asked for, so autograd skips the weights' gradients.
        """
        m, bsz, d = fake.shape
        out = torch.empty(m * self.k, bsz, d, dtype=fake.dtype, device=fake.device)
        fake = fake.detach()
        for a, b in self._blocks():
            sub = Stacked(self.params.flat.detach()[a:b], self.params.layout)
            x = self._fake_rows(fake, a, b).requires_grad_(True)
            logits = self.net(sub, x, logits=True)
            (g,) = torch.autograd.grad(whole.softplus(-logits).flatten(1).mean(dim=1).sum(), x)
            out[a:b] = -g
        return out.view(m, self.k, bsz, d)
