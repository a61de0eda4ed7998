"""The external (data-only) threat model: the attacker sees synthetic files a user made
elsewhere, S from D_in and S from D_out; ``raudit audit --synthetic-in A --synthetic-out B``.

Its sampling is the user's: the i-th file of a folder, in name order, is shadow model i
of that world (:func:`raudit.audit.external.read_worlds`); the game and its bounds are
:func:`raudit.audit.external.run_external`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raudit.audit.external import run_external, synthetic_files
from raudit.audit.flags import ENGINE, GENERATOR, SELECTION
from raudit.errors import ConfigError
from raudit.runs.audit_settings import AuditSettings
from raudit.runs.threats import ThreatModel

if TYPE_CHECKING:
    from raudit.audit.runner import AuditRequest
    from raudit.engine.driver import EngineConfig
    from raudit.runs.schedule import Progress

__all__ = ["EXTERNAL", "External"]


class External(ThreatModel):
    """A user's synthetic CSV/Parquet files as the shadow models; no generator runs."""

    name = "external"
    # the files are the shadow models (as many as the folders hold): no generator is
    # trained, selected, staged or run in chunks
    idle = (*SELECTION, "first_stage", "samples_per_model", "synthetic_rows",
            "shadow_models", *GENERATOR, *ENGINE)
    what = "a data-only audit (the files are the shadow models)"

    def check(self, s: AuditSettings) -> None:
        if s.synthetic_in is None or s.synthetic_out is None:
            raise ConfigError("a data-only audit needs both --synthetic-in and --synthetic-out")
        if s.one_run:
            raise ConfigError("--one-run trains its one run; a data-only audit "
                              "(--synthetic-in/--synthetic-out) has no canaries")
        if s.alpha_spending or s.sequential is not None:
            raise ConfigError("a data-only audit reads the files it is given: it takes no "
                              "sequential stop (--target-width, --until-ceiling, -S auto, "
                              "--sequential)")
        self.worlds(s)  # a missing or empty folder: its one line before the data loads

    def worlds(self, s: AuditSettings) -> dict[str, list[Path]]:
        """Each world's files in the order they become shadow models 0, 1, ..."""
        return {"in": synthetic_files(Path(str(s.synthetic_in)), "--synthetic-in"),
                "out": synthetic_files(Path(str(s.synthetic_out)), "--synthetic-out")}

    def default_out(self, s: AuditSettings, shadow_models: int) -> Path:
        from raudit.attacks import get as get_attack

        ds_name = s.dataset or get_attack(s.attack).default_dataset
        return Path("runs") / f"audit-external-{s.attack}-{Path(ds_name).stem}-s{s.seed}"

    def run(self, s: AuditSettings, req: AuditRequest, out: Path, engine: EngineConfig, *,
            auto_chunk: bool, progress: Progress | None = None,
            notice: Callable[[str], None] | None = None) -> dict[str, Any]:
        return run_external(req, Path(str(s.synthetic_in)), Path(str(s.synthetic_out)), out)


EXTERNAL = External()
