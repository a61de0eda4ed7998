"""A built-in generator's option names and presets are read without importing it
(raudit.generators.declared, issue 48): `raudit audit --impl paper -o nosuch=1` took
~3 CPU-seconds (95 s on a loaded machine) to import torch before it said the option does
not exist. The file must say what the classes declare."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.debug import IdentityGenerator
from raudit.generators.declared import PATH, built_in, table
from raudit.generators.kwargs import check_generator_args, generator_kwargs


def test_the_file_is_what_every_built_in_class_declares():
    want = table({name: generators.get(name) for name in generators.BUILT_IN})
    assert json.loads(PATH.read_text(encoding="utf-8")) == want, \
        "raudit/generators/options.json is stale: run `python tools/generator_options.py`"


@pytest.mark.parametrize("given", [dict(options=["nosuch=1"]), dict(preset="nope"),
                                   dict(teachers=0), dict(lam=-1.0), dict(max_iter=0),
                                   dict(options=["teachers=0"])])
@pytest.mark.parametrize("name", ["paper", "gan", "identity"])
def test_the_early_check_says_what_the_class_says(name, given):
    args = {**dict(preset=None, teachers=None, lam=None, max_iter=None, options=None), **given}
    with pytest.raises(ConfigError) as early:
        check_generator_args(name, **args)
    with pytest.raises(ConfigError) as late:
        generator_kwargs(name, device=None, **args)
    assert str(early.value) == str(late.value)


def test_a_mistyped_option_is_refused_before_torch_is_imported():
    code = ("import sys\n"
            "from raudit.errors import ConfigError\n"
            "from raudit.runs.audit_plan import prepare\n"
            "from raudit.runs.audit_settings import AuditSettings\n"
            "try:\n"
            "    prepare(AuditSettings(impl='paper', options=['nosuch=1']))\n"
            "except ConfigError as exc:\n"
            "    print(exc)\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True).stdout.splitlines()
    assert out[0].startswith("paper has no option 'nosuch'; its options: preset, ")
    assert out[1] == "False"


def test_a_built_in_name_registered_anew_is_asked_by_its_class():
    path = generators.BUILT_IN["identity"]
    generators.GENERATORS.register("identity", type("Mine", (IdentityGenerator,), {}),
                                   replace=True)
    try:
        assert built_in("identity") is None
    finally:
        generators.GENERATORS.register("identity", path, replace=True)
    assert built_in("identity") is not None
