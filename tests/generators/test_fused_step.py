"""RAUDIT_COMPILE=step (raudit.generators.pategan.core.fused_step): the traced iteration draws the
eager streams' numbers and hands the accountant and observer what the eager loop does; the
compiled one agrees with eager within float rounding. Fast tests run the traced program
without compiling it (``_compile`` is the identity); one slow test compiles."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from raudit import generators
from raudit.generators.nn import compiled, fused
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core import fused_step
from raudit.generators.pategan.core.nets import LoopConfig

sys.path.insert(0, str(Path(__file__).parents[1] / "regression"))
from pinned_cases import table  # noqa: E402

needs_compiler = pytest.mark.skipif(not compiled._has_compiler(),
                                    reason="no C++ compiler: torch.compile cannot build CPU kernels")
SEEDS = [3, 4, 5]


@pytest.fixture
def traced(monkeypatch):
    """The step's traced program run eagerly (no compile): RAUDIT_COMPILE=step's logic."""
    monkeypatch.setattr(compiled, "_has_compiler", lambda: True)
    monkeypatch.setattr(fused, "_compile", lambda fn: fn)
    monkeypatch.setattr(fused, "_COMPILED", {})


def fit(monkeypatch, mode: str, impl: str, seeds=SEEDS, **options):
    monkeypatch.setenv("RAUDIT_COMPILE", mode)
    events: list = []
    models = generators.get(impl)(**options).fit_many([table(seed=1)] * len(seeds), epsilon=60.0,
                                                      delta=1e-5, seeds=seeds, observer=events.append)
    return models[0]._batch.trained, events


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_step_streams_draw_the_eager_numbers(dtype):
    dt = getattr(torch, dtype)
    eager = CounterRNG([1, 2, 3], dtype=dt)
    eager.counter = 7
    step = fused.StepRNG(eager.keys, torch.tensor(7), dt)
    high = torch.tensor([[5], [9], [1]])
    for draw in (lambda r: r.uniform(4, 3, bits=32), lambda r: r.uniform(5), lambda r: r.open_uniform(6),
                 lambda r: r.laplace(4, 2, scale=3.0), lambda r: r.integers(high, 8)):
        assert torch.equal(draw(step), draw(eager))
    assert eager.counter == 7 + step.counter


CASES = [  # (impl, options): paper's with-replacement batches and shared fakes; borealis's
    ("paper", dict(teachers=9, batch=8, lam=0.3, orders=20, dtype="float64")),  # the pinned case
    ("paper", dict(teachers=5, batch=8, lam=0.01, orders=20, max_iter=6)),  # float32
    ("borealis", dict(teachers=9, batch=8, lam=0.3, orders=20)),  # first-shuffled, per-teacher
    ("borealis", dict(teachers=3, batch=8, lam=0.01, orders=20, max_iter=5, teacher_fakes="shared",
                      aggregation="argmax")),
    # smartnoise: the residual layer-norm generator, eps checked at the top; the pinned case,
    # and its default latent width with the library's Tanh generator
    ("smartnoise", dict(teachers=9, batch=8, lam=0.3, orders=20, latent_dim=8)),
    ("smartnoise", dict(teachers=3, batch=8, lam=0.01, orders=20, max_iter=4, binary=True)),
]


@pytest.mark.parametrize("impl,options", CASES)
def test_the_traced_step_is_the_eager_loop(monkeypatch, traced, impl, options):
    """Same stopping points and eps_hat, the same events with the same votes, noise, labels
    and rows; parameters equal to float rounding (the fused Adam kernel vs its formulas)."""
    ref, ref_events = fit(monkeypatch, "0", impl, **options)
    got, events = fit(monkeypatch, "step", impl, **options)
    assert fused._COMPILED  # the step did run
    assert got.iterations == ref.iterations and got.eps_hat == ref.eps_hat
    assert [type(e) for e in events] == [type(e) for e in ref_events]
    for e, r in zip(events, ref_events):
        for name, value in vars(r).items():
            other = vars(e)[name]
            if isinstance(value, np.ndarray) and value.dtype.kind in "biu":
                assert np.array_equal(other, value), name
            elif isinstance(value, np.ndarray):  # noise, losses, moments
                np.testing.assert_allclose(other, value, rtol=1e-6, atol=1e-12, err_msg=name)
    tol = 1e-12 if got.generator.flat.dtype == torch.float64 else 1e-6
    for a, b in ((got.generator, ref.generator), (got.critic.params, ref.critic.params)):
        torch.testing.assert_close(a.flat, b.flat, rtol=0, atol=tol)


def test_other_setups_stay_eager(monkeypatch, traced):
    """What the step does not cover runs the eager loop (prepare gives None)."""
    monkeypatch.setenv("RAUDIT_COMPILE", "step")
    cfg = LoopConfig(k=3, batch=8, lam=1.0, noise_scale=1.0)
    gen = generators.get("paper")()
    nets = gen.nets(4)
    from raudit.generators.pategan.core.teachers import LocalTeachers, TeacherTraining, teacher_rng
    x = torch.rand(2, 30, 4)
    parts = torch.arange(30).view(1, 3, 10).expand(2, 3, 10)
    sizes = torch.full((2, 3), 10)
    teachers = LocalTeachers(nets.teacher, teacher_rng([0, 1], 3), x, parts, sizes, TeacherTraining(8))
    assert fused_step.supported(cfg, nets, teachers, x.device)
    for change in (dict(control="coin"), dict(noise="gaussian"),
                   dict(teacher_update="split"), dict(confident=object())):
        assert not fused_step.supported(replace(cfg, **change), nets, teachers, x.device), change
    assert not fused_step.supported(cfg, nets, object(), x.device)  # teachers on Ray
    sn = generators.get("smartnoise")().nets(4)  # a residual generator declares itself traceable
    assert fused_step.supported(cfg, sn, teachers, x.device)
    sn.generator = type("Opaque", (), {"__call__": sn.generator.__call__})()  # one that does not
    assert fused_step.net_key(sn.generator) is None
    assert not fused_step.supported(cfg, sn, teachers, x.device)
    monkeypatch.setenv("RAUDIT_COMPILE", "0")
    rng = CounterRNG([0, 1])
    assert fused_step.prepare(cfg, nets, teachers, None, None, None, None, rng) is None


@needs_compiler
@pytest.mark.slow
def test_the_compiled_step_agrees_with_eager(monkeypatch, tmp_path_factory):
    """Compiled, float32 sums are reordered: the same stopping points and eps_hat in this run,
    parameters within 1e-4 of the largest; and a model's bits do not depend on M."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "inductor"))
    monkeypatch.setattr(fused, "_COMPILED", {})
    # one teacher and one student round per iteration: a small graph, compiled in CI
    options = dict(teachers=5, batch=8, lam=0.01, orders=20, max_iter=6, teacher_steps=1,
                   student_steps=1)
    ref, ref_events = fit(monkeypatch, "0", "paper", **options)
    got, events = fit(monkeypatch, "step", "paper", **options)
    assert fused._COMPILED and not fused._BROKEN
    assert got.iterations == ref.iterations and got.eps_hat == ref.eps_hat
    assert len(events) == len(ref_events)
    scale = ref.generator.flat.detach().abs().max()
    assert float((got.generator.flat - ref.generator.flat).abs().max().detach() / scale) < 1e-4
    # a model's numbers do not depend on the chunk it trains in (M = 1 vs M = 3), compiled too
    alone, _ = fit(monkeypatch, "step", "paper", seeds=SEEDS[:1], **options)
    assert torch.equal(alone.generator.flat[0], got.generator.flat[0])


