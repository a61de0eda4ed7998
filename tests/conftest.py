"""Suite-wide settings: the reference data folder when it exists, and a quiet Ray."""

from __future__ import annotations

import os
from pathlib import Path

_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
if "RAUDIT_DATA_DIR" not in os.environ and (_SHARED / "SHA256SUMS").is_file():
    os.environ["RAUDIT_DATA_DIR"] = str(_SHARED)
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import torch  # noqa: E402

# Tiny networks on a 2-core machine: intra-op threads only add contention.
torch.set_num_threads(1)
