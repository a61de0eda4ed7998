"""`gan`: the non-private baseline; its default draws the label from the training marginal."""

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.batch_types import TrainBatch
from raudit.generators.gan.vanilla import label_marginal

Gan = generators.get("gan")


def table(n=300, share=0.1, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(0, 1, n), "b": rng.integers(0, 4, n)})
    df["label"] = (rng.random(n) < share).astype(int)
    return df


def test_label_marginal_ignores_padding_rows():
    x = torch.zeros(2, 4, 2)
    x[0, :, 1] = torch.tensor([0.0, 1.0, 1.0, 1.0])  # 3 valid rows: share 2/3
    x[1, :, 1] = torch.tensor([0.2, 0.8, 0.2, 0.8])  # 4 valid rows, encoded 0.2 / 0.8
    got = label_marginal(TrainBatch(x, torch.tensor([3, 4]), [0, 1]))
    assert got[0].tolist() == pytest.approx([0.0, 1.0, 2 / 3])
    assert got[1].tolist() == pytest.approx([0.2, 0.8, 0.5])


def test_default_samples_both_classes_at_the_training_share():
    # the paper's literal GAN rounds a 10 % label column to 0 for every row; the default
    # draws it from the marginal, so 4,000 rows hold 400 +- 4 sd (binomial sd 19) positives
    tables = [table(share=0.1, seed=1), table(share=0.5, seed=2)]
    models = Gan(iterations=20).fit_many(tables, epsilon=1.0, seeds=[3, 4])
    for model, t in zip(models, tables):
        y = model.sample(4000, seed=5)["label"]
        assert set(np.unique(y)) <= {0, 1}
        share = t["label"].mean()
        assert abs(y.mean() - share) < 4 * np.sqrt(share * (1 - share) / 4000)


def test_same_seed_same_rows_and_presets():
    a = Gan(iterations=10).fit_many([table()], epsilon=1.0, seeds=[7])[0].sample(50, seed=1)
    b = Gan(iterations=10).fit_many([table()], epsilon=1.0, seeds=[7])[0].sample(50, seed=1)
    pd.testing.assert_frame_equal(a, b)
    paper = Gan(preset="paper", iterations=10)
    assert (paper.options["conditional"], paper.options["output"], paper.options["z"]) == \
        (False, "sigmoid", "uniform")
    rows = paper.fit_many([table()], epsilon=1.0, seeds=[7])[0].sample(50, seed=1)
    assert rows.shape == (50, 3)


@pytest.mark.parametrize("kw", [{"preset": "wide"}, {"output": "tanh"}, {"z": "cauchy"},
                                {"conditional": "yes"}])
def test_bad_options_are_one_line_config_errors(kw):
    with pytest.raises(ConfigError):
        Gan(**kw)
