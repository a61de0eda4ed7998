"""Resolving, downloading (file:// URLs and a fake urlopen; no network), verifying and importing."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from raudit import data
from raudit.data import cache, fetch
from raudit.data.registry import DATASETS
from raudit.data.sources import DataFile
from raudit.errors import ChecksumError, DataError, DataUnavailable, UnknownNameError

CONTENT = b"a,b,label\n1,2,0\n3,4,1\n"


def replace_source(monkeypatch, name: str, **changes) -> None:
    """Dataset ``name``'s record with its source changed, for this test only."""
    real = DATASETS.get
    entry = real(name)
    changed = dataclasses.replace(entry, source=dataclasses.replace(entry.source, **changes))
    monkeypatch.setattr(DATASETS, "get", lambda n: changed if n == name else real(n))


def sha256(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def write(path: Path, blob: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(blob)
    return path


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    return path


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    assert cache.cache_dir() == tmp_path / "cache" / "data"
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cache.cache_dir() == tmp_path / "elsewhere" / "data"
    assert cache.data_dir() is None


def test_data_dir_comes_before_the_cache(tmp_path, monkeypatch):
    f = DataFile("x/t.csv", sha256(CONTENT))
    write(cache.cache_dir() / f.relpath, CONTENT)
    assert cache.locate(f) == (cache.cache_dir() / f.relpath, "cache")
    write(tmp_path / "dd" / f.relpath, CONTENT)
    monkeypatch.setenv("RAUDIT_DATA_DIR", str(tmp_path / "dd"))
    assert cache.locate(f) == ((tmp_path / "dd" / f.relpath).resolve(), "data dir")
    assert fetch.fetch([f]) == ((tmp_path / "dd" / f.relpath).resolve(),)


def test_tampered_data_dir_file_raises_checksum_error(tmp_path, monkeypatch):
    relpath = data.source("cervical").files[0].relpath
    bad = write(tmp_path / relpath, b"Biopsy\n1\n")
    monkeypatch.setenv("RAUDIT_DATA_DIR", str(tmp_path))
    with pytest.raises(ChecksumError) as err:
        data.load("cervical")
    msg = str(err.value)
    assert str(bad) in msg and sha256(b"Biopsy\n1\n") in msg
    assert data.source("cervical").files[0].sha256 in msg


def test_download_from_file_url_verifies_and_stores(tmp_path, monkeypatch):
    src = write(tmp_path / "remote" / "t.csv", CONTENT)
    f = DataFile("x/t.csv", sha256(CONTENT), (src.as_uri(),))
    (path,) = fetch.fetch([f])
    assert path == cache.cache_dir() / "x/t.csv" and path.read_bytes() == CONTENT
    assert [p.name for p in path.parent.iterdir()] == ["t.csv"]  # no temp files left

    def no_download(*a, **k):
        raise AssertionError("a cached file must not be downloaded again")

    monkeypatch.setattr(fetch, "urlopen", no_download)
    assert fetch.fetch([f]) == (path,)


def test_download_with_wrong_checksum_leaves_the_cache_empty(tmp_path):
    src = write(tmp_path / "remote" / "t.csv", CONTENT + b"5,6,0\n")
    f = DataFile("x/t.csv", sha256(CONTENT), (src.as_uri(),))
    with pytest.raises(ChecksumError) as err:
        fetch.fetch([f])
    assert sha256(CONTENT + b"5,6,0\n") in str(err.value) and sha256(CONTENT) in str(err.value)
    assert src.as_uri() in str(err.value)
    folder = cache.cache_dir() / "x"
    assert not folder.exists() or list(folder.iterdir()) == []


def test_first_working_mirror_is_used(tmp_path):
    src = write(tmp_path / "remote" / "t.csv", CONTENT)
    f = DataFile("x/t.csv", sha256(CONTENT), ((tmp_path / "missing.csv").as_uri(), src.as_uri()))
    assert fetch.fetch([f])[0].read_bytes() == CONTENT


def test_unreachable_urls_give_one_line_with_the_fixes(tmp_path):
    f = DataFile("x/t.csv", sha256(CONTENT), ("https://example.invalid/t.csv",))
    with pytest.raises(DataError) as err:
        fetch.fetch([f], dataset="demo")
    msg = str(err.value)
    assert "\n" not in msg and "example.invalid" in msg
    assert "RAUDIT_DATA_DIR/x/t.csv" in msg and "raudit datasets import PATH --name demo" in msg


def test_zip_member_is_extracted_and_gzipped_for_a_gz_path(tmp_path):
    archive = make_zip(tmp_path / "a.zip", {"folder/Data Set.csv": CONTENT, "readme.txt": b"hi"})
    f = DataFile("x/t.csv.gz", "0" * 64, (archive.as_uri(),), member="*.csv",
                 raw_sha256=sha256(CONTENT))
    (path,) = fetch.fetch([f])
    assert path.name == "t.csv.gz" and gzip.decompress(path.read_bytes()) == CONTENT
    cache.verify(path, f)  # accepted through the raw (decompressed) hash


def test_one_download_serves_several_members(tmp_path, monkeypatch):
    archive = make_zip(tmp_path / "a.zip", {"one.txt": b"1", "two.txt": b"2"})
    calls = []
    real = fetch.urlopen
    monkeypatch.setattr(fetch, "urlopen", lambda url, **kw: calls.append(url) or real(url, **kw))
    files = [DataFile(f"x/{n}.txt", sha256(blob), (archive.as_uri(),), member=f"{n}.txt")
             for n, blob in (("one", b"1"), ("two", b"2"))]
    paths = fetch.fetch(files)
    assert [p.read_bytes() for p in paths] == [b"1", b"2"] and len(calls) == 1


def test_ambiguous_member_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("RAUDIT_ALLOW_UNPINNED", "1")  # past the unpinned refusal
    archive = make_zip(tmp_path / "a.zip", {"a.csv": b"1", "b.csv": b"2"})
    with pytest.raises(DataError, match="2 members matching"):
        fetch.fetch([DataFile("x/t.csv", None, (archive.as_uri(),), member="*.csv")])


def test_unix_compress_member_is_decompressed(tmp_path, compress_z, monkeypatch):
    monkeypatch.setenv("RAUDIT_ALLOW_UNPINNED", "1")  # isolet5.data has no pinned hash
    archive = make_zip(tmp_path / "isolet.zip", {"isolet5.data.Z": compress_z(CONTENT * 50)})
    f = DataFile("isolet/isolet5.data", None, (archive.as_uri(),), member="isolet5.data*")
    assert fetch.fetch([f])[0].read_bytes() == CONTENT * 50


def test_unpinned_download_is_refused_without_the_flag(tmp_path, monkeypatch):
    src = write(tmp_path / "up" / "creditcard.csv", CONTENT)
    f = DataFile("credit_card/creditcard.csv", None, (src.as_uri(),))
    seen = []
    monkeypatch.setattr(fetch, "_download", lambda url, dest: seen.append(url))
    with pytest.raises(DataUnavailable, match="no pinned sha256.*RAUDIT_ALLOW_UNPINNED=1"):
        fetch.fetch([f], dataset="credit")
    assert seen == [] and not cache.cache_dir().exists()  # refused before downloading


def test_accepted_unpinned_download_is_recorded_and_checked_later(tmp_path, monkeypatch):
    src = write(tmp_path / "up" / "creditcard.csv", CONTENT)
    f = DataFile("credit_card/creditcard.csv", None, (src.as_uri(),))
    monkeypatch.setenv("RAUDIT_ALLOW_UNPINNED", "1")
    path = fetch.fetch([f])[0]
    record = cache.cache_dir() / "SHA256SUMS.accepted"
    assert record.read_text() == f"{sha256(CONTENT)}  credit_card/creditcard.csv\n"
    monkeypatch.delenv("RAUDIT_ALLOW_UNPINNED")
    assert fetch.fetch([f]) == (path,)  # the cached, accepted copy loads without the flag
    path.write_bytes(CONTENT + b"5,6,0\n")  # the cached copy changes after acceptance
    with pytest.raises(ChecksumError, match="changed since it was accepted"):
        fetch.fetch([f])
    path.unlink()  # a re-download must match the accepted hash, flag or not
    write(src, b"other,content\n")
    monkeypatch.setenv("RAUDIT_ALLOW_UNPINNED", "1")
    with pytest.raises(ChecksumError, match="but .* was accepted before"):
        fetch.fetch([f])
    assert not path.exists()


def test_allow_unpinned_flag_sets_the_environment(monkeypatch):
    import os

    from raudit.cli.app import app
    from typer.testing import CliRunner

    # set, then delete: monkeypatch then restores the absence after the command sets it
    # (a bare delenv of an absent variable records nothing to undo, and it leaked)
    monkeypatch.setenv("RAUDIT_ALLOW_UNPINNED", "0")
    monkeypatch.delenv("RAUDIT_ALLOW_UNPINNED")
    r = CliRunner().invoke(app, ["--allow-unpinned", "generators"])
    assert r.exit_code == 0 and os.environ.get("RAUDIT_ALLOW_UNPINNED") == "1"


def test_http_download_through_urlopen(monkeypatch):
    class Response(io.BytesIO):
        headers = {"Content-Length": str(len(CONTENT))}

    seen = []
    monkeypatch.setattr(fetch, "urlopen", lambda url, timeout: seen.append(url) or Response(CONTENT))
    f = DataFile("x/t.csv", sha256(CONTENT), ("https://example.org/t.csv",))
    assert fetch.fetch([f])[0].read_bytes() == CONTENT and seen == ["https://example.org/t.csv"]


def test_registered_dataset_downloads_end_to_end(tmp_path, monkeypatch, shared_root):
    """cervical from a file:// copy of the UCI zip: extracted, verified, cached, then loaded."""
    if shared_root is None:
        pytest.skip("reference datasets not found")
    file = data.source("cervical").files[0]
    archive = make_zip(tmp_path / "uci.zip",
                       {"risk_factors_cervical_cancer.csv": (shared_root / file.relpath).read_bytes()})
    moved = dataclasses.replace(file, urls=(archive.as_uri(),))
    replace_source(monkeypatch, "cervical", files=(moved,))
    assert data.info("cervical")["status"] == "downloadable"
    ds = data.load("cervical")
    assert ds.train.shape == (686, 29)
    assert (cache.cache_dir() / file.relpath).is_file()
    assert data.info("cervical")["status"] == "cache"


def test_import_by_checksum_without_a_name(shared_root):
    if shared_root is None:
        pytest.skip("reference datasets not found")
    relpath = data.source("cervical").files[0].relpath
    dest = data.import_file(shared_root / relpath)
    assert dest == cache.cache_dir() / relpath
    assert data.info("cervical")["status"] == "cache"


def test_import_of_an_uncompressed_copy_is_stored_gzipped(tmp_path, shared_root):
    if shared_root is None:
        pytest.skip("reference datasets not found")
    file = data.source("mnist").files[3]  # t10k labels, 10 kB
    raw = write(tmp_path / "t10k-labels-idx1-ubyte", gzip.decompress((shared_root / file.relpath).read_bytes()))
    dest = data.import_file(raw, "mnist")
    assert dest.name == "t10k-labels.idx1-ubyte.gz" and cache.matches(dest, file)


def test_import_with_wrong_checksum(tmp_path):
    bad = write(tmp_path / "risk_factors_cervical_cancer.csv", b"Biopsy\n1\n")
    with pytest.raises(ChecksumError, match=f"{sha256(b'Biopsy' + bytes([10, 49, 10]))}, expected"):
        data.import_file(bad, "cervical")
    assert not (cache.cache_dir() / data.source("cervical").files[0].relpath).exists()


def test_import_unpinned_file_by_name(tmp_path, credit_dir):
    src = tmp_path / "creditcard (1).csv"
    src.write_bytes((credit_dir / "credit_card" / "creditcard.csv").read_bytes())
    dest = data.import_file(src, "credit")
    assert dest == cache.cache_dir() / "credit_card/creditcard.csv"
    assert dest.read_bytes() == src.read_bytes()


def test_import_of_an_unpinned_file_must_parse_as_its_dataset(tmp_path):
    # issue 46 item 14: no hash vouches for it, and any bytes were accepted
    src = write(tmp_path / "creditcard.csv", CONTENT)
    with pytest.raises(DataError, match="does not parse as dataset 'credit'.*lacks the columns"):
        data.import_file(src, "credit")
    assert not (cache.cache_dir() / "credit_card/creditcard.csv").exists()


def test_import_refusals(tmp_path):
    src = write(tmp_path / "whatever.bin", b"xyz")
    with pytest.raises(DataError, match="pass --name"):
        data.import_file(src)
    with pytest.raises(DataError, match="not a file of dataset 'mnist'"):
        data.import_file(src, "mnist")
    with pytest.raises(UnknownNameError):
        data.import_file(src, "nope")
    with pytest.raises(DataError, match="no such file"):
        data.import_file(tmp_path / "missing.csv", "credit")
    with pytest.raises(DataError, match="zip archive; extract"):
        data.import_file(make_zip(tmp_path / "x.zip", {"a.csv": b"1"}), "cervical")


def test_a_bad_mirror_copy_falls_through_to_the_next(tmp_path):
    bad = write(tmp_path / "bad" / "t.csv", b"tampered")
    good = write(tmp_path / "good" / "t.csv", CONTENT)
    f = DataFile("x/t.csv", sha256(CONTENT), (bad.as_uri(), good.as_uri()))
    assert fetch.fetch([f])[0].read_bytes() == CONTENT
    with pytest.raises(ChecksumError):
        fetch.fetch([DataFile("y/t.csv", sha256(CONTENT), (bad.as_uri(),))])


def test_isolet_full_data_downloads_from_a_zip_of_z_members(tmp_path, monkeypatch, compress_z):
    """The canonical ISOLET zip holds .Z members: they are decoded and read as the full data."""
    members = {}
    for name, n in (("isolet1+2+3+4.data", 52), ("isolet5.data", 26)):
        rows = [", ".join(["0.5000"] * 617) + f", {float(i % 26 + 1)}," for i in range(n)]
        members[f"{name}.Z"] = compress_z(("\n".join(rows) + "\n").encode())
    archive = make_zip(tmp_path / "isolet.zip", members)
    files = tuple(dataclasses.replace(f, urls=(archive.as_uri(),)) for f in data.source("isolet").files)
    replace_source(monkeypatch, "isolet", files=files)
    monkeypatch.setenv("RAUDIT_ALLOW_UNPINNED", "1")  # the full files have no pinned hash
    ds = data.load("isolet")
    assert len(ds.train) + len(ds.test) == 78 and ds.train.shape[1] == 618
    assert ds.notes["part"].startswith("full") and "fallback" not in ds.notes
    assert (cache.cache_dir() / "isolet" / "isolet5.data").is_file()
