"""The pure-Python Unix-compress decoder, checked against gzip's own .Z reader."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from raudit.data import lzw
from raudit.errors import DataError

SETTINGS = [
    {},  # 16-bit codes, block mode: what `compress` writes by default
    {"maxbits": 12},  # the table fills and stays full
    {"maxbits": 10, "clear_when_full": True},  # many clear codes
    {"maxbits": 12, "clear_when_full": True},
    {"block": False, "maxbits": 11},  # no clear code at all
]


@pytest.fixture(scope="module")
def text() -> bytes:
    # ISOLET-like numeric text long enough to reach every code width.
    rng = random.Random(0)
    words = [bytes(rng.choice(b"0123456789.-, ") for _ in range(rng.randint(1, 8))) for _ in range(300)]
    return b"".join(rng.choice(words) for _ in range(40_000))


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_roundtrip(text, compress_z, settings):
    packed = compress_z(text, **settings)
    assert lzw.decompress(packed) == text


@pytest.mark.skipif(shutil.which("gzip") is None, reason="gzip not installed")
@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_writer_agrees_with_gzip(text, compress_z, settings):
    """gzip -d is an independent reader: it vouches that the test writer emits real .Z files."""
    packed = compress_z(text, **settings)
    assert subprocess.run(["gzip", "-dc"], input=packed, capture_output=True, check=True).stdout == text


@pytest.mark.parametrize("blob", [b"", b"a", b"ab", b"abababababababab", bytes(range(256)) * 3])
def test_short_inputs(compress_z, blob):
    assert lzw.decompress(compress_z(blob)) == blob


def test_bad_streams_raise_data_error(compress_z):
    with pytest.raises(DataError, match="magic"):
        lzw.decompress(b"PK\x03\x04")
    with pytest.raises(DataError, match="flags"):
        lzw.decompress(b"\x1f\x9d\x20")
    packed = compress_z(b"hello hello hello hello")
    with pytest.raises(DataError, match="corrupt"):
        lzw.decompress(packed[:3] + b"\xff\xff\xff")
