"""The report's audit table counts models in one unit (issue 49 item 5): the summary's
shadow_models is per world, models_ok and missing count both worlds, and the table
showed `shadow_models 1000` beside `models_ok 2000`."""

from __future__ import annotations

import pandas as pd

from raudit.report.audits import summary_table


def test_models_ok_sits_beside_the_models_of_both_worlds():
    rows = pd.DataFrame([{"impl": "paper", "attack": "querybased", "shadow_models": 1000,
                          "models_ok": 2000, "missing": 0, "eps_cp": 1.0}])
    table = summary_table(rows)
    assert "shadow_models" not in table.columns
    assert table["models"].iloc[0] == table["models_ok"].iloc[0] == 2000
    cols = list(table.columns)
    assert cols.index("models_ok") == cols.index("models") + 1
