"""Fault suite, promise: every bad input is refused before work, with one line.

Each test names the red team's defect (issue 46) it keeps from coming back."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.runs import limits

LOCAL = EngineConfig(backend="local")


# ------------------------------------------------ 8: the memory check misses tall tables

def _tall(rows: int, cols: int):
    """A dataset's shape without its bytes: the check reads only the shape and the label."""
    return SimpleNamespace(name="tall", classes=2, label="y", train=SimpleNamespace(shape=(rows, cols)))


def test_tall_table_refused_by_the_target_selections_chunks():
    # issue 46 item 8: 1.8M rows x 11 columns, -S 5. The game's chunks hold 5 models, but
    # the target selection trains its pool of 200 in chunks of --chunk-size 100: ~100 x
    # 0.35 GB. The check used to count chunks of 5 (~3 GB) and the run grew until the
    # kernel killed it.
    req = AuditRequest(impl="paper", attack="groundhog", shadow_models=5)
    machine = limits.Machine(cpus=2, gpus=0, memory=16 << 30)
    with pytest.raises(ConfigError, match=r"needs about .* chunks of 100\b"):
        limits.check_audit(req, LOCAL, _tall(1_800_000, 11), machine)


def test_chunk_is_the_largest_phase_of_the_audit():
    pool = AuditRequest(impl="paper", shadow_models=5, selection_models=40)
    assert limits.largest_chunk(pool, selects=True) == 40
    assert limits.largest_chunk(pool, selects=False) == 5  # a fixed target: no selection
    pairs = AuditRequest(impl="paper", shadow_models=5, target_selection="per-candidate",
                         target_pairs=30, chunk_size=16)
    assert limits.largest_chunk(pairs, selects=True) == 16


def test_tall_table_that_fits_runs_the_check_through():
    # the same audit with a fixed target and small chunks fits in 16 GiB
    req = AuditRequest(impl="paper", attack="groundhog", shadow_models=5, target="0",
                       chunk_size=5)
    limits.check_audit(req, LOCAL, _tall(1_800_000, 11),
                       limits.Machine(cpus=2, gpus=0, memory=16 << 30))


# ------------------------------------------------ 10: a campaign file, refused before work

LAUGHS = "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['x'] * 9)}]\n"
                 for p, c in zip(["", *"abcdefg"], "abcdefgh"))


@pytest.mark.parametrize("text,needle", [
    (LAUGHS + "jobs: [{kind: audit, options: {x: *h}}]\n", "expands to more than"),
    ("defaults: &d\n  x: *d\njobs: [{kind: audit}]\n", "recursive alias"),
    ("jobs: &j\n  - kind: audit\n    options: *j\n", "recursive alias"),
    ("jobs: [{kind: audit, [a, b]: 1}]\n", "a key must be a plain name"),
    ("jobs:\n  - kind: audit\n    grid: {seed: R, epsilon: R, shadow_models: R, chunk_size: R}\n"
     .replace("R", str(list(range(1, 101)))), "makes 100,000,000 jobs"),
], ids=["billion-laughs", "recursive-defaults", "recursive-jobs", "list-key", "huge-grid"])
def test_campaign_file_refused_as_one_line(text, needle):
    # issue 46 item 10: these grew memory without bound, hung, or were tracebacks
    from raudit.campaign import config

    with pytest.raises(ConfigError, match=needle) as err:
        config.expand(config.parse(text, "c.yaml"), "c.yaml")
    assert "\n" not in str(err.value) and str(err.value).startswith("c.yaml:")


@pytest.mark.parametrize("job,needle", [
    ("{kind: audit, impl: [identity], shadow_models: 10}", "key 'impl': impl must be text"),
    ("{kind: inspect, impl: paper, seed: [1], iterations: 2}", "key 'seed': seed must be an integer"),
    ("{kind: audit, epsilon: {a: 1}, shadow_models: 10}", "key 'epsilon': epsilon must be a number"),
    ("{kind: utility, fits: 2.5}", "key 'fits': fits must be an integer"),
], ids=["impl-list", "inspect-seed-list", "epsilon-mapping", "fits-float"])
def test_campaign_value_of_the_wrong_type_refused_before_work(job, needle):
    # issue 46 item 10: `impl: [identity]` was a traceback; `seed: [1]` in an inspect job
    # passed --dry-run and failed only after the manifest was written
    from raudit.campaign import config, plan

    _, jobs = config.expand(config.parse(f"jobs: [{job}]\n", "c.yaml"), "c.yaml")
    with pytest.raises(ConfigError, match=needle) as err:
        plan.build_all(jobs)
    assert "\n" not in str(err.value) and str(err.value).startswith("c.yaml:1: job ")
