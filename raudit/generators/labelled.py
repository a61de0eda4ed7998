"""Label-conditional generation with a public label prior: both classes by construction.

Why (measured, lab/learning.md): a GAN that writes the binary label as one more
continuous output collapses to one class on long runs. ``paper`` on breast-cancer at
eps = 10 (2,408 iterations): the generated rows' spread falls from 0.03 to 0.007 and
most columns end at a corner of the sigmoid box; the label output sits near 0 for
every row, so every decoded label is 0, with the teachers' votes and with coins alike.
A conditional generator does not write the label: it draws it from Bernoulli(prior), a
public constant (no record is read), feeds it to the network beside z and appends it.
The features may still collapse; the label cannot.

The label travels in the last z coordinate (a uniform, or a normal mapped through its
CDF), so a conditional generator takes as many draws as an unconditional one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError, DataError


def check_conditional(conditional, label_prior) -> None:
    if not isinstance(conditional, bool):
        raise ConfigError(f"conditional must be true or false, got {conditional!r}")
    if not 0.0 < label_prior < 1.0:
        raise ConfigError(f"label_prior must lie in (0, 1), got {label_prior!r}")


def _unit(z: torch.Tensor, z_kind: str) -> torch.Tensor:
    """z's last coordinate as a U(0, 1) draw (..., 1): where the label is read off."""
    last = z[..., -1:]
    if z_kind == "uniform":
        return last
    if z_kind == "uniform-sym":
        return (last + 1.0) / 2.0
    return torch.special.ndtr(last)  # normal


def with_label(features: Callable[[torch.Tensor], torch.Tensor], z: torch.Tensor, prior: float,
               z_kind: str) -> torch.Tensor:
    """Rows (..., d): ``features`` of [z without its last coordinate, y] (d - 1 columns) then
    y ~ Bernoulli(``prior``) read off the last z coordinate (encoded 0/1)."""
    y = (_unit(z, z_kind) < prior).to(z.dtype)
    return torch.cat([features(torch.cat([z[..., :-1], y], -1)), y], -1)


def with_class(features: Callable[[torch.Tensor], torch.Tensor], z: torch.Tensor, classes: int,
               z_kind: str) -> torch.Tensor:
    """Rows (..., d): ``features`` of [z without its last coordinate, one-hot y] (d - 1
    columns) then y uniform over 0..classes-1 (public: no record is read), read off the last
    z coordinate and written encoded as y / (classes - 1) (a label with public bounds
    [0, classes - 1] under a min-max encoder)."""
    y = torch.clamp(torch.floor(_unit(z, z_kind) * classes), 0, classes - 1)
    onehot = torch.nn.functional.one_hot(y.squeeze(-1).long(), classes).to(z.dtype)
    return torch.cat([features(torch.cat([z[..., :-1], onehot], -1)), y / (classes - 1)], -1)


def public_label(tables: Sequence, columns: Sequence[ColumnMeta] | None, classes: int = 2):
    """The columns' metadata with the label's bounds public, [0, 1] (``classes`` 2) or
    [0, classes - 1]: the conditional generator writes the label as one of its classes,
    which the dataset contract makes it (schema, not a statistic); a table whose label
    holds anything else is rejected before training."""
    label = tables[0].columns[-1]
    allowed = tuple(range(classes))
    for t in tables:
        if not t[label].isin(allowed).all():
            got = "a 0/1 label" if classes == 2 else f"a label in 0..{classes - 1}"
            hint = ("use -o conditional=false, or -o classes=N for a label of N classes"
                    if classes == 2 else "check -o classes")
            raise DataError(f"conditional=true needs {got}; column {label!r} holds other "
                            f"values ({hint})")
    meta = (ColumnMeta(label, "binary", 0.0, 1.0, "public", (0.0, 1.0)) if classes == 2 else
            ColumnMeta(label, "integer", 0.0, float(classes - 1), "public"))
    return tuple(c for c in (columns or ()) if c.name != label) + (meta,)
