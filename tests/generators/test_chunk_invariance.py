"""A model's numbers do not depend on the chunk it trains in (its position, the chunk size M),
also at batch sizes whose stacked tensors end in ATen's scalar tail (lab/performance.md,
"Chunk invariance"). Each model is fitted alone and at every position of chunks of 3 and 4
(copies of it: same seed, same table) and their parameters are compared bit for bit.

Before nn/whole.py (and the shared-input layer's contiguous output) this failed: `paper`
at batch 16 7.5e-9 apart after 3 iterations, batch 7 9.3e-10; `fixed` batch 16 3.7e-9,
with query_batch 8 1.5e-8; `borealis` batch 7 1.3e-18; `smartnoise` batch 7 1.4e-17 after 10.
"""

import pytest
import torch
import torch.nn.functional as F

from raudit import data, generators
from raudit.generators.batched import BatchedGenerator
from raudit.generators.nn import whole

BATCHED = [n for n in generators.names() if issubclass(generators.get(n), BatchedGenerator)]


def _fit(impl: str, models: int, iters: int, options: dict):
    ds = data.load("cervical")
    cls = generators.get(impl)
    kw = {"max_iter": iters, **options}
    return cls(**kw).fit_many([ds.train] * models, epsilon=1e6, seeds=[12] * models,
                              columns=ds.columns)


def _params(model, row: int) -> list[torch.Tensor]:
    trained = model._batch.trained
    out = [trained.generator.flat[row].detach()]
    if trained.critic is not None:
        out.append(trained.critic.params.flat[row].detach())
    return out


def _check(impl: str, iters: int, options: dict) -> None:
    dtype = generators.get(impl)(**options).dtype
    if whole.not_whole({"batch": options.get("batch", 64)}, dtype) and \
            not whole.products_batch_invariant(dtype):
        # the code does not claim it here: chunk_dependence names the batch, -M auto keeps
        # one chunk size (tests/campaign/test_chunk_cache.py)
        pytest.skip(f"this host's batched products depend on a model's position at batch "
                    f"{options['batch']} ({dtype}); whole_blocks holds at whole-block batches only")
    alone = _params(_fit(impl, 1, iters, options)[0], 0)
    for m in (3, 4):
        for row, model in enumerate(_fit(impl, m, iters, options)):
            got = _params(model, row)
            assert all(torch.equal(a, b) for a, b in zip(got, alone)), \
                f"{impl} {options}: position {row} of {m} differs from the model alone"


@pytest.mark.parametrize("impl,iters,options", [
    ("paper", 3, {"batch": 16}), ("paper", 3, {"batch": 7}),
    ("fixed", 3, {"batch": 16}), ("fixed", 3, {"batch": 16, "query_batch": 8}),
    ("borealis", 3, {"batch": 7}), ("smartnoise", 10, {"batch": 7}),
], ids=lambda v: str(v) if not isinstance(v, dict) else "-".join(f"{k}{x}" for k, x in v.items()))
def test_a_model_alone_equals_it_at_every_position_of_a_chunk(impl, iters, options):
    _check(impl, iters, options)


@pytest.mark.parametrize("impl", BATCHED)
def test_every_generator_that_declares_whole_blocks_is_chunk_invariant_at_an_odd_batch(impl):
    """What ``whole_blocks`` claims (and ``-M auto`` relies on: it calibrates M for them at
    any batch size), checked at batch 7 for every batched generator that declares it."""
    if not generators.get(impl).whole_blocks:
        pytest.skip(f"{impl} does not declare whole_blocks: -M auto keeps one chunk size")
    _check(impl, 2, {"batch": 7})


def test_whole_is_the_function_itself_on_whole_blocks_and_vector_code_on_the_rest():
    torch.manual_seed(0)
    x = torch.randn(3, 64, 1) * 4  # 192 elements: whole blocks, fn(x) itself
    assert torch.equal(whole.sigmoid(x), torch.sigmoid(x))
    y = torch.randn(3, 7, 1) * 4  # 21 elements: all in the tail without whole()
    padded = torch.zeros(whole.BLOCK)
    padded[:21] = y.reshape(-1)
    # each element as the vector code computes it (one whole block), whatever its position
    assert torch.equal(whole.sigmoid(y).reshape(-1), torch.sigmoid(padded)[:21])
    assert torch.equal(whole.softplus(y).reshape(-1), F.softplus(padded)[:21])
    z = torch.randn(3, 16, 1) * 4  # 48 elements: one block in place, 16 through the padded one
    for row in range(3):
        assert torch.equal(whole.sigmoid(z)[row], whole.sigmoid(z[row:row + 1])[0])


def test_whole_is_differentiable_like_the_function():
    torch.manual_seed(1)
    z = (torch.randn(3, 16, 1, dtype=torch.float64) * 3).requires_grad_(True)
    t = (torch.rand(3, 16, 1, dtype=torch.float64) > 0.5).to(torch.float64)
    whole.bce_with_logits(z, t).sum().backward()
    expected = (torch.sigmoid(z.detach()) - t)  # d BCE / d z
    assert torch.allclose(z.grad, expected, rtol=0, atol=1e-15)
    z.grad = None
    whole.softplus(z).sum().backward()
    assert torch.allclose(z.grad, torch.sigmoid(z.detach()), rtol=0, atol=1e-15)
