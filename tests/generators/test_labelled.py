"""Conditional generation with a public label prior (``-o conditional=true``) for the
correct generators that otherwise write the label as a continuous output (dpgan, gpate):
both classes by construction, in the prior's proportion; the defaults are unchanged."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.errors import ConfigError, DataError
from raudit.generators.labelled import with_label


def table(n=150, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n)})
    df["label"] = (df.a > 0.8).astype(int)  # about 21 % positives
    return df


@pytest.mark.parametrize("z_kind,draw", [("uniform", lambda g, n: torch.rand(n, 3, generator=g)),
                                         ("uniform-sym", lambda g, n: 2 * torch.rand(n, 3, generator=g) - 1),
                                         ("normal", lambda g, n: torch.randn(n, 3, generator=g))])
def test_with_label_draws_the_prior_and_feeds_it_to_the_network(z_kind, draw):
    z = draw(torch.Generator().manual_seed(0), 20_000).double()
    seen = []
    rows = with_label(lambda zy: seen.append(zy) or zy[..., :1] * 0 + 7.0, z, 0.3, z_kind)
    assert rows.shape == (20_000, 2) and torch.all(rows[:, 0] == 7.0)
    assert torch.equal(seen[0][:, -1], rows[:, -1])  # the network saw the label it wrote
    share = float(rows[:, -1].mean())
    assert abs(share - 0.3) < 4 * math.sqrt(0.3 * 0.7 / 20_000)  # 4 binomial sd


@pytest.mark.parametrize("name,opts", [("dpgan", {"iterations": 3}),
                                       ("gpate", {"max_iter": 3, "batch": 2, "k_proj": 1,
                                                  "sigma1": 4.0, "sigma2": 4.0, "teachers": 2})])
def test_conditional_generators_keep_both_classes_at_the_prior(name, opts):
    gen = generators.get(name)(conditional=True, label_prior=0.4, **opts)
    out = gen.fit(table(), epsilon=5.0, seed=1).sample(2_000, seed=2)
    share = out["label"].mean()
    assert set(out["label"].unique()) == {0, 1}
    assert abs(share - 0.4) < 4 * math.sqrt(0.4 * 0.6 / 2_000)
    # same seeds, default (unconditional): still the old generator, label as an output
    plain = generators.get(name)(**opts).fit(table(), epsilon=5.0, seed=1).sample(50, seed=2)
    assert plain.shape == out.iloc[:50].shape


def test_conditional_options_are_checked_before_training():
    for name in ("dpgan", "gpate"):
        with pytest.raises(ConfigError, match="label_prior"):
            generators.get(name)(conditional=True, label_prior=1.0)
        with pytest.raises(ConfigError, match="conditional"):
            generators.get(name)(conditional="yes")
    bad = table().assign(label=lambda t: t["label"] * 2)
    with pytest.raises(DataError, match="0/1 label"):
        generators.get("dpgan")(conditional=True, iterations=1).fit(bad, epsilon=5.0, seed=0)
