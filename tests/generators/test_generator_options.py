"""paper, dpgan, fixed and gpate take one frozen options object like the ports
(issue 26 item 4): same option names and defaults as their former keyword constructors."""

from __future__ import annotations

import dataclasses

import pytest

from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.capabilities import OptionsObject

IMPLS = ("paper", "dpgan", "fixed", "gpate")


@pytest.mark.parametrize("impl", IMPLS)
def test_options_object_is_frozen_and_the_constructor_default(impl):
    cls = generators.get(impl)
    assert issubclass(cls.Options, OptionsObject)
    opts = cls.Options()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(opts, dataclasses.fields(opts)[0].name, 1)
    made = cls().options
    assert {k: made[k] for k in opts.as_dict()} == opts.as_dict()
    assert set(made) - set(opts.as_dict()) == {"preset", "device", "dtype"}
    specs = {o.name: o for o in cls.describe().options}
    assert set(specs) == set(made)
    for f in dataclasses.fields(cls.Options):
        assert specs[f.name].default == f.default


@pytest.mark.parametrize("impl", IMPLS)
def test_an_object_and_overrides_by_name_agree(impl):
    cls = generators.get(impl)
    assert cls(cls.Options(lr=0.5)).options == cls(lr=0.5).options
    assert cls(lr=0.5).options["lr"] == 0.5
    with pytest.raises(ConfigError, match="has no option 'bogus'; its options: "):
        cls(bogus=1)
    with pytest.raises(ConfigError, match="takes .*Options, got dict"):
        cls({"lr": 0.5})


@pytest.mark.parametrize("impl", ["paper", "fixed", "gpate"])
def test_closed_sets_are_one_line_errors(impl):
    cls = generators.get(impl)
    name = next(iter(cls.Options.choices()))
    with pytest.raises(ConfigError, match=f"^{name} must be one of .*; got 'bogus'$"):
        cls(**{name: "bogus"})


def test_checks_the_constructors_made_still_apply():
    with pytest.raises(ConfigError, match="lambda must be a positive number"):
        generators.get("paper")(lam=0)
    with pytest.raises(ConfigError, match="bounds_share must lie in"):
        generators.get("dpgan")(bounds_share=1.0)
    with pytest.raises(ConfigError, match="arch must be one of"):
        generators.get("fixed")(arch="bogus")
    with pytest.raises(ConfigError, match="z_dim is for config=image"):
        generators.get("gpate")(z_dim=50)
