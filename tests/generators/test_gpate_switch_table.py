"""tools/gpate_switch_table.py's own arithmetic: the teachers one record reaches, and the
data-independent eps of a run's queries at that reach (the table's fourth column)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from raudit import generators
from raudit.accountants.gnmax import DEFAULT_ORDERS, rdp_gnmax_independent, rdp_threshold_independent

_PATH = Path(__file__).resolve().parents[2] / "tools" / "gpate_switch_table.py"
_spec = importlib.util.spec_from_file_location("gpate_switch_table", _PATH)
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)


def test_a_record_reaches_its_slot_only_with_shared_state():
    assert tool.reach(30, 40, False) == 1
    assert tool.reach(30, 40, True) == 30  # one slot holds all 30 teachers
    assert tool.reach(4000, 40, True) == 40  # the authors' eps = 1 run: 100 slots of 40
    assert tool.reach(10, 4, True) == 4  # 3 slots: teachers 0, 3, 6, 9 share slot 0


def test_at_reach_one_it_is_the_runs_own_data_independent_eps():
    rng = np.random.default_rng(0)
    df = __import__("pandas").DataFrame(rng.normal(size=(120, 3)), columns=list("abc"))
    df["label"] = (df.a > 0).astype(int)
    gen = generators.get("gpate")(preset="paper-tabular", max_iter=2)
    gen.fit(df, epsilon=1e4, seed=0)
    s = gen.summary()
    assert tool.independent_eps(6.0, 2.0, s["queries"], s["answered"], 1) == pytest.approx(
        s["eps_data_independent"], rel=1e-12)


def test_a_record_moving_s_votes_costs_s_squared_the_rdp():
    o = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    for f in (rdp_threshold_independent, rdp_gnmax_independent):
        np.testing.assert_allclose(f(5.0 / 3, o), 9 * f(5.0, o), rtol=1e-12)
    assert tool.independent_eps(5.0, 2.0, 75, 40, 3) > tool.independent_eps(5.0, 2.0, 75, 40, 1)
