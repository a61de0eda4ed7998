"""Fault suite, promise: every bad input is refused before work, with one line.

Each test names the red team's defect (issue 46) it keeps from coming back."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.runs import limits

LOCAL = EngineConfig(backend="local")


# ------------------------------------------------ 8: the memory check misses tall tables

def _tall(rows: int, cols: int):
    """A dataset's shape without its bytes: the check reads only the shape and the label."""
    return SimpleNamespace(name="tall", classes=2, label="y", train=SimpleNamespace(shape=(rows, cols)))


def test_tall_table_refused_by_the_target_selections_chunks():
    # issue 46 item 8: 1.8M rows x 11 columns, -S 5. The game's chunks hold 5 models, but
    # the target selection trains its pool of 200 in chunks of --chunk-size 100: ~100 x
    # 0.35 GB. The check used to count chunks of 5 (~3 GB) and the run grew until the
    # kernel killed it.
    req = AuditRequest(impl="paper", attack="groundhog", shadow_models=5)
    machine = limits.Machine(cpus=2, gpus=0, memory=16 << 30)
    with pytest.raises(ConfigError, match=r"needs about .* chunks of 100\b"):
        limits.check_audit(req, LOCAL, _tall(1_800_000, 11), machine)


def test_chunk_is_the_largest_phase_of_the_audit():
    pool = AuditRequest(impl="paper", shadow_models=5, selection_models=40)
    assert limits.largest_chunk(pool, selects=True) == 40
    assert limits.largest_chunk(pool, selects=False) == 5  # a fixed target: no selection
    pairs = AuditRequest(impl="paper", shadow_models=5, target_selection="per-candidate",
                         target_pairs=30, chunk_size=16)
    assert limits.largest_chunk(pairs, selects=True) == 16


def test_tall_table_that_fits_runs_the_check_through():
    # the same audit with a fixed target and small chunks fits in 16 GiB
    req = AuditRequest(impl="paper", attack="groundhog", shadow_models=5, target="0",
                       chunk_size=5)
    limits.check_audit(req, LOCAL, _tall(1_800_000, 11),
                       limits.Machine(cpus=2, gpus=0, memory=16 << 30))
