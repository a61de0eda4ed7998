"""The utility benchmark on a local Ray cluster (2 CPUs) gives the same numbers as in-process."""

from __future__ import annotations

import pandas as pd
import pytest

ray = pytest.importorskip("ray")

from raudit.engine.driver import EngineConfig  # noqa: E402
from raudit.runs.utility import run_utility  # noqa: E402
from raudit.utility.plan import UtilityRequest  # noqa: E402
from raudit.utility.runner import frame  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _values(out):
    df = frame(out)
    key = ["impl", "fit_index", "sample_index", "classifier", "setting", "metric"]
    return df.sort_values(key)[key + ["value", "status"]].reset_index(drop=True)


def test_ray_equals_local_and_streams_one_part_per_chunk(cluster, tmp_path):
    req = UtilityRequest(impl="independent", dataset="breast-cancer", epsilons=(1.0, 5.0), fits=2,
                         samples=2, classifiers=("lr", "dt"), chunk_size=1)
    r = run_utility(req, tmp_path / "ray", EngineConfig(backend="ray", workers=2))
    assert r["fits_run"] == 4 and r["real_run"] and r["failed_chunks"] == 0 and "2 CPU actors" in r["placement"]
    assert len(list((tmp_path / "ray" / "utility").glob("part-*.parquet"))) == 5
    run_utility(req, tmp_path / "local", EngineConfig(backend="local"))
    pd.testing.assert_frame_equal(_values(tmp_path / "ray"), _values(tmp_path / "local"))
    assert [p["status"] for p in r["points"]] == ["ok", "ok"]
