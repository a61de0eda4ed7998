"""The violations table: its categories and one measured cell.

The first nine categories are the columns of the reproduction study's table 2
(privacy violations, then the two "other bugs" columns); the last three are measured
too but are not in the study's table. A cell's ``evidence`` is the measurement (with
numbers) that decided its ``status``; nothing here knows any implementation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["CATEGORIES", "EXTRA", "STATUSES", "STUDY", "Cell", "cell"]

#: (key, the study's column title); in the study's order
STUDY: tuple[tuple[str, str], ...] = (
    ("pate", "PATE"),
    ("data_partition", "Data Partition"),
    ("moments_accountant", "Moments Accountant"),
    ("metadata", "Metadata"),
    ("laplace_noise", "Laplace Noise"),
    ("delta_scale", "δ Scale"),
    ("labels_distribution", "Labels Distribution"),
    ("teachers", "Teachers"),  # other bug
    ("processing", "Processing"),  # other bug
)
#: measured as well, not columns of the study's table 2
EXTRA: tuple[tuple[str, str], ...] = (
    ("student_real_records", "Student saw real records"),
    ("uncharged_queries", "Uncharged queries"),
    ("overshoot", "Overshoot"),
)
CATEGORIES = tuple(k for k, _ in STUDY + EXTRA)
TITLES = dict(STUDY + EXTRA)
OTHER_BUGS = ("teachers", "processing")
STATUSES = ("violated", "ok", "not_checked", "not_applicable")
SYMBOL = {"violated": "✗", "ok": "", "not_checked": "?", "not_applicable": "-"}


@dataclass(frozen=True)
class Cell:
    """One measured cell: ``status`` in STATUSES, ``evidence`` the numbers behind it."""

    category: str
    status: str
    evidence: str
    plot: str = ""

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"unknown category {self.category!r}")
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["study_column"] = self.category in dict(STUDY)
        return d


def cell(category: str, violated: bool, evidence: str, plot: str = "") -> Cell:
    return Cell(category, "violated" if violated else "ok", evidence, plot)
