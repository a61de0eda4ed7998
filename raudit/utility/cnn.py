"""The G-PATE paper's image evaluation: a small CNN trained on synthetic images, tested on real.

Long et al. (2021) train a CNN on 100,000 synthetic MNIST images and report its accuracy on
the real test set. :func:`cnn_accuracy` is that step as a plain function: images as
(n, 784) arrays in [0, 255] (raudit's MNIST columns), integer class labels, a fixed seed
(torch's generator, so the same inputs give the same number), one torch thread's worth of
work by default (2 epochs of a two-convolution network). It returns the accuracy and the
balanced accuracy (the mean recall over classes): raudit's MNIST label is the binary
``is_zero`` (about 10 % positives), where a constant classifier already scores 0.90.

A synthetic set with a single class cannot train a classifier: the function then predicts
that class everywhere (and says so in ``single_class``), rather than failing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class CnnScore:
    accuracy: float
    balanced_accuracy: float
    train_rows: int
    single_class: bool


def _net(classes: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
    def init(*shape: int, fan_in: int) -> torch.Tensor:
        bound = 1.0 / np.sqrt(fan_in)  # torch's default (Kaiming-uniform with a = sqrt 5) bound
        return ((torch.rand(*shape, generator=gen) * 2 - 1) * bound).requires_grad_(True)

    return {"c1": init(16, 1, 5, 5, fan_in=25), "b1": init(16, fan_in=25),
            "c2": init(32, 16, 5, 5, fan_in=400), "b2": init(32, fan_in=400),
            "w1": init(128, 32 * 16, fan_in=512), "bw1": init(128, fan_in=512),
            "w2": init(classes, 128, fan_in=128), "bw2": init(classes, fan_in=128)}


def _forward(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    h = F.max_pool2d(F.relu(F.conv2d(x, p["c1"], p["b1"])), 2)  # 28 -> 24 -> 12
    h = F.max_pool2d(F.relu(F.conv2d(h, p["c2"], p["b2"])), 2)  # 12 -> 8 -> 4
    h = F.relu(F.linear(h.flatten(1), p["w1"], p["bw1"]))
    return F.linear(h, p["w2"], p["bw2"])


def _images(x: np.ndarray) -> torch.Tensor:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2 or x.shape[1] != 784:
        raise ValueError(f"images must be (n, 784) pixel rows, got shape {x.shape}")
    return torch.from_numpy(x / 255.0).view(-1, 1, 28, 28)


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean over the classes present in ``y`` of the share of their rows predicted right."""
    return float(np.mean([np.mean(pred[y == c] == c) for c in np.unique(y)]))


def cnn_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray,
                 test_y: np.ndarray, *, classes: int = 2, epochs: int = 2, batch: int = 64,
                 lr: float = 1e-3, seed: int = 0, device: str = "cpu") -> CnnScore:
    """Train the CNN on (train_x, train_y) with Adam, score it on (test_x, test_y).

    ``device="cuda"`` trains there: the same initial weights and batch order (drawn on the
    CPU from ``seed``), so only the device's arithmetic differs."""
    ytr = np.asarray(train_y).astype(np.int64)
    yte = np.asarray(test_y).astype(np.int64)
    if ytr.size == 0 or len(train_x) != ytr.size or len(test_x) != yte.size:
        raise ValueError("cnn_accuracy needs as many labels as images, and at least one image")
    if ytr.min() < 0 or ytr.max() >= classes:
        raise ValueError(f"labels must lie in 0..{classes - 1}")
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
        order = torch.randperm(ytr.size, generator=gen).to(dev)
        for i in range(0, ytr.size, batch):
            idx = order[i:i + batch]
            opt.zero_grad()
            F.cross_entropy(_forward(p, xtr[idx]), ttr[idx]).backward()
            opt.step()
    with torch.no_grad():
        pred = torch.cat([_forward(p, xte[i:i + 1024]).argmax(1)
                          for i in range(0, len(xte), 1024)]).cpu().numpy()
    return CnnScore(float(np.mean(pred == yte)), balanced_accuracy(yte, pred), ytr.size, False)
