"""Every named thing goes through raudit.registry.Registry (issue 9): lookups and errors."""

import pytest

from raudit import accountants, data, generators
from raudit.attacks import classifier, features
from raudit.errors import ConfigError, UnknownNameError
from raudit.registry import Registry


@pytest.mark.parametrize("registry,kind,known", [
    (generators.GENERATORS, "generator", "paper"),
    (data.registry.DATASETS, "dataset", "breast-cancer"),
    (classifier.ATTACKS, "attack", "groundhog"),
    (features.FEATURE_SETS, "feature set", "querybased"),
    (accountants.ACCOUNTANTS, "accountant", "missing-log"),
])
def test_each_registry_is_a_registry_with_clear_errors(registry, kind, known):
    assert isinstance(registry, Registry) and registry.kind == kind
    assert known in registry and known in registry.names() and registry.get(known) is registry.get(known)
    with pytest.raises(UnknownNameError) as err:
        registry.get("no-such-name")
    assert str(err.value).startswith(f"unknown {kind} 'no-such-name'; known: ")
    assert known in err.value.known


@pytest.mark.parametrize("lookup,kind", [
    (lambda: generators.get("no-such-name"), "generator"),
    (lambda: data.load("no-such-name"), "dataset"),
    (lambda: data.source("no-such-name"), "dataset"),
    (lambda: classifier.get("no-such-name"), "attack"),
    (lambda: features.get("no-such-name"), "feature set"),
    (lambda: accountants.create("no-such-name"), "accountant"),
])
def test_public_functions_keep_working_and_raise_unknown_names(lookup, kind):
    with pytest.raises(UnknownNameError, match=f"unknown {kind} 'no-such-name'"):
        lookup()


def test_public_name_lists_come_from_the_registries():
    assert generators.names() == generators.GENERATORS.names()
    assert data.names() == data.registry.DATASETS.names()
    assert sorted(features.FEATURE_SETS) == ["corr", "domias", "ensemble", "hist", "naive",
                                             "querybased", "stacked"]


def test_generator_registry_rejects_non_generators_and_duplicates():
    class NotAGenerator:
        name = "registry-test-not-a-generator"

    with pytest.raises(ConfigError, match="subclass of raudit.generators.base.Generator"):
        generators.register(NotAGenerator)
    with pytest.raises(ConfigError, match="already registered"):
        generators.register(generators.get("paper"), name="paper")
    with pytest.raises(ConfigError, match="already registered"):
        features.register("naive", features.naive)
