"""G-PATE's image configuration: teachers in blocks give the same numbers, and its options."""

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.gpate.chunked import ChunkedTeachers
from raudit.generators.gpate.loop import teacher_gradients
from raudit.generators.gpate.nets import ImageNets
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.teachers import TeacherTraining, teacher_rng
from raudit.generators.pategan.core.partitions import shuffled_partition


def mnist_shaped(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.integers(0, 256, size=(n, 784)), columns=[f"p{i}" for i in range(784)])
    df["is_zero"] = np.arange(n) % 2
    return df


def trained_generator(**opts):
    opts = {"teacher_net": "small", "recipe": "raudit", **opts}  # the pre-issue-47 image run
    gen = generators.get("gpate")(config="image", teachers=7, batch=5, max_iter=3, sigma1=1.0,
                                  sigma2=1.0, **opts).fit(mnist_shaped(), epsilon=1e6, seed=0)
    return gen._batch.trained.generator.flat.detach().clone(), gen.summary()


@pytest.mark.slow
def test_teachers_in_blocks_train_bit_identically_to_all_at_once():
    ref, s_ref = trained_generator(teacher_chunk=1000)  # one block: LocalTeachers' own step
    for chunk in (1, 3, 4):  # blocks that split the 7 teachers evenly and unevenly
        got, s = trained_generator(teacher_chunk=chunk)
        assert torch.equal(got, ref)
        assert s["eps_hat"] == s_ref["eps_hat"] and s["answered"] == s_ref["answered"]


def test_blockwise_generator_gradients_equal_the_reference_per_teacher_gradients():
    nets = ImageNets(785, z_dim=8)
    rng = CounterRNG([0, 1], purpose="gpate")
    x = torch.rand(2, 40, 785, generator=torch.Generator().manual_seed(0))
    parts, sizes = shuffled_partition(rng, torch.tensor([40, 40]), 40, 5)
    teachers = ChunkedTeachers(nets.teacher, teacher_rng([0, 1], 5), x, parts, sizes,
                               TeacherTraining(4, 1e-3), chunk=3)  # blocks straddle the models
    gp = nets.generator.create(rng)
    for seed in range(6):
        z = torch.rand(2, 6, 8, generator=torch.Generator().manual_seed(seed)) * 2 - 1
        fake = nets.generate(gp, z)
        got, ref = teachers.generator_gradients(fake), teacher_gradients(teachers, fake)
        assert got.shape == (2, 5, 6, 785)
        # oneDNN may pick another kernel for another number of groups: float rounding only
        # (measured: at most 5e-8 of the largest gradient, on 1.5 % of the entries, for 2 of
        # 30 draws at blocks of 1 or 3; equal at blocks of 5 and 10)
        torch.testing.assert_close(got, ref, rtol=0, atol=1e-6 * float(ref.abs().max()))


def test_z_dim_is_an_image_option_and_sizes_the_generator():
    with pytest.raises(ConfigError, match="z_dim is for config=image"):
        generators.get("gpate")(z_dim=50)
    with pytest.raises(ConfigError):
        generators.get("gpate")(config="image", teacher_chunk=0)
    hp = generators.get("gpate")(config="image", z_dim=50).resolve(56_000, 785)
    assert (hp.z_dim, hp.teacher_chunk, hp.teachers, hp.teacher_kernels) == (50, 4, 3733, "fast")
    ref = generators.get("gpate")(config="image", teacher_net="small",
                                  teacher_kernels="reference").resolve(56_000, 785)
    assert (ref.teacher_chunk, ref.teacher_kernels) == (16, "reference")  # the earlier default
    assert ImageNets(785, 50).generator.shapes()["w0"] == (50, 64 * 49)
    # the tabular configuration keeps its one block
    assert generators.get("gpate")().resolve(120, 4).teacher_chunk is None


