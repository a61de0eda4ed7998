"""The :class:`~raudit.events.TeacherLoss` matrix from teacher logits (torch; the loops that
emit the event compute it here so the event module stays free of torch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # torch is only needed by the loops that build TeacherLoss
    import torch


def real_losses(logits: "torch.Tensor", ok: "torch.Tensor | None" = None) -> npt.NDArray[np.float64]:
    """(M, k, k) TeacherLoss matrix from logits (M, j=k, i=k, R) of every teacher j on
    teacher i's first rows, labelled real; ``ok`` (M, 1 or k, i=k, R) masks padding rows."""
    import torch

    per = torch.nn.functional.softplus(-logits.double())
    if ok is None:
        out: npt.NDArray[np.float64] = per.mean(-1).cpu().numpy()
        return out
    w = ok.to(per.dtype).expand_as(per)
    out = ((per * w).sum(-1) / w.sum(-1).clamp(min=1)).cpu().numpy()
    return out