WGAN_CASES = [  # the pinned original/turing runs' options, float32, and the disjoint ablation
    ("original", dict(teachers=2, max_iter=4, dtype="float64")),
    ("turing", dict(teachers=2, max_iter=4, dtype="float64")),
    ("original", dict(teachers=3, max_iter=5)),
    ("original", dict(teachers=3, max_iter=3, partition="disjoint", batch=8)),
]


@pytest.mark.parametrize("impl,options", WGAN_CASES)
def test_the_traced_wgan_step_is_the_eager_loop(monkeypatch, traced, impl, options):
    """The same rows and label noise, bit for bit; parameters equal to float rounding."""
    ref, ref_events = fit(monkeypatch, "0", impl, **options)
    got, events = fit(monkeypatch, "step", impl, **options)
    assert fused._COMPILED
    assert [type(e) for e in events] == [type(e) for e in ref_events]
    for e, r in zip(events, ref_events):
        for name, value in vars(r).items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(vars(e)[name], value), name
    scale = ref.generator.flat.detach().abs().max()
    tol = 1e-15 if ref.generator.flat.dtype == torch.float64 else 1e-6
    assert float((got.generator.flat - ref.generator.flat).abs().max().detach() / scale) < tol


def test_the_conditional_wgan_stays_eager(monkeypatch, traced):
    ref, _ = fit(monkeypatch, "0", "original", teachers=2, max_iter=2, conditional=True)
    got, _ = fit(monkeypatch, "step", "original", teachers=2, max_iter=2, conditional=True)
    assert not fused._COMPILED and torch.equal(got.generator.flat, ref.generator.flat)


def test_an_iteration_with_a_tie_is_taken_by_the_eager_loop(monkeypatch, traced):
    """A tie among a shuffle's lowest keys: the step's results are dropped and the eager
    loop takes that iteration from the same state, so nothing moves."""
    real, calls = fused_step._iteration, []

    def tie_on_second(plan, state, data):
        out = real(plan, state, data)
        calls.append(1)
        return out[:5] + (torch.tensor(len(calls) == 2),) + out[6:]

    monkeypatch.setattr(fused_step, "_iteration", tie_on_second)
    options = dict(teachers=3, batch=8, lam=0.01, orders=20, max_iter=4)
    ref, ref_events = fit(monkeypatch, "0", "borealis", **options)
    got, events = fit(monkeypatch, "step", "borealis", **options)
    assert len(calls) == 4  # 4 iterations tried fused; the second was handed back
    assert got.iterations == ref.iterations and got.eps_hat == ref.eps_hat
    assert [type(e) for e in events] == [type(e) for e in ref_events]
    torch.testing.assert_close(got.generator.flat, ref.generator.flat, rtol=0, atol=1e-12)
