"""Optimisers whose state is per model and that skip models that have stopped.

Losses are summed over models, so gradients (and Adam/RMSProp moments, which
are element-wise) never mix models. What a stock optimiser cannot do is leave a
stopped model untouched: a zero gradient still moves Adam's weights through
its momentum. ``step(active)`` updates only the groups where ``active`` is True,
and the step count used for bias correction is kept per group.
"""

from __future__ import annotations

import os

import torch

from raudit.generators.nn.stacked import Stacked


# torch's fused Adam kernel (CPU and CUDA); RAUDIT_FUSED_ADAM=0 forces the eager reference path
FUSED = hasattr(torch, "_fused_adam_") and os.environ.get("RAUDIT_FUSED_ADAM", "1") != "0"
_BLOCK = 64  # a multiple of every SIMD width the kernel uses (AVX-512: 16 floats, 8 doubles)


def _sqrt(v: torch.Tensor) -> torch.Tensor:
    """sqrt of Adam's second moment with subnormal entries read as 0.

    Long runs leave subnormal moments (gradients ~1e-20 squared), and torch's sqrt is
    ~10x slower on them on x86 (this was 1/4 of Adam's time). It is exact where it
    matters: sqrt of a subnormal is < 1.1e-19 (float32) and 1.5e-154 (float64), then
    divided by sqrt(1 - beta2^t) >= 0.03 and added to eps = 1e-8, whose half-ulp is
    4e-16 (float32): the denominator rounds to the same number either way.
    """
    tiny = torch.finfo(v.dtype).tiny
    return torch.where(v < tiny, torch.zeros((), dtype=v.dtype, device=v.device), v).sqrt()


class _Frozen:
    """Update every model in place, then put back the rows of the stopped ones.

    Cheaper than computing new tensors and selecting with ``where`` (two extra passes
    over every state tensor, which for synthcity's 141,589-parameter generators was
    half of each step), and exactly the same numbers for the models that move.
    """

    def __init__(self, active: torch.Tensor | None, *tensors: torch.Tensor):
        self.idle = None
        if active is not None and not bool(active.all()):
            self.idle = (~active).nonzero().flatten()
            self.tensors = tensors
            self.saved = [t[self.idle].clone() for t in tensors]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.idle is not None:
            for t, old in zip(self.tensors, self.saved):
                t[self.idle] = old
        return False


class _Masked:
    def __init__(self, params: Stacked, lr: float):
        self.p = params
        self.lr = lr

    def zero_grad(self) -> None:
        self.p.flat.grad = None