def test_the_conditional_image_generator_writes_both_labels_from_the_public_prior():
    gen = generators.get("gpate")(config="image", conditional=True, label_prior=0.5, teachers=2,
                                  batch=3, max_iter=1, sigma1=1.0, sigma2=1.0, z_dim=8)
    out = gen.fit(mnist_shaped(30), epsilon=1e6, seed=0).sample(400, seed=1)
    share = out["is_zero"].mean()
    assert set(out["is_zero"].unique()) == {0, 1} and 0.4 < share < 0.6  # 400 draws, fixed seed


def test_a_label_channel_lets_the_image_gradient_depend_on_the_label():
    """Seen only by the last (linear) layer, the label leaves d logit / d image the same for
    both labels; as a second input channel (label_channel=true) it need not."""
    def image_grads(label_channel):
        net = ImageNets(785, label_channel=label_channel).teacher
        p = net.create(CounterRNG([4]))
        x = torch.rand(1, 1, 785, generator=torch.Generator().manual_seed(2)).repeat(1, 2, 1)
        x[0, 0, 784], x[0, 1, 784] = 0.0, 1.0
        x.requires_grad_(True)
        (g,) = torch.autograd.grad(net(p, x, logits=True).sum(), x)
        return g[0, :, :784]

    lin = image_grads(False)
    assert torch.equal(lin[0], lin[1])
    ch = image_grads(True)
    assert not torch.allclose(ch[0], ch[1])
    with pytest.raises(ConfigError, match="label_channel is for config=image"):
        generators.get("gpate")(label_channel=True)
    hp = generators.get("gpate")(config="image", teacher_net="small",
                                 label_channel=True).resolve(56_000, 785)
    assert hp.label_channel and ImageNets(785, label_channel=True).teacher.shapes()["c1"] == (16, 2, 4, 4)


def test_teacher_kernels_is_an_image_option():
    with pytest.raises(ConfigError, match="teacher_kernels is for config=image"):
        generators.get("gpate")(teacher_kernels="reference")
    with pytest.raises(ConfigError):
        generators.get("gpate")(config="image", teacher_kernels="fastest")
    # the small teacher's: the upstream teacher (the image default) has one path
    with pytest.raises(ConfigError, match="are for teacher_net=small"):
        generators.get("gpate")(config="image", teacher_kernels="reference")
    with pytest.raises(ConfigError, match="are for teacher_net=small"):
        generators.get("gpate")(config="image", label_channel=True)


def _teacher_grads(kernels: str, label_channel: bool = False):
    """One teacher step's parameter gradient and the generator's per-teacher gradients,
    on the same parameters and batches, through ``kernels``."""
    nets = ImageNets(785, z_dim=8, label_channel=label_channel, kernels=kernels)
    rng = CounterRNG([0, 1], purpose="gpate")
    x = torch.rand(2, 40, 785, generator=torch.Generator().manual_seed(0))
    parts, sizes = shuffled_partition(rng, torch.tensor([40, 40]), 40, 5)
    teachers = ChunkedTeachers(nets.teacher, teacher_rng([0, 1], 5), x, parts, sizes,
                               TeacherTraining(4, 1e-3), chunk=3)
    fake = nets.generate(nets.generator.create(rng),
                         torch.rand(2, 6, 8, generator=torch.Generator().manual_seed(1)) * 2 - 1)
    g = teachers.generator_gradients(fake)
    teachers.step(fake.detach(), None)
    return teachers.params.flat.grad.clone(), g


@pytest.mark.parametrize("label_channel", [False, True])
def test_fast_teacher_kernels_agree_with_the_reference_path(label_channel):
    # in-place activations give the same numbers; one forward over real + generated rows
    # reorders the weight gradients' float sums (measured at 128 teachers: within 6.2e-6 of
    # the largest; the bound here is 4e-5)
    step_fast, gen_fast = _teacher_grads("fast", label_channel)
    step_ref, gen_ref = _teacher_grads("reference", label_channel)
    assert torch.equal(gen_fast, gen_ref) and float(gen_ref.abs().max()) > 0
    torch.testing.assert_close(step_fast, step_ref, rtol=0, atol=4e-5 * float(step_ref.abs().max()))
    assert float(step_ref.abs().max()) > 0
