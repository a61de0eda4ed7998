"""What the Python API returns: one object per command, around the dict its ``--json`` prints.

Each keeps that dict (``.summary``), the results folder (``.out``), the tables as pandas
DataFrames (read from the folder when asked), and shows itself in a notebook
(``_repr_html_``; ``to_html()`` for a page): an audit as the report's verdict box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["AuditResult", "TrainResult", "UtilityResult", "InspectResult", "CampaignResult",
           "CampaignPlan", "ReportResult"]

# the report's verdict box (raudit.report.render.CSS), inline so a notebook cell needs no page
def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _table(folder: Path, name: str) -> pd.DataFrame:
    """A Parquet table of a results folder, or an empty frame when the run wrote none."""
    path = folder / name
    return pd.read_parquet(path) if path.exists() else pd.DataFrame()


def _kv_html(rows: list[tuple[str, str]]) -> str:
    return "<table>" + "".join(f"<tr><th style='text-align:left'>{escape(k)}</th>"
                               f"<td style='text-align:left'>{escape(v)}</td></tr>"
                               for k, v in rows) + "</table>"


@dataclass(frozen=True)
class AuditResult:
    """An audit: the verdict, the bounds and estimates, the shadow table, the folder."""

    summary: dict[str, Any]  # what `raudit audit --json` prints

    @property
    def out(self) -> Path:
        return Path(self.summary["out"])

    @property
    def verdict(self) -> str:
        """The verdict sentence (claimed eps against what this audit shows)."""
        return str(self.summary.get("verdict") or "")

    @property
    def epsilon(self) -> float:
        """The claimed eps."""
        return float(self.summary["epsilon"])

    @property
    def eps_lower(self) -> float | None:
        """The eps lower bound the verdict reads (:func:`raudit.audit.verdict.audited_eps`):
        the larger of eps_cp (Clopper-Pearson, 90% confidence) and eps_curve, or an anytime
        or one-run audit's own bound (those have no eps_cp). ``summary["eps_cp"]`` is CP's."""
        from raudit.audit.verdict import audited_eps

        return _num(audited_eps(self.summary))

    @property
    def eps_max(self) -> float | None:
        """The most eps_cp could show with this many test models (its ceiling)."""
        return _num(self.summary.get("eps_max"))

    @property
    def auc(self) -> float | None:
        return _num(self.summary.get("auc"))

    @property
    def violated(self) -> bool:
        """Whether the audit's bound (the larger of eps_cp and the curve bound, as the
        verdict reads it) is above the claimed eps (the report's red box)."""
        from raudit.audit.verdict import violated

        return violated(self.summary)

    @property
    def estimates(self) -> dict[str, float | None]:
        """Every registered estimator's eps (raudit.audit.estimators), by name."""
        from raudit.audit.estimators import values_of
        return dict(values_of(self.summary))

    @property
    def shadow(self) -> pd.DataFrame:
        """One row per shadow model (its world, seed, score, status)."""
        return _table(self.out, "shadow")

    def to_frame(self) -> pd.DataFrame:
        """The summary as one row (concatenate several to compare generators)."""
        return pd.DataFrame([{k: v for k, v in self.summary.items()
                              if not isinstance(v, (dict, list))}])

    def to_html(self) -> str:
        """The verdict box and the main numbers, as the report shows them."""
        from raudit.audit.threat_model import trials_of
        from raudit.audit.verdict import caution
        from raudit.report.render import verdict_style

        box = verdict_style("violated" if self.violated else
                            "caution" if caution(self.summary) else "pass")
        s = self.summary
        label = f"{s.get('impl')} vs {s.get('attack')} on {s.get('dataset')}"
        trials = trials_of(s)  # what ran: shadow models, files, mechanism trials or one run
        ran = (("one run", f"{s.get('canaries')} canaries") if trials.kind == "canaries" else
               (trials.plural, f"{s.get('models_ok')} ok"))
        rows = [("AUC (test)", _fmt(self.auc)),
                # the bound the verdict reads: a one-run audit has no CP bound and no ceiling
                ("eps_emp (lower bound)", _fmt(self.eps_lower) + ("" if self.eps_max is None
                                                                  else f" of max {_fmt(self.eps_max)}")),
                ("claimed eps", f"{self.epsilon:g}"),
                ran,
                ("results", str(self.out))]
        return (f'<div><p style="{box}"><strong>{escape(label)}</strong>: '
                f"{escape(self.verdict)}</p>{_kv_html(rows)}</div>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"AuditResult(eps_lower={_fmt(self.eps_lower)}, out={str(self.out)!r}): {self.verdict}"


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


@dataclass(frozen=True)
class TrainResult:
    """One trained generator: its synthetic table, its summary.json and warnings."""

    summary: dict[str, Any]
    synthetic: pd.DataFrame
    out: Path
    warnings: list[str] = field(default_factory=list)

    @property
    def iterations(self) -> int:
        return int(self.summary["iterations"])

    @property
    def eps_hat(self) -> float | None:
        """The generator's own accountant's eps after training (None where it has none)."""
        return _num(self.summary.get("eps_hat"))

    def to_html(self) -> str:
        s = self.summary
        rows = [("generator", str(s["impl"])), ("dataset", str(s["dataset"])),
                ("iterations", str(self.iterations)),
                ("eps_hat", f"{_fmt(self.eps_hat, 4)} (eps {s['epsilon']:g})"),
                ("rows", f"{len(self.synthetic):,}"), ("results", str(self.out))]
        warn = "".join(f"<p>warning: {escape(w)}</p>" for w in self.warnings)
        return f"<div>{_kv_html(rows)}{warn}</div>"

    def _repr_html_(self) -> str:
        return self.to_html()


@dataclass(frozen=True)
class UtilityResult:
    """A utility benchmark: the per-classifier AUROCs (Settings A/B/C) and the summary per
    sweep point."""

    summary: dict[str, Any]  # what `raudit utility --json` prints

    @property
    def out(self) -> Path:
        return Path(self.summary["out"])

    @property
    def per_classifier(self) -> pd.DataFrame:
        """One row per (sweep point, classifier, setting, metric): best, mean, se."""
        return pd.DataFrame(self.summary.get("per_classifier") or [])

    @property
    def points(self) -> pd.DataFrame:
        """One row per sweep point (the study's table 4)."""
        return pd.DataFrame(self.summary.get("points") or [])

    @property
    def fits(self) -> pd.DataFrame:
        """The stored table: one row per fit, sample and classifier."""
        return _table(self.out, "utility")

    @property
    def failed(self) -> list[str]:
        """Errors of classifiers and fits that failed (empty when all ran)."""
        return list(self.summary.get("failures") or [])

    def to_html(self) -> str:
        from raudit.report.render import verdict_style

        failed = "".join(f'<p style="{verdict_style("violated")}">failed: '
                         f"{escape(f)}</p>" for f in self.failed)  # never a green result
        return (f"<div><p><strong>utility of {escape(str(self.summary.get('impl')))} on "
                f"{escape(str(self.summary.get('dataset')))}</strong> -> {escape(str(self.out))}"
                f"</p>{failed}{self.points.to_html(index=False) if not self.points.empty else ''}"
                "</div>")

    def _repr_html_(self) -> str:
        return self.to_html()


@dataclass(frozen=True)
class InspectResult:
    """Instrumented training: the violations table (the study's table 2) per generator."""

    runs: list[dict[str, Any]]  # what `raudit inspect --json` prints
    out: Path | None

    @property
    def violations(self) -> pd.DataFrame:
        """One row per generator and check: status (violated, ok, not checked, ...)."""
        return pd.DataFrame([{"impl": r["impl"], **v} for r in self.runs
                             for v in r.get("violations", [])])

    def text(self) -> str:
        """The table as `raudit inspect` prints it."""
        from raudit.inspect.report import table_text
        return table_text(self.runs)

    def to_html(self) -> str:
        return f"<pre>{escape(self.text())}</pre>"

    def _repr_html_(self) -> str:
        return self.to_html()


@dataclass(frozen=True)
class CampaignResult:
    """A campaign: every job's status and result, the folder (tables partitioned by job)."""

    summary: dict[str, Any]  # what `raudit campaign --json` prints

    @property
    def out(self) -> Path:
        return Path(self.summary["out"])

    @property
    def jobs(self) -> pd.DataFrame:
        """One row per job: name, kind, status and its result's scalar fields."""
        return pd.DataFrame([{"job": name, **{k: v for k, v in r.items()
                                              if not isinstance(v, (dict, list))}}
                             for name, r in self.summary["jobs"].items()])

    @property
    def failed_jobs(self) -> list[str]:
        return list(self.summary.get("failed_jobs") or [])

    def table(self, name: str) -> pd.DataFrame:
        """A stored table of every job (``summary``, ``shadow``, ``utility``), with ``job``."""
        return _table(self.out, name)

    def to_html(self) -> str:
        return (f"<div><p><strong>campaign {escape(str(self.summary['name']))}</strong> -> "
                f"{escape(str(self.out))}</p>{self.jobs.to_html(index=False)}</div>")

    def _repr_html_(self) -> str:
        return self.to_html()


@dataclass(frozen=True)
class CampaignPlan:
    """A campaign checked and planned, not run (``dry_run=True``)."""

    name: str
    rows: list[dict[str, Any]]  # what `raudit campaign --dry-run --json` prints as jobs

    @property
    def table(self) -> pd.DataFrame:
        """One row per job: kind, models, model-iterations, estimated time."""
        return pd.DataFrame(self.rows)

    def _repr_html_(self) -> str:
        return (f"<div><p><strong>campaign {escape(self.name)}</strong> (plan)</p>"
                f"{self.table.to_html(index=False)}</div>")


@dataclass(frozen=True)
class CampaignExport:
    """The rows a campaign finished so far, written to ``file`` (``export=``)."""

    file: Path
    jobs: list[str]
    files: int
    bytes: int


@dataclass(frozen=True)
class ReportResult:
    """A written report: its page, figures and tables."""

    page: Path
    sections: list[str]
    figures: list[Path]
    tables: list[Path]

    def to_html(self) -> str:
        return (f"<p>report: <a href='{escape(self.page.as_posix(), quote=True)}'>"
                f"{escape(str(self.page))}</a> ({escape(', '.join(self.sections))}; "
                f"{len(self.figures)} figures, {len(self.tables)} tables)</p>")

    def _repr_html_(self) -> str:
        return self.to_html()
