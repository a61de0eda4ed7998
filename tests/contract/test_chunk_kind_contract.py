"""The chunk-kind contract, over every registered kind (raudit.runs.dispatch): each
names an importable plain function, the jobs wrap only registered kinds, and a spec
of an unknown kind is refused before anything runs."""

import pytest

from raudit.errors import UnknownNameError
from raudit.registry import import_path
from raudit.runs import dispatch, jobs


@pytest.fixture(params=dispatch.CHUNK_KINDS.names())
def kind(request):
    return request.param


def test_names_an_importable_function(kind):
    fn = dispatch.CHUNK_KINDS.get(kind)
    assert callable(fn) and callable(import_path(fn.path))


def test_run_spec_calls_the_function_where_it_lives_now(kind, monkeypatch):
    module, _, attr = dispatch.CHUNK_KINDS.get(kind).path.partition(":")
    monkeypatch.setattr(f"{module}.{attr}", lambda chunk: ("patched", chunk["device"]))
    assert dispatch.run_spec(jobs.wrap("j", kind, {})) == ("patched", "cpu")


def test_an_unknown_kind_is_refused():
    with pytest.raises(UnknownNameError, match="unknown chunk kind 'os:system'"):
        dispatch.run_spec({"job": "j", "kind": "os:system", "chunk": {}})
