"""An audit's summary row: the analysis of its stored models, the verdict, the
mechanism's eps beside it, and the estimates table, appended once per audit (a rerun
that changed nothing adds no row). Every audit kind writes through
:func:`append_summary`: the shadow-model game (:func:`summarise`), transcript, one-run
and data-only audits. Split from :mod:`raudit.audit.runner` (request and plan).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from raudit.audit import analyse as an
from raudit.audit.estimators import estimate_rows
from raudit.audit.game import Game
from raudit.audit.guard import check_models, first_error
from raudit.audit.mechanisms import mechanism_columns
from raudit.audit.verdict import ALPHA, tightness, verdict, verdict_line
from raudit.results import ResultStore

if TYPE_CHECKING:
    from raudit.audit.runner import AuditRequest


def summarise(req: AuditRequest, game: Game, ds, store: ResultStore, audit_id: str,
              ids: set[str], units: int, wall_s: float,
              result: dict[str, Any] | None = None) -> dict[str, Any]:
    """Analyse the stored models of ``ids``, append the summary row (once) and return it.

    ``result``: the analysis already made (a sequential audit's last look).
    Raises :class:`AuditFailed` when no model of the audit trained."""
    check_models(store, ids, len(ids))
    shadow = store.read("shadow")
    if result is None:
        views = None
        if game.white_box is not None:  # it chooses its features on validation
            from raudit.audit.whitebox import views as white_box_views

            views = white_box_views(game.impl)
        else:  # an attack with views (ensemble) chooses among them on validation
            views = attack_views(game.spec(), ds)
        result = an.analyse(shadow, trial_ids=ids, seed=game.seed, delta=game.delta,
                            views=views)
    else:
        game = dataclasses.replace(game, shadow_models=int(result["models_per_world"]))
    rate = units / wall_s * 3600 if units and wall_s > 0 else None
    label = "worst-case" if req.target == "worst-case" or (
        req.target is None and "target_row" in ds.notes) else f"row:{game.target}"
    row = an.summary_row(game.spec(), result, audit_id=audit_id, target_label=label,
                         models_per_hour=rate)
    row["synthetic_protocol"] = game.synthetic_protocol
    row["feature_view"] = result.get("feature_view")
    if "looks" in result:
        row.update(looks=int(result["looks"]), stop_reason=result["stop_reason"])
    if "eps_anytime" in result:
        row["eps_anytime"] = float(result["eps_anytime"])
    # the mechanism's eps_true first: the verdict says when the audit exceeds it
    row.update(mechanism_columns(game, an.ok_rows(shadow, ids)))
    row["verdict"] = verdict(row)
    row["first_error"] = first_error(shadow, ids) if result["missing"] else None
    row["tightness"] = tightness(row)
    row["verdict_line"] = verdict_line(row)
    values = estimates_of(result)
    append_summary(store, row, values, alpha=result.get("alpha", ALPHA))
    return {**row, "estimates": values}


def attack_views(game_spec: dict[str, Any], ds) -> dict[str, slice] | None:
    """The column views of the game's attack for its context (None: the attack has none)."""
    from raudit.attacks import get as get_attack
    from raudit.audit.chunk import attack_context

    attack = get_attack(game_spec["attack"])
    if not attack.views or game_spec["features"] != attack.default_features:
        return None
    return attack.view_slices(attack_context(ds.train, game_spec, ds.test))


def estimates_of(result: dict[str, Any]) -> dict[str, float | None]:
    """{estimator: eps_lo or None} of an analysis (None for NaN: no bound)."""
    values = result.get("estimates") or {}
    return {k: None if v is None or math.isnan(v) else float(v) for k, v in values.items()}


def append_summary(store: ResultStore, row: dict, values: dict[str, float | None],
                   alpha: float) -> None:
    """One summary row per audit, and its estimates beside it: a rerun that changed
    nothing adds none."""
    prev = store.read("summary")
    prev = prev[prev["audit_id"] == row["audit_id"]]
    if len(prev):
        last = prev.iloc[-1]
        same = all(_same(last[k], row[k]) for k in ("models_ok", "missing", "eps_cp", "auc"))
        if same:
            return
    store.append("summary", [row])
    rows = estimate_rows(row["audit_id"], values, alpha)
    if rows:
        store.append("estimates", [{**r, "created_at": row["created_at"]} for r in rows])


def _same(a, b) -> bool:
    """Equal numbers, or both missing (None, NaN, pd.NA)."""
    a, b = (None if x is None or pd.isna(x) else float(x) for x in (a, b))
    return a == b


def counted_both_worlds(r: Mapping[str, Any]) -> dict[str, Any]:
    """The summary with ``models`` (both worlds, as ``models_ok`` and ``missing`` count, and
    as the table and the report show it) in place of the per-world ``shadow_models``, which
    stays as ``models_per_world``: "shadow_models 1000" beside "models_ok 2000" read as
    twice as many models finished as were asked."""
    out: dict[str, Any] = {}
    for k, v in r.items():
        if k == "shadow_models":
            out["models"] = None if v is None else 2 * int(v)
            out["models_per_world"] = v
        else:
            out[k] = v
    return out
