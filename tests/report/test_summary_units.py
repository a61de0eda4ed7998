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


def test_the_report_rebuilds_the_ensembles_views_from_its_dataset():
    """The ensemble's chosen view is a column range that depends on the attack's context;
    the report rebuilds it from the dataset, the target and the audit's seed."""
    from raudit.report.audits import _views

    row = pd.Series({"attack": "ensemble", "dataset": "worst-case", "seed": 0,
                     "threat_model": "black-box", "impl": "paper"})
    views = _views(row, pd.DataFrame({"target": ["4"]}))
    assert isinstance(views, dict)
    assert views["groundhog"] == slice(0, 15) and views["querybased"] == slice(15, 23)
    assert views["domias"] == slice(23, 24)
    missing = _views(pd.Series({**row.to_dict(), "dataset": "no-such-dataset"}),
                     pd.DataFrame({"target": ["4"]}))
    assert isinstance(missing, str) and "need its dataset" in missing
