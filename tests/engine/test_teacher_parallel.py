"""`raudit train --parallel teachers`: teacher shards on a local 2-CPU Ray cluster."""

import json

import numpy as np
import pytest
import ray
from typer.testing import CliRunner

from raudit import data, generators
from raudit.cli.app import app
from raudit.engine.teachers import fit_teacher_parallel
from raudit.errors import ConfigError

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_teacher_parallel_equals_local_training(local_ray):
    ds = data.load("breast-cancer")
    Paper = generators.get("paper")
    spread = fit_teacher_parallel(Paper(teachers=4, max_iter=4, dtype="float64"), ds.train,
                                  epsilon=1.0, delta=1e-5, seed=3, columns=ds.columns, workers=2)
    local = Paper(teachers=4, max_iter=4, dtype="float64").fit(ds.train, epsilon=1.0, seed=3,
                                                               columns=ds.columns)
    assert spread.summary()["eps_hat"] == pytest.approx(local.summary()["eps_hat"], rel=1e-12)
    np.testing.assert_allclose(spread.sample(30, seed=1).to_numpy(float),
                               local.sample(30, seed=1).to_numpy(float), atol=1e-9)


def test_more_workers_than_teachers_is_an_error(local_ray):
    ds = data.load("breast-cancer")
    with pytest.raises(ConfigError, match="more than the 2 teachers"):
        fit_teacher_parallel(generators.get("paper")(teachers=2, max_iter=1), ds.train, epsilon=1.0,
                             delta=1e-5, seed=0, columns=ds.columns, workers=3)


def test_cli_parallel_teachers(tmp_path):
    res = CliRunner().invoke(app, ["train", "--parallel", "teachers", "--workers", "2", "--teachers", "4",
                                   "--max-iter", "3", "--out", str(tmp_path / "o"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["options"]["parallel"] == "teachers"


def test_cli_parallel_teachers_rejects_generators_without_teachers(tmp_path):
    res = CliRunner().invoke(app, ["train", "--impl", "identity", "--parallel", "teachers",
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no teacher ensemble" in res.stderr
