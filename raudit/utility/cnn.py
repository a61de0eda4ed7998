"""The G-PATE paper's image evaluation: a small CNN trained on synthetic images, tested on real.

Long et al. (2021) train a CNN on 100,000 synthetic MNIST images and report its accuracy on
the real test set. :func:`cnn_accuracy` is that step as a plain function: images as
(n, 784) arrays in [0, 255] (raudit's MNIST columns), integer class labels, a fixed seed
(torch's generator, so the same inputs give the same number), one torch thread's worth of
work by default (2 epochs of a two-convolution network). It returns the accuracy and the
balanced accuracy (the mean recall over classes): raudit's MNIST label is the binary
``is_zero`` (about 10 % positives), where a constant classifier already scores 0.90.

:func:`evaluate` runs one of two named protocols (:data:`PROTOCOLS`, issue 47):

* ``strict`` (raudit's): a fixed number of epochs, the final model, and a held-out
  validation split of the synthetic rows for any choice a caller makes; the test set is
  read once, for the final score.
* ``paper-optimistic`` (the authors' ``evaluation/train-classifier-mnist.py``, AI-secure/
  G-PATE): their Keras network (3x3 convolutions of 32 and 64 channels, max-pool, dropout
  0.2 and 0.25, a dense layer of 64), plain SGD at lr 1e-3, batch 512, 600 epochs on
  100,000 synthetic images, scored on the TEST set after every epoch and reported as the
  best of those: the epoch is chosen on the test set, so the number is optimistic (on
  saved synthetic sets best-over-epochs lifted weak sets by up to ~0.14), and every
  result of it says so (:attr:`CnnEvaluation.optimistic`).

A synthetic set with a single class cannot train a classifier: the function then predicts
that class everywhere (and says so in ``single_class``), rather than failing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Literal

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["PROTOCOLS", "CnnEvaluation", "CnnProtocol", "CnnScore", "balanced_accuracy",
           "cnn_accuracy", "evaluate", "protocol_named"]

Params = dict[str, torch.Tensor]
# (parameters, images, dropout generator or None in evaluation) -> logits
Forward = Callable[[Params, torch.Tensor, "torch.Generator | None"], torch.Tensor]


@dataclass(frozen=True)
class CnnScore:
    accuracy: float
    balanced_accuracy: float
    train_rows: int
    single_class: bool


@dataclass(frozen=True)
class CnnProtocol:
    """How a synthetic set is scored: network, optimiser, epochs, and what picks the model.

    ``select="final"``: the model after the last epoch; ``"best-test"``: the epoch whose
    TEST accuracy is highest (optimistic). ``validation``: the share of the synthetic rows
    held out (never trained on) and scored, so that any choice between settings is made on
    synthetic data; ``samples``: the synthetic images the protocol asks a generator for
    (None: the caller's)."""

    name: str
    net: Literal["raudit", "keras-mnist"]
    optimizer: Literal["adam", "sgd"]
    lr: float
    batch: int
    epochs: int
    select: Literal["final", "best-test"]
    validation: float = 0.0
    samples: int | None = None

    @property
    def optimistic(self) -> bool:
        return self.select == "best-test"


PROTOCOLS: dict[str, CnnProtocol] = {
    "strict": CnnProtocol("strict", "raudit", "adam", 1e-3, 64, 2, "final", validation=0.1),
    "paper-optimistic": CnnProtocol("paper-optimistic", "keras-mnist", "sgd", 1e-3, 512, 600,
                                    "best-test", samples=100_000),
}


def protocol_named(name: str) -> CnnProtocol:
    """The protocol called ``name``; a ValueError naming the known ones otherwise."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown CNN protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


@dataclass(frozen=True)
class CnnEvaluation:
    """One synthetic set scored under one protocol. ``epoch``: the epoch whose model was
    scored (1-based; 0 with a single class); ``test_history``: the test accuracy after each
    epoch, only where the protocol read it (``best-test``); ``validation_accuracy``: the
    scored model on the held-out synthetic rows (None without a split)."""

    protocol: str
    optimistic: bool
    accuracy: float
    balanced_accuracy: float
    epoch: int
    epochs: int
    train_rows: int
    validation_rows: int
    validation_accuracy: float | None
    single_class: bool
    test_history: tuple[float, ...] = ()

    @property
    def label(self) -> str:
        """The protocol's name, and for an optimistic one why (every output carries it)."""
        return (f"{self.protocol} (optimistic: best test accuracy of {self.epochs} epochs)"
                if self.optimistic else self.protocol)


def _net(classes: int, gen: torch.Generator) -> Params:
    def init(*shape: int, fan_in: int) -> torch.Tensor:
        bound = 1.0 / np.sqrt(fan_in)  # torch's default (Kaiming-uniform with a = sqrt 5) bound
        return ((torch.rand(*shape, generator=gen) * 2 - 1) * bound).requires_grad_(True)

    return {"c1": init(16, 1, 5, 5, fan_in=25), "b1": init(16, fan_in=25),
            "c2": init(32, 16, 5, 5, fan_in=400), "b2": init(32, fan_in=400),
            "w1": init(128, 32 * 16, fan_in=512), "bw1": init(128, fan_in=512),
            "w2": init(classes, 128, fan_in=128), "bw2": init(classes, fan_in=128)}


def _forward(p: Params, x: torch.Tensor, gen: torch.Generator | None = None) -> torch.Tensor:
    h = F.max_pool2d(F.relu(F.conv2d(x, p["c1"], p["b1"])), 2)  # 28 -> 24 -> 12
    h = F.max_pool2d(F.relu(F.conv2d(h, p["c2"], p["b2"])), 2)  # 12 -> 8 -> 4
    h = F.relu(F.linear(h.flatten(1), p["w1"], p["bw1"]))
    return F.linear(h, p["w2"], p["bw2"])


def _keras_net(classes: int, gen: torch.Generator) -> Params:
    """The authors' Keras MNIST classifier at Keras' defaults: Glorot-uniform weights
    (fans of a convolution: kernel area x channels), zero biases."""
    def glorot(*shape: int, fan_in: int, fan_out: int) -> torch.Tensor:
        bound = float(np.sqrt(6.0 / (fan_in + fan_out)))
        return ((torch.rand(*shape, generator=gen) * 2 - 1) * bound).requires_grad_(True)

    def zeros(n: int) -> torch.Tensor:
        return torch.zeros(n, requires_grad=True)

    return {"c1": glorot(32, 1, 3, 3, fan_in=9, fan_out=288), "b1": zeros(32),
            "c2": glorot(64, 32, 3, 3, fan_in=288, fan_out=576), "b2": zeros(64),
            "w1": glorot(64, 64 * 121, fan_in=64 * 121, fan_out=64), "bw1": zeros(64),
            "w2": glorot(classes, 64, fan_in=64, fan_out=classes), "bw2": zeros(classes)}


def _dropout(h: torch.Tensor, rate: float, gen: torch.Generator | None) -> torch.Tensor:
    """Inverted dropout with its mask drawn from ``gen`` (on the CPU: the same mask on any
    device); identity in evaluation (``gen`` None)."""
    if gen is None:
        return h
    keep = (torch.rand(h.shape, generator=gen) >= rate).to(h.device, h.dtype)
    return h * keep / (1.0 - rate)


def _keras_forward(p: Params, x: torch.Tensor, gen: torch.Generator | None = None) -> torch.Tensor:
    h = F.max_pool2d(F.relu(F.conv2d(x, p["c1"], p["b1"])), 2)  # 28 -> 26 -> 13
    h = _dropout(h, 0.2, gen)
    h = _dropout(F.relu(F.conv2d(h, p["c2"], p["b2"])), 0.25, gen)  # 13 -> 11
    h = F.relu(F.linear(h.flatten(1), p["w1"], p["bw1"]))
    return F.linear(h, p["w2"], p["bw2"])  # softmax: in the cross entropy


NETS: dict[str, tuple[Callable[[int, torch.Generator], Params], Forward]] = {
    "raudit": (_net, _forward), "keras-mnist": (_keras_net, _keras_forward)}


def _images(x: np.ndarray) -> torch.Tensor:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2 or x.shape[1] != 784:
        raise ValueError(f"images must be (n, 784) pixel rows, got shape {x.shape}")
    return torch.from_numpy(x / 255.0).view(-1, 1, 28, 28)


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean over the classes present in ``y`` of the share of their rows predicted right."""
    return float(np.mean([np.mean(pred[y == c] == c) for c in np.unique(y)]))


def _labels(train_x, train_y, test_x, test_y, classes: int) -> tuple[np.ndarray, np.ndarray]:
    ytr = np.asarray(train_y).astype(np.int64)
    yte = np.asarray(test_y).astype(np.int64)
    if ytr.size == 0 or len(train_x) != ytr.size or len(test_x) != yte.size:
        raise ValueError("cnn_accuracy needs as many labels as images, and at least one image")
    if ytr.min() < 0 or ytr.max() >= classes:
        raise ValueError(f"labels must lie in 0..{classes - 1}")
    return ytr, yte


def _train_epoch(p: Params, forward: Forward, opt: torch.optim.Optimizer, x: torch.Tensor,
                 y: torch.Tensor, batch: int, gen: torch.Generator, dropout: bool) -> None:
    """One pass over (x, y) in a fresh order drawn from ``gen``."""
    order = torch.randperm(len(y), generator=gen).to(x.device)
    for i in range(0, len(y), batch):
        idx = order[i:i + batch]
        opt.zero_grad()
        F.cross_entropy(forward(p, x[idx], gen if dropout else None), y[idx]).backward()
        opt.step()


def _score(p: Params, forward: Forward, x: torch.Tensor, y: np.ndarray) -> tuple[float, float]:
    """(accuracy, balanced accuracy) of the model on (x, y): the only place a model is scored."""
    with torch.no_grad():
        pred = torch.cat([forward(p, x[i:i + 1024], None).argmax(1)
                          for i in range(0, len(x), 1024)]).cpu().numpy()
    return float(np.mean(pred == y)), balanced_accuracy(y, pred)


def cnn_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray,
                 test_y: np.ndarray, *, classes: int = 2, epochs: int = 2, batch: int = 64,
                 lr: float = 1e-3, seed: int = 0, device: str = "cpu") -> CnnScore:
    """Train the CNN on (train_x, train_y) with Adam, score it on (test_x, test_y).

    ``device="cuda"`` trains there: the same initial weights and batch order (drawn on the
    CPU from ``seed``), so only the device's arithmetic differs."""
    ytr, yte = _labels(train_x, train_y, test_x, test_y, classes)
    xte = _images(test_x)
    if np.unique(ytr).size == 1:  # nothing to learn: the one class everywhere
        pred = np.full(yte.shape, ytr[0])
        return CnnScore(float(np.mean(pred == yte)), balanced_accuracy(yte, pred), ytr.size, True)
    gen = torch.Generator().manual_seed(seed)
    dev = torch.device(device)
    p = {k: v.detach().to(dev).requires_grad_(True) for k, v in _net(classes, gen).items()}
    opt = torch.optim.Adam(list(p.values()), lr=lr)
    xtr, ttr, xte = _images(train_x).to(dev), torch.from_numpy(ytr).to(dev), xte.to(dev)
    for _ in range(epochs):
        _train_epoch(p, _forward, opt, xtr, ttr, batch, gen, dropout=False)
    acc, bal = _score(p, _forward, xte, yte)
    return CnnScore(acc, bal, ytr.size, False)


def evaluate(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
             *, protocol: CnnProtocol | str = "strict", classes: int = 2, seed: int = 0,
             epochs: int | None = None, device: str = "cpu") -> CnnEvaluation:
    """Score the synthetic set (train_x, train_y) on the real (test_x, test_y) under
    ``protocol`` (a name of :data:`PROTOCOLS` or a :class:`CnnProtocol`); ``epochs``
    overrides the protocol's (a smaller run, recorded in the result's ``epochs``).

    Under ``select="final"`` the test set is scored once, after training; under
    ``"best-test"`` after every epoch, and the best epoch is reported (optimistic)."""
    prot = protocol_named(protocol) if isinstance(protocol, str) else protocol
    n_epochs = prot.epochs if epochs is None else int(epochs)
    if n_epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {n_epochs}")
    ytr, yte = _labels(train_x, train_y, test_x, test_y, classes)
    xtr_all = _images(train_x)
    if np.asarray(test_x).ndim != 2 or np.asarray(test_x).shape[1] != 784:
        raise ValueError(f"images must be (n, 784) pixel rows, got shape {np.asarray(test_x).shape}")
    gen = torch.Generator().manual_seed(seed)
    # the validation rows: a seeded draw of the synthetic set, never trained on
    n_val = int(round(prot.validation * ytr.size)) if ytr.size > 1 else 0
    order = torch.randperm(ytr.size, generator=gen).numpy() if n_val else np.arange(ytr.size)
    val, fit = order[:n_val], order[n_val:]
    result = partial(CnnEvaluation, protocol=prot.name, optimistic=prot.optimistic,
                     epochs=n_epochs, train_rows=int(fit.size), validation_rows=int(n_val))
    if np.unique(ytr[fit]).size == 1:  # nothing to learn: the one class everywhere
        only = ytr[fit][0]
        pred = np.full(yte.shape, only)
        vacc = float(np.mean(ytr[val] == only)) if n_val else None
        return result(accuracy=float(np.mean(pred == yte)),
                             balanced_accuracy=balanced_accuracy(yte, pred), epoch=0,
                             validation_accuracy=vacc, single_class=True)
    dev = torch.device(device)
    make, forward = NETS[prot.net]
    p = {k: v.detach().to(dev).requires_grad_(True) for k, v in make(classes, gen).items()}
    opt: torch.optim.Optimizer = (torch.optim.Adam(list(p.values()), lr=prot.lr)
                                  if prot.optimizer == "adam"
                                  else torch.optim.SGD(list(p.values()), lr=prot.lr))
    xtr, ttr = xtr_all[fit].to(dev), torch.from_numpy(ytr[fit]).to(dev)
    dropout = prot.net == "keras-mnist"
    history: list[tuple[float, float]] = []
    xte = None
    for _ in range(n_epochs):
        _train_epoch(p, forward, opt, xtr, ttr, prot.batch, gen, dropout)
        if prot.select == "best-test":  # the paper's validation_data is the test set
            xte = _images(test_x).to(dev) if xte is None else xte
            history.append(_score(p, forward, xte, yte))
    vacc = _score(p, forward, xtr_all[val].to(dev), ytr[val])[0] if n_val else None
    if prot.select == "best-test":
        best = int(np.argmax([a for a, _ in history]))  # the first of equal bests, as max()
        acc, bal = history[best]
        return result(accuracy=acc, balanced_accuracy=bal, epoch=best + 1,
                             validation_accuracy=vacc, single_class=False,
                             test_history=tuple(a for a, _ in history))
    acc, bal = _score(p, forward, _images(test_x).to(dev), yte)  # the test set's one read
    return result(accuracy=acc, balanced_accuracy=bal, epoch=n_epochs,
                         validation_accuracy=vacc, single_class=False)
