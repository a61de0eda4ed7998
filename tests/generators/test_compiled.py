"""RAUDIT_COMPILE: the compiled random-stream kernels give the eager kernels' bits, and the
pinned regression runs do not move with them. Skipped where no C++ compiler is found
(torch inductor's CPU code generation needs one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from raudit.generators.nn import compiled
from raudit.generators.nn import rng as R

needs_compiler = pytest.mark.skipif(not compiled._has_compiler(),
                                    reason="no C++ compiler: torch.compile cannot build CPU kernels")


@pytest.fixture
def compile_on(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("RAUDIT_COMPILE", "1")
    # one inductor cache for the whole test session (compiling costs ~15 s, loading ~1 s)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR",
                       str(tmp_path_factory.getbasetemp() / "inductor"))
    monkeypatch.setattr(compiled, "_BROKEN", set())


def test_the_switch(monkeypatch):
    monkeypatch.delenv("RAUDIT_COMPILE", raising=False)
    assert not compiled.enabled()  # eager is the default
    monkeypatch.setenv("RAUDIT_COMPILE", "0")
    assert not compiled.enabled()
    monkeypatch.setenv("RAUDIT_COMPILE", "yes")
    with pytest.raises(ValueError, match="RAUDIT_COMPILE must be one of 0, 1, fused"):
        compiled.enabled()


def test_eager_off_cpu_and_when_disabled(monkeypatch):
    calls = []
    k = compiled.kernel(lambda x: calls.append(1) or x + 1)
    monkeypatch.setenv("RAUDIT_COMPILE", "0")
    assert torch.equal(k(torch.zeros(3)), torch.ones(3)) and calls == [1]
    assert not any("<lambda>" in name for name in compiled._KERNELS)  # never compiled


def test_a_kernel_that_cannot_compile_falls_back_to_eager(monkeypatch, compile_on):
    def broken(*_a, **_k):
        raise RuntimeError("no compiler")
    monkeypatch.setattr(torch, "compile", lambda fn, **_: broken)
    monkeypatch.setattr(compiled, "_KERNELS", {})
    k = compiled.kernel(R._hash)
    keys, pos = torch.tensor([1, 2], dtype=torch.int64), torch.arange(4, dtype=torch.int64)
    with pytest.warns(UserWarning, match="using eager torch"):
        out = k(keys, pos)
    assert torch.equal(out, R._hash(keys, pos))
    assert torch.equal(k(keys, pos), out)  # no second warning: eager from now on


@needs_compiler
@pytest.mark.slow
def test_compiled_uniforms_have_the_eager_bits(compile_on):
    # sizes >= 2 only: one compiled graph per kernel (sizes 0 and 1 are specialised, which
    # would compile each kernel again; the pinned runs below cover real draws)
    keys = torch.tensor([R._signed(R.stream_key(s)) for s in range(3)], dtype=torch.int64)
    for counter, n in [(0, 2), (1, 7), (5, 320), ((1 << 31) + 3, 1857), (2**31 - 1, 4097)]:
        pos = torch.arange(n, dtype=torch.int64) + R._signed(counter << 32)
        for k in (R._unit53, R._open53, R._unit32x2, R._unit24x2):
            assert torch.equal(k(keys, pos), k.eager(keys, pos)), (k.eager.__name__, counter, n)
    assert not compiled._BROKEN


@needs_compiler
@pytest.mark.slow
# paper only: smartnoise gains nothing compiled and its f64 kernels cost minutes of CI compile
@pytest.mark.parametrize("cid", ["paper"])
def test_pinned_runs_do_not_move_when_compiled(compile_on, cid):
    sys.path.insert(0, str(Path(__file__).parents[1] / "regression"))
    from pinned_cases import CASES, run
    from test_pinned_runs import PINNED

    case = next(c for c in CASES if c[0] == cid)
    got = run(*case[1:])
    assert not compiled._BROKEN and compiled._KERNELS  # it did run compiled
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAUDIT_COMPILE", "0")
        eager = run(*case[1:])
    assert repr(got) == repr(eager)  # the same bits (repr: NaN equals NaN)
    for (it, eps, total), (it0, eps0, total0) in zip(got, PINNED[cid]):
        assert it == it0
        assert (eps != eps and eps0 != eps0) or eps == pytest.approx(eps0, rel=1e-12)
        assert total == pytest.approx(total0, rel=1e-9)


@needs_compiler
@pytest.mark.slow
def test_the_fused_teacher_step_is_within_tolerance_of_eager(compile_on, monkeypatch):
    """RAUDIT_COMPILE=fused reorders float32 sums: loss and gradients agree to 1e-5 relative."""
    from raudit.generators.nn.stacked import MLP
    from raudit.generators.pategan.core import teachers as T

    monkeypatch.setenv("RAUDIT_COMPILE", "fused")
    g, b, d = 40, 16, 9  # 8 models x 5 teachers
    net = MLP([d, 1], ["sigmoid"])
    p = net.create(R.CounterRNG(list(range(g))))
    gen = torch.Generator().manual_seed(0)
    table, fake = torch.rand(50, d, generator=gen), torch.rand(8, b, d, generator=gen)
    ids = torch.randint(0, 50, (g, b), generator=gen)
    spec = (tuple(p.layout.items()), tuple(net.widths), tuple(net.activations))
    out = {}
    for name, fn in (("eager", T._joint_loss), ("fused", T._fused_joint_loss)):
        p.flat.grad = None
        loss = fn(p.flat, table, ids, fake, spec, 5)
        loss.backward()
        out[name] = (loss.detach(), p.flat.grad.clone())
    assert not compiled._BROKEN and any("_joint_loss" in k for k in compiled._KERNELS)
    torch.testing.assert_close(out["fused"][0], out["eager"][0], rtol=1e-5, atol=0)
    torch.testing.assert_close(out["fused"][1], out["eager"][1], rtol=1e-5, atol=1e-7)
