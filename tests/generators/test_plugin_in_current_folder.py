"""Issue 48: `raudit train --impl noisymean.gen:NoisyMean` run beside noisymean/ failed
with "No module named 'noisymean'" and no way out; the error now says how."""

from __future__ import annotations

import sys

import pytest

from raudit import generators
from raudit.errors import ConfigError

PLUGIN = '''
from raudit.generators.debug import IdentityGenerator


class NoisyMean(IdentityGenerator):
    name = "noisy-mean-plugin"
'''


def test_a_plugin_beside_the_command_says_how_to_reach_it(tmp_path, monkeypatch):
    (tmp_path / "noisymean_pkg").mkdir()
    (tmp_path / "noisymean_pkg" / "__init__.py").write_text("")
    (tmp_path / "noisymean_pkg" / "gen.py").write_text(PLUGIN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    with pytest.raises(ConfigError) as err:
        generators.get("noisymean_pkg.gen:NoisyMean")
    assert str(err.value) == (
        "cannot load generator plugin 'noisymean_pkg.gen:NoisyMean': No module named "
        "'noisymean_pkg'; noisymean_pkg is in the current folder, which is not on Python's "
        "path: run with PYTHONPATH=$PWD (Ray's workers inherit it), or pip install -e your "
        "package")
    monkeypatch.syspath_prepend(str(tmp_path))  # what PYTHONPATH=$PWD does
    assert generators.get("noisymean_pkg.gen:NoisyMean").__name__ == "NoisyMean"


def test_a_missing_module_elsewhere_keeps_the_plain_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        generators.get("no_such_pkg_xyz.gen:G")
    assert str(err.value).endswith("No module named 'no_such_pkg_xyz'")
