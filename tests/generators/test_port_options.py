"""The ports' options objects: one frozen object per port, the constructor reads it, and
Capabilities.options (hence -o checks, `raudit generators NAME`, the docs tables) comes from it."""

from __future__ import annotations

import dataclasses

import pytest

from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.capabilities import OptionsObject

PORTS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")
WITH_OPTIONS = [p for p in PORTS if hasattr(generators.get(p), "Options")]


def test_every_port_declares_an_options_object():
    assert WITH_OPTIONS == list(PORTS)  # and the parametrised tests below are not vacuous


@pytest.mark.parametrize("impl", WITH_OPTIONS)
def test_options_object_is_frozen_and_the_constructor_default(impl):
    cls = generators.get(impl)
    opts = cls.Options()
    assert issubclass(cls.Options, OptionsObject)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(opts, dataclasses.fields(opts)[0].name, 1)
    made = cls().options
    assert {k: made[k] for k in opts.as_dict()} == opts.as_dict()
    assert set(made) - set(opts.as_dict()) == {"preset", "device", "dtype"}


@pytest.mark.parametrize("impl", WITH_OPTIONS)
def test_an_object_and_overrides_by_name_agree(impl):
    cls = generators.get(impl)
    name, allowed = next(iter(cls.Options.choices().items()))
    other = next(v for v in allowed if v != getattr(cls.Options(), name))
    assert cls(cls.Options(**{name: other})).options == cls(**{name: other}).options
    assert cls(cls.Options(**{name: other})).options[name] == other


@pytest.mark.parametrize("impl", WITH_OPTIONS)
def test_closed_sets_and_unknown_names_are_one_line_errors(impl):
    cls = generators.get(impl)
    name = next(iter(cls.Options.choices()))
    with pytest.raises(ConfigError, match=f"^{name} must be one of .*; got 'bogus'$"):
        cls.Options(**{name: "bogus"})
    with pytest.raises(ConfigError, match="has no option 'bogus'; its options: "):
        cls(bogus=1)
    with pytest.raises(ConfigError, match="takes .*Options, got dict"):
        cls({name: "x"})


@pytest.mark.parametrize("impl", WITH_OPTIONS)
def test_described_options_are_the_object_fields_with_choices(impl):
    cls = generators.get(impl)
    specs = {o.name: o for o in cls.describe().options}
    for f in dataclasses.fields(cls.Options):
        assert specs[f.name].default == f.default
        assert specs[f.name].choices == cls.Options.choices().get(f.name)
    assert {"preset", "device", "dtype"} <= set(specs)


def test_original_declares_the_release_defaults():
    o = generators.get("original").Options()
    assert (o.noise, o.delta_bug, o.partition, o.integers, o.conditional) == \
        ("gaussian", "xor", "none", "round", False)
    assert generators.get("original").Options.choices()["generator_widths"] == \
        ("d,d,d", "d,d/2,d", None)


def test_switches_the_wgan_ports_always_took_as_truthy_stay_bools():
    t = generators.get("turing")(one_hot=1, shuffle=0).options
    assert t["one_hot"] is True and t["shuffle"] is False
    assert generators.get("original")(conditional=1).options["conditional"] is True


def test_smartnoise_keeps_its_strict_checks_on_the_object():
    o = generators.get("smartnoise").Options
    with pytest.raises(ConfigError, match="^binary must be true or false, got 1$"):
        o(binary=1)
    with pytest.raises(ConfigError, match="^preprocessor_eps must be a number >= 0"):
        o(preprocessor_eps=-1)
    with pytest.raises(ConfigError, match="^latent_dim must be a positive integer"):
        o(latent_dim=0)
    made = generators.get("smartnoise")(latent_dim=8.0, preprocessor_eps=1).options
    assert made["latent_dim"] == 8 and type(made["latent_dim"]) is int
    assert type(made["preprocessor_eps"]) is float