class Adam(_Masked):
    """Adam (Kingma & Ba) with torch.optim.Adam's formulas, per group and masked.

    ``weight_decay`` is L2 added to the gradient (torch.optim.Adam semantics);
    ``max_grad_norm`` clips each model's whole gradient vector (torch's
    clip_grad_norm_ applied to each model separately).
    """

    def __init__(self, params: Stacked, lr: float = 1e-4, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, max_grad_norm: float | None = None):
        super().__init__(params, lr)
        self.b1, self.b2 = betas
        self.eps, self.weight_decay, self.max_grad_norm = eps, weight_decay, max_grad_norm
        flat = params.flat
        self.m = torch.zeros_like(flat, requires_grad=False)
        self.v = torch.zeros_like(flat, requires_grad=False)
        self.t = torch.zeros(flat.shape[0], 1, dtype=flat.dtype, device=flat.device)
        self._pad: torch.Tensor | None = None  # see _fused

    @torch.no_grad()
    def step(self, active: torch.Tensor | None = None) -> None:
        p, g = self.p.flat, self.p.flat.grad
        if g is None:
            return
        if self.max_grad_norm is not None:
            norm = g.norm(dim=1, keepdim=True)
            g = g * torch.clamp(self.max_grad_norm / (norm + 1e-6), max=1.0)
        with _Frozen(active, p, self.m, self.v, self.t):
            step = self._common_step(active)
            if FUSED and step is not None:
                self._fused(p, g, step)
            else:
                self._eager(p, g)

    def select(self, params: Stacked, index: torch.Tensor) -> None:
        """Follow ``params``, the groups ``index`` of the ones optimised so far (a loop that
        drops stopped models from its stacked tensors): their moments and step counts."""
        self.p = params
        self.m, self.v, self.t = self.m[index], self.v[index], self.t[index]
        self._pad = None  # sized for the old tensors' tail

    def _common_step(self, active: torch.Tensor | None) -> float | None:
        """The step count the moving models share after this step, or None if they differ.
        They always share it in the loops here: a model that stops never moves again."""
        t = self.t if active is None or bool(active.all()) else self.t[active]
        if t.numel() == 0:
            return None
        lo, hi = float(t.min()), float(t.max())
        return lo + 1 if lo == hi else None

    def _fused(self, p: torch.Tensor, g: torch.Tensor, step: float) -> None:
        # torch's fused kernel: one pass over each tensor instead of about ten (16-23x
        # faster on synthcity's 141,589-parameter generators), and the very arithmetic of
        # torch.optim.Adam (lerp for the first moment), which the torch-based ports ran
        self.t += 1
        steps = [torch.tensor(step, dtype=torch.float32, device=p.device)]
        kw = dict(lr=self.lr, beta1=self.b1, beta2=self.b2, weight_decay=self.weight_decay,
                  eps=self.eps, amsgrad=False, maximize=False)
        # The kernel runs its vector loop over whole SIMD widths and a scalar loop (other
        # rounding) over the last n % width elements of a tensor: over the chunk's flat
        # (M, P) parameters, which elements fell in that tail depended on M, so a model's
        # bits depended on the chunk it trained in. Every element takes the vector path
        # here: the whole widths in place, the rest through one zero-padded block.
        flat = [p.view(-1), g.contiguous().view(-1), self.m.view(-1), self.v.view(-1)]
        n = flat[0].numel()
        cut = n - n % _BLOCK
        if cut:
            xp, xg, xm, xv = (x[:cut] for x in flat)
            torch._fused_adam_([xp], [xg], [xm], [xv], [], steps, **kw)
        if cut < n:
            if self._pad is None:  # kept: the zeros beyond n - cut stay zeros (0 in, 0 out)
                self._pad = torch.zeros(4, _BLOCK, dtype=p.dtype, device=p.device)
            pad = self._pad
            for b, x in zip(pad, flat):
                b[: n - cut] = x[cut:]
            torch._fused_adam_([pad[0]], [pad[1]], [pad[2]], [pad[3]], [], steps, **kw)
            for b, x in zip((pad[0], pad[2], pad[3]), (flat[0], flat[2], flat[3])):
                x[cut:] = b[: n - cut]

    def _eager(self, p: torch.Tensor, g: torch.Tensor) -> None:
        """The reference path (per-model step counts; also where torch has no fused Adam)."""
        if self.weight_decay:
            g = g + self.weight_decay * p
        self.t += 1
        self.m.mul_(self.b1).add_(g, alpha=1 - self.b1)
        self.v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
        step = self.lr / (1 - self.b1 ** self.t)
        denom = (_sqrt(self.v) / torch.sqrt(1 - self.b2 ** self.t)).add_(self.eps)
        p.sub_(step * self.m / denom)


def adam_update(p, g, m, v, t, active, lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
    """One Adam step as a pure function (for a traced, compiled step: :mod:`raudit.generators.
    pategan.core.fused_step`): :meth:`Adam._fused`'s formulas (lerp for the first moment) on the rows
    where ``active``, the other rows keeping their values. Returns the new (p, m, v, t)."""
    b1, b2 = betas
    mask = active[:, None]
    t1 = t + 1
    m1 = torch.lerp(m, g, 1 - b1)
    v1 = v * b2 + (1 - b2) * g * g
    step = lr / (1 - b1 ** t1)
    denom = v1.sqrt() / (1 - b2 ** t1).sqrt() + eps
    p1 = p - step * m1 / denom
    return (torch.where(mask, p1, p), torch.where(mask, m1, m), torch.where(mask, v1, v),
            torch.where(mask, t1, t))


class RMSProp(_Masked):
    """RMSProp as TensorFlow 1's ``RMSPropOptimizer`` computes it (the `updated` port).

    ms = decay*ms + (1-decay)*g^2; p -= lr*g/sqrt(ms + eps), with decay 0.9,
    eps 1e-10 and the mean square initialised to ones (TF1's slot initialiser;
    torch.optim.RMSprop starts at zero, which makes the first steps much larger).
    """

    def __init__(self, params: Stacked, lr: float = 1e-4, decay: float = 0.9, eps: float = 1e-10,
                 ms_init: float = 1.0):
        super().__init__(params, lr)
        self.decay, self.eps = decay, eps
        self.ms = torch.full_like(params.flat, ms_init, requires_grad=False)

    @torch.no_grad()
    def step(self, active: torch.Tensor | None = None) -> None:
        p, g = self.p.flat, self.p.flat.grad
        if g is None:
            return
        with _Frozen(active, p, self.ms):
            self.ms.mul_(self.decay).addcmul_(g, g, value=1 - self.decay)
            p.sub_(self.lr * g / torch.sqrt(self.ms + self.eps))
