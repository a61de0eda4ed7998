"""What makes a result part trustworthy: a checksum of its bytes and the audit it belongs to.

A part's name ends in the sha256 of its bytes (``part-<time>-<uuid>-<sha256>.parquet``),
so the checksum appears with the part in the one rename that publishes it: no sidecar
file that a crash could leave without its part, and nothing that pyarrow's own reader
of ``root/<table>/`` would take for a table. Parquet's footer parsing alone misses most
damage: a byte flipped inside a data page mostly decodes to another value (measured by
the red team: 25 of 300 flipped bytes silently changed values), so every byte is checked.

The part's footer names the manifest it was written under (``raudit.manifest``: the
manifest's ``spec_hash``), so rows of two audits are never read as one: a folder whose
manifest was deleted and then written by another audit still holds the first audit's
parts, and they say so.

Parts written before either existed (a name without a checksum, a footer without a
manifest) are checked as before: their footer must parse.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

GLOB = "part-*.parquet"
MANIFEST_KEY = b"raudit.manifest"
_CHECKSUM = re.compile(r"-([0-9a-f]{64})\.parquet$")


class DamagedPart(Exception):
    """A part whose bytes are not what was written (its message says how)."""


def encode(data: pa.Table, manifest: str | None) -> bytes:
    """``data`` as the bytes of one Parquet part, naming ``manifest`` in its footer."""
    if manifest is not None:
        data = data.replace_schema_metadata({**(data.schema.metadata or {}),
                                             MANIFEST_KEY: manifest.encode("ascii")})
    sink = pa.BufferOutputStream()
    pq.write_table(data, sink)
    out: bytes = sink.getvalue().to_pybytes()
    return out


def name(stamp: str, payload: bytes) -> str:
    """The file name of a part with these bytes written at ``stamp`` (the uuid keeps two
    writers of identical rows at the same microsecond apart: their temp files share a name)."""
    return f"part-{stamp}-{uuid.uuid4().hex[:16]}-{hashlib.sha256(payload).hexdigest()}.parquet"


def check(path: Path) -> str | None:
    """The manifest hash that the intact part at ``path`` names (None: a part written before
    parts named one); :class:`DamagedPart` if its bytes do not match the checksum in its
    name or its footer does not parse; FileNotFoundError if it is gone."""
    payload = path.read_bytes()
    match = _CHECKSUM.search(path.name)
    if match and hashlib.sha256(payload).hexdigest() != match.group(1):
        raise DamagedPart("checksum mismatch: its bytes changed after it was written")
    try:
        meta = pq.read_metadata(pa.BufferReader(payload))
        if meta.num_columns == 0:
            raise ValueError("no columns")
        kv = meta.metadata or {}
    except Exception as exc:  # noqa: BLE001 - any unreadable footer is damage
        raise DamagedPart(f"{type(exc).__name__}: {exc}") from exc
    manifest = kv.get(MANIFEST_KEY)
    return manifest.decode("ascii", "replace") if manifest is not None else None
