"""Fixtures for the data tests: an isolated cache, the reference data when present, no network."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.request import urlopen as real_urlopen

import numpy as np
import pandas as pd
import pytest

from raudit.data import fetch, registry

_REPO = Path(__file__).resolve().parents[2]


def _find_shared() -> Path | None:
    candidates = [os.environ.get("RAUDIT_DATA_DIR"), _REPO.parent / "shared" / "data",
                  _REPO / "shared" / "data"]
    for c in candidates:
        if c and (Path(c) / "SHA256SUMS").is_file():
            return Path(c).resolve()
    return None


SHARED = _find_shared()


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Every test gets its own empty cache, no data dir, fresh parse caches and no network."""
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RAUDIT_DATA_DIR", raising=False)

    def offline_urlopen(url, *args, **kwargs):
        if not str(url).startswith("file:"):
            raise OSError(f"tests are offline: {url}")
        return real_urlopen(url, *args, **kwargs)

    monkeypatch.setattr(fetch, "urlopen", offline_urlopen)
    registry.clear_cache()
    yield
    registry.clear_cache()


@pytest.fixture
def shared_root() -> Path | None:
    """The folder of reference copies, or None where this machine has none."""
    return SHARED


@pytest.fixture
def shared_data(monkeypatch) -> Path:
    """The reference copies of the datasets as RAUDIT_DATA_DIR; skip when absent."""
    if SHARED is None:
        pytest.skip("reference datasets not found (set RAUDIT_DATA_DIR or provide ../shared/data)")
    monkeypatch.setenv("RAUDIT_DATA_DIR", str(SHARED))
    return SHARED


def credit_standin(n: int = 3000, positives: int = 6, seed: int = 0) -> pd.DataFrame:
    """A table with the Kaggle credit schema; one positive stored as 0.9999999 (the rounding bug)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 28)), columns=[f"V{i}" for i in range(1, 29)])
    df.insert(0, "Time", np.sort(rng.integers(0, 172_792, n)).astype(float))
    df["Amount"] = rng.gamma(1.0, 80.0, n).round(2)
    cls = np.zeros(n)
    cls[rng.choice(n, positives, replace=False)] = 1.0
    cls[np.flatnonzero(cls)[0]] = 0.9999999
    df["Class"] = cls
    return df


@pytest.fixture
def credit_dir(tmp_path, monkeypatch) -> Path:
    """A data dir holding a generated stand-in for creditcard.csv."""
    root = tmp_path / "credit_data"
    (root / "credit_card").mkdir(parents=True)
    credit_standin().to_csv(root / "credit_card" / "creditcard.csv", index=False)
    monkeypatch.setenv("RAUDIT_DATA_DIR", str(root))
    return root


def compress_lzw(data: bytes, *, maxbits: int = 16, block: bool = True,
                 clear_when_full: bool = False) -> bytes:
    """A small Unix-compress (.Z) writer, following ncompress's output routine.

    Codes go out in groups of eight; when the width grows or the table is
    cleared the writer pads to the end of the group. The LZW tests check this
    writer's output with ``gzip -d`` (which reads .Z) where gzip is installed,
    so it is not trusted on its own word.
    """
    out = bytearray(b"\x1f\x9d" + bytes([maxbits | (0x80 if block else 0)]))
    state = {"acc": 0, "nacc": 0, "n_bits": 9, "maxcode": 511, "mark": len(out), "clear": False}
    maxmaxcode = 1 << maxbits
    first = 257 if block else 256
    free_ent = first
    table: dict[tuple[int, int], int] = {}

    def output(code: int) -> None:
        s = state
        s["acc"] |= code << s["nacc"]
        s["nacc"] += s["n_bits"]
        while s["nacc"] >= 8:
            out.append(s["acc"] & 0xFF)
            s["acc"] >>= 8
            s["nacc"] -= 8
        if free_ent > s["maxcode"] or s["clear"]:
            if s["nacc"]:  # flush the partial byte, then pad to the end of the group
                out.append(s["acc"] & 0xFF)
                s["acc"] = s["nacc"] = 0
            while (len(out) - s["mark"]) % s["n_bits"]:
                out.append(0)
            s["mark"] = len(out)
            s["n_bits"] = 9 if s["clear"] else s["n_bits"] + 1
            s["clear"] = False
            s["maxcode"] = maxmaxcode if s["n_bits"] == maxbits else (1 << s["n_bits"]) - 1

    if not data:
        return bytes(out)
    ent = data[0]
    for c in data[1:]:
        if (ent, c) in table:
            ent = table[(ent, c)]
            continue
        output(ent)
        if free_ent < maxmaxcode:
            table[(ent, c)] = free_ent
            free_ent += 1
        elif block and clear_when_full:
            table.clear()
            free_ent = first
            state["clear"] = True
            output(256)
        ent = c
    output(ent)
    if state["nacc"]:
        out.append(state["acc"] & 0xFF)
    return bytes(out)


@pytest.fixture
def compress_z():
    """The test .Z writer, as a fixture so test modules need not import conftest."""
    return compress_lzw
