"""G-PATE's upstream teacher, recipe, presets and bug switches (issue 47).

The reference here is a plain torch.nn module per teacher written from the authors'
``model.py`` (``discriminator``) and ``ops.py``: the stacked teacher must give each group's
numbers, batch norm (train mode, statistics per call) included, to float64 rounding.
"""

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.gpate.chunked import ChunkedTeachers
from raudit.generators.gpate.loop import teacher_gradients
from raudit.generators.gpate.nets import ClassImageNets, UpstreamTeacher
from raudit.generators.gpate.slots import SlotSharedAdam, share_initialisation
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.partitions import shuffled_partition
from raudit.generators.pategan.core.teachers import TeacherTraining, teacher_rng

F64 = torch.float64
#: the stacked teacher on each device against the reference modules on the CPU (float64 both:
#: the devices differ in the last bits of reductions only); CUDA skipped without a device
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                reason="no CUDA device"))]


class Reference(nn.Module):
    """One teacher as the authors build it (NCHW; TF's SAME padding of a 5x5 stride-2 conv on
    an even side is 1 before and 2 after)."""

    def __init__(self, y: int):
        super().__init__()
        self.y = y
        self.pad = nn.ZeroPad2d((1, 2, 1, 2))
        self.conv1 = nn.Conv2d(1 + y, 1 + y, 5, 2)
        self.conv2 = nn.Conv2d(1 + 2 * y, 32 + y, 5, 2)
        self.bn1 = nn.BatchNorm2d(32 + y, eps=1e-5)
        self.fc = nn.Linear((32 + y) * 49 + y, 256)
        self.bn2 = nn.BatchNorm1d(256, eps=1e-5)
        self.out = nn.Linear(256 + y, 1)

    def forward(self, img: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        b = img.shape[0]

        def ymap(s):
            return y[:, :, None, None].expand(b, self.y, s, s)

        h = F.leaky_relu(self.conv1(self.pad(torch.cat([img, ymap(28)], 1))), 0.2)
        h = F.leaky_relu(self.bn1(self.conv2(self.pad(torch.cat([h, ymap(14)], 1)))), 0.2)
        h = F.leaky_relu(self.bn2(self.fc(torch.cat([h.flatten(1), y], 1))), 0.2)
        return self.out(torch.cat([h, y], 1))

    @classmethod
    def of_group(cls, net: UpstreamTeacher, flat: torch.Tensor, g: int) -> "Reference":
        """Teacher g of the stacked parameters, as a module in train mode (float64)."""
        v = {name: t[g] for name, t in _views(net, flat).items()}
        ref = cls(net.classes).to(F64).train()
        with torch.no_grad():
            for mod, w, b in ((ref.conv1, "c1", "cb1"), (ref.conv2, "c2", "cb2"),
                              (ref.bn1, "bn1_g", "bn1_b"), (ref.bn2, "bn2_g", "bn2_b")):
                mod.weight.copy_(v[w])
                mod.bias.copy_(v[b])
            ref.fc.weight.copy_(v["w3"].T)
            ref.fc.bias.copy_(v["b3"])
            ref.out.weight.copy_(v["w4"].T)
            ref.out.bias.copy_(v["b4"])
        return ref

    def grads_as_stacked(self) -> dict[str, torch.Tensor]:
        return {"c1": self.conv1.weight.grad, "cb1": self.conv1.bias.grad,
                "c2": self.conv2.weight.grad, "cb2": self.conv2.bias.grad,
                "bn1_g": self.bn1.weight.grad, "bn1_b": self.bn1.bias.grad,
                "w3": self.fc.weight.grad.T, "b3": self.fc.bias.grad,
                "bn2_g": self.bn2.weight.grad, "bn2_b": self.bn2.bias.grad,
                "w4": self.out.weight.grad.T, "b4": self.out.bias.grad}


def _views(net, flat):
    from raudit.generators.nn.stacked import Stacked
    return Stacked(flat, net.create(CounterRNG([0], dtype=F64)).layout).views()


def _rows(n, classes, seed):
    """n rows of 784 pixels in [0, 1] and a label encoded y / (classes - 1)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    return torch.cat([torch.rand(n, 784, generator=g, dtype=F64),
                      (y.to(F64) / (classes - 1))[:, None]], 1)


def _onehot(x, classes):
    return F.one_hot(torch.round(x[:, 784] * (classes - 1)).long(), classes).to(F64)


def _perturbed(net, groups, seed=0):
    """Stacked parameters with batch-norm scales and shifts and biases away from 1 and 0
    (so that a test would see them used wrongly)."""
    p = net.create(CounterRNG(list(range(groups)), dtype=F64))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        p.flat.add_(0.05 * torch.randn(p.flat.shape, generator=g, dtype=F64))
    return p


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("classes", [10, 2])
def test_the_stacked_upstream_teacher_equals_a_loop_of_reference_modules(classes, device):
    from raudit.generators.nn.stacked import Stacked

    net, groups, b = UpstreamTeacher(classes), 3, 6
    p = _perturbed(net, groups)
    p = Stacked(p.flat.detach().to(device), p.layout)
    x = torch.stack([_rows(b, classes, s) for s in range(groups)]).to(device).requires_grad_(True)
    out = net(p, x, logits=True)  # (G, B, 1)
    (gx,) = torch.autograd.grad(out.sum(), x)
    out, gx, x = out.detach().cpu(), gx.cpu(), x.detach().cpu()
    for g in range(groups):
        ref = Reference.of_group(net, p.flat.detach().cpu(), g)
        xg = x[g].clone().requires_grad_(True)
        r = ref(xg[:, :784].reshape(b, 1, 28, 28), _onehot(xg.detach(), classes)
                if classes > 2 else torch.stack([1 - xg[:, 784], xg[:, 784]], 1))
        (rx,) = torch.autograd.grad(r.sum(), xg)
        torch.testing.assert_close(out[g], r, rtol=1e-10, atol=1e-12)
        # the image gradient runs through the batch's statistics, as the reference's
        torch.testing.assert_close(gx[g], rx, rtol=1e-9, atol=1e-12)


def test_the_init_is_the_authors_truncated_and_plain_normals():
    net = UpstreamTeacher(10)
    v = net.create(CounterRNG(list(range(40)))).views()
    conv = torch.cat([v["c1"].flatten(), v["c2"].flatten()])
    assert float(conv.abs().max()) <= 2 * 0.02 + 1e-7  # truncated at 2 std
    assert abs(float(conv.std()) - 0.02 * 0.8796) < 0.0003  # the truncated normal's std
    assert abs(float(v["w3"].std()) - 0.02) < 0.0002 and float(v["w3"].abs().max()) > 0.06
    assert torch.equal(v["bn1_g"], torch.ones_like(v["bn1_g"]))
    assert torch.equal(v["bn2_b"], torch.zeros_like(v["bn2_b"]))


def _teachers(k=3, models=2, n=24, chunk=2, classes=10, sample="sequential", batch=None,
              device="cpu"):
    net = UpstreamTeacher(classes)
    x = torch.stack([_rows(n, classes, 10 + m) for m in range(models)]).to(device)
    rng = CounterRNG(list(range(models)), purpose="gpate", dtype=F64, device=device)
    parts, sizes = shuffled_partition(rng, torch.full((models,), n, device=device), n, k)
    t = ChunkedTeachers(net, teacher_rng(list(range(models)), k, dtype=F64, device=device), x,
                        parts, sizes, TeacherTraining(batch or n // k, 1e-3, sample=sample),
                        chunk=chunk)
    with torch.no_grad():  # drawn on the CPU: the same perturbation on any device
        t.params.flat.add_(0.05 * torch.randn(t.params.flat.shape, dtype=F64,
                                              generator=torch.Generator().manual_seed(3)).to(device))
    return t, x


def _reference_step_grads(t, x, rows, fake, pooled=False):
    """Each teacher's gradient of mean BCE(real, 1) + mean BCE(fake, 0) through its own module:
    real and generated rows in separate calls (the authors), or in one (``pooled``)."""
    m, k, b = rows.shape
    x, rows, fake = x.cpu(), rows.cpu(), fake.cpu()  # the reference runs on the CPU
    out = []
    for i in range(m * k):
        ref = Reference.of_group(t.net, t.params.flat.detach().cpu(), i)
        real = x[i // k, rows[i // k, i % k]]
        fk = fake[i] if fake.shape[0] == m * k else fake[i // k]

        def call(r, ref=ref):
            return ref(r[:, :784].reshape(-1, 1, 28, 28), _onehot(r, t.net.classes))

        if pooled:
            lg = call(torch.cat([real, fk]))
            lr, lf = lg[:b], lg[b:]
        else:
            lr, lf = call(real), call(fk)
        loss = (F.binary_cross_entropy_with_logits(lr, torch.ones_like(lr))
                + F.binary_cross_entropy_with_logits(lf, torch.zeros_like(lf)))
        loss.backward()
        g = ref.grads_as_stacked()
        out.append(torch.cat([g[name].reshape(-1) for name in t.params.layout]))
    return torch.stack(out)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("per_teacher_fake", [False, True])
def test_a_chunked_teacher_step_keeps_real_and_generated_batch_norm_statistics_apart(
        per_teacher_fake, device):
    t, x = _teachers(device=device)
    m, k = t.models, t.k
    fake = _rows(m * k * 5 if per_teacher_fake else m * 5, 10, 7).view(-1, 5, 785)
    rows = t.next_rows()
    want = _reference_step_grads(t, x, rows, fake)
    pooled = _reference_step_grads(t, x, rows, fake, pooled=True)
    t.step(fake.to(device), None)
    got = t.params.flat.grad.cpu()
    torch.testing.assert_close(got, want, rtol=1e-8, atol=1e-12 * float(want.abs().max()) + 1e-14)
    # one call over both batches (the small teacher's fast path) would be another gradient
    assert float((pooled - want).abs().max()) > 1e-3 * float(want.abs().max())


def test_generator_gradients_of_the_upstream_teacher_equal_the_reference_per_teacher():
    t, _ = _teachers(chunk=4)
    fake = _rows(2 * 5, 10, 8).view(2, 5, 785)
    got = t.generator_gradients(fake)
    ref_all = teacher_gradients(t, fake)
    torch.testing.assert_close(got, ref_all, rtol=1e-10, atol=1e-16)
    for i in range(t.models * t.k):
        ref = Reference.of_group(t.net, t.params.flat.detach(), i)
        xi = fake[i // t.k].clone().requires_grad_(True)
        lg = ref(xi[:, :784].reshape(-1, 1, 28, 28), _onehot(xi.detach(), 10))
        loss = F.binary_cross_entropy_with_logits(lg, torch.ones_like(lg))
        (gx,) = torch.autograd.grad(loss, xi)
        torch.testing.assert_close(got[i // t.k, i % t.k], -gx, rtol=1e-9, atol=1e-16)


def test_sequential_real_batches_are_the_whole_partition_or_cycle_through_it():
    t, _ = _teachers(sample="sequential")  # batch = 24 // 3 = 8 = each partition's size
    first = t.next_rows()
    t.step(_rows(2 * 4, 10, 1).view(2, 4, 785), None)
    assert torch.equal(t.next_rows(), first)  # the same whole partition every step
    own = t.parts.view(2, 3, -1)[..., :8]
    assert torch.equal(torch.sort(first, -1).values, torch.sort(own, -1).values)
    half, _ = _teachers(sample="sequential", batch=4)
    a = half.next_rows()
    half._positions()  # a step's draw
    b = half.next_rows()
    half._positions()
    assert torch.equal(torch.sort(torch.cat([a, b], -1), -1).values, torch.sort(own, -1).values)
    assert torch.equal(half.next_rows(), a)  # then round again


def test_generate_for_writes_the_given_labels_and_ignores_the_drawn_one():
    nets = ClassImageNets(785, 10, z_dim=8, teacher_net="upstream")
    p = nets.generator.create(CounterRNG([0, 1]))
    z = torch.rand(2, 4, 8) * 2 - 1
    labels = torch.tensor([[[0, 1, 2, 3], [9, 9, 5, 5]], [[4, 4, 4, 4], [0, 2, 4, 6]]])
    out = nets.generate_for(p, z, labels)
    assert out.shape == (4, 4, 785)
    assert torch.equal(torch.round(out[..., 784] * 9).long(), labels.view(4, 4))
    # a row with the label generate() drew gives generate()'s image
    drawn = torch.clamp(torch.floor((z[..., -1] + 1) / 2 * 10), 0, 9).long()
    torch.testing.assert_close(nets.generate_for(p, z, drawn[:, None]).view(2, 4, 785),
                               nets.generate(p, z))


def mnist10_shaped(n=80, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.integers(0, 256, size=(n, 784)), columns=[f"p{i}" for i in range(784)])
    df["digit"] = np.arange(n) % 10
    return df


SMALL = {"config": "image", "conditional": True, "classes": 10, "teachers": 8, "max_iter": 2,
         "sigma1": 1.0, "sigma2": 1.0, "z_dim": 8}


def test_each_teacher_sees_generated_rows_with_its_real_batch_labels(monkeypatch):
    seen = []
    step = ChunkedTeachers.step

    def spy(self, fake, active):
        rows = torch.gather(self.parts, 1, self._next).view(self.models, self.k, -1)  # the loop's
        real = torch.gather(self.x[..., -1], 1, rows.reshape(self.models, -1)).view(-1, rows.shape[2])
        seen.append((fake[..., 784].clone(), real.clone()))
        return step(self, fake, active)

    monkeypatch.setattr(ChunkedTeachers, "step", spy)
    generators.get("gpate")(**SMALL).fit(mnist10_shaped(), epsilon=1e6, seed=0)
    assert len(seen) == 2
    for fake, real in seen:
        assert fake.shape == real.shape == (8, 10)  # a batch per teacher of its 10 rows
        torch.testing.assert_close(fake, real.to(fake.dtype))


def test_the_recipe_clamps_the_batch_to_the_rows_per_teacher_and_presets_set_the_papers_runs():
    g = generators.get("gpate")
    hp = g(config="image").resolve(56_000, 785)
    assert (hp.teacher_net, hp.batch, hp.teacher_batch, hp.teacher_sample) == ("upstream", 15, 15,
                                                                                "sequential")
    assert hp.accountant == "gnmax-independent" and not hp.shared_teacher_state
    assert g(config="image", batch=10).resolve(56_000, 785).batch == 10  # below the rows: kept
    old = g(config="image", teacher_net="small", recipe="raudit").resolve(56_000, 785)
    assert (old.teacher_net, old.batch, old.teacher_batch, old.teacher_sample) == (
        "small", 30, 15, "with-replacement")
    e1 = g(preset="paper-eps1").resolve(60_000, 785)
    assert (e1.teachers, e1.batch, e1.sigma1, e1.sigma2, e1.z_dim, e1.max_iter, e1.teacher_labels) == (
        4000, 15, 3000.0, 1000.0, 50, 1000, True)
    e10 = g(preset="paper-eps10").resolve(60_000, 785)
    assert (e10.teachers, e10.batch, e10.sigma1, e10.sigma2, e10.z_dim) == (2000, 30, 600.0, 100.0, 100)
    assert g(preset="paper-eps10", z_dim=50).resolve(60_000, 785).z_dim == 50  # -o beats a preset
    with pytest.raises(ConfigError, match="has no preset 'paper'"):
        g(preset="paper")
    with pytest.raises(ConfigError, match="teacher_batch is the generator batch"):
        g(config="image", teacher_batch=5)
    with pytest.raises(ConfigError, match="for config=image"):
        g(teacher_net="upstream")
    assert g().resolve(120, 4).accountant == "gnmax"  # tabular keeps its data-dependent default


def _slot_teachers(state: bool, init: bool, shift: float = 0.0):
    """4 teachers in 2 slots (teachers 0 and 2 share slot 0); ``shift`` moves teacher 2's rows."""
    t, _ = _teachers(k=4, models=1, n=32, chunk=2)
    if init:
        share_initialisation(t.params, 1, 4, 2)
    if state:
        t.opt = SlotSharedAdam(t.params, models=1, k=4, slots=2, lr=1e-3, betas=(0.5, 0.999))
    if shift:
        with torch.no_grad():  # teacher 2's partition only (its ids into the distinct rows)
            t.table = t.table.clone()
            t.table[t.ids[2]] = (t.table[t.ids[2]] * (1 - shift)).clamp(0, 1)
    fake = _rows(5, 10, 9).view(1, 5, 785)
    for _ in range(3):
        t.step(fake, None)
    return t.params.flat.detach().clone()


def test_without_shared_state_a_teacher_ignores_the_other_partitions_of_its_slot():
    a, b = _slot_teachers(False, False), _slot_teachers(False, False, shift=0.5)
    assert torch.equal(a[0], b[0]) and not torch.equal(a[2], b[2])


def test_shared_state_makes_a_teacher_depend_on_its_slot_mates_partition():
    a, b = _slot_teachers(True, False), _slot_teachers(True, False, shift=0.5)
    assert not torch.equal(a[0], b[0])  # teacher 0 moved with teacher 2's data (the bug)
    assert torch.equal(a[1], b[1])  # slot 1 holds neither


def test_shared_initialisation_starts_a_slots_teachers_equal_and_only_those():
    t, _ = _teachers(k=4, models=2, n=32)
    flat = t.params.flat.detach().view(2, 4, -1)
    assert not torch.equal(flat[:, 0], flat[:, 2])
    share_initialisation(t.params, 2, 4, 2)
    flat = t.params.flat.detach().view(2, 4, -1)
    assert torch.equal(flat[:, 0], flat[:, 2]) and torch.equal(flat[:, 1], flat[:, 3])
    assert not torch.equal(flat[:, 0], flat[:, 1]) and not torch.equal(flat[0], flat[1])


def test_slot_shared_adam_with_one_teacher_per_slot_is_adam(monkeypatch):
    monkeypatch.setattr("raudit.generators.nn.optim.FUSED", False)  # the eager formulas
    t, _ = _teachers(k=3, models=2)
    p0 = t.params.flat.detach().clone()
    g = torch.randn(p0.shape, dtype=F64, generator=torch.Generator().manual_seed(2))
    from raudit.generators.nn.stacked import Stacked
    a, b = Stacked(p0.clone(), t.params.layout), Stacked(p0.clone(), t.params.layout)
    oa, ob = Adam(a, lr=1e-3, betas=(0.5, 0.999)), SlotSharedAdam(b, models=2, k=3, slots=3, lr=1e-3,
                                                                   betas=(0.5, 0.999))
    active = torch.tensor([True, True, True, False, False, False])
    for _ in range(3):
        a.flat.grad, b.flat.grad = g, g
        oa.step(active)
        ob.step(active)
    assert torch.equal(a.flat, b.flat) and torch.equal(b.flat[3:], p0[3:])


def _fit_summary(**kw):
    return generators.get("gpate")(**SMALL, **kw).fit(mnist10_shaped(), epsilon=1e6, seed=0).summary()


def test_the_stopping_eps_never_falls_below_the_data_independent_bound_by_default():
    s = _fit_summary()
    assert s["hyperparameters"]["accountant"] == "gnmax-independent"
    assert s["eps_hat"] >= s["eps_data_independent"] and s["eps_note"] == "data-independent RDP"
    bug = _fit_summary(accountant="gnmax")  # the authors' data-dependent stop, unsanitised
    assert bug["eps_hat"] < bug["eps_data_independent"]


def test_the_bug_switches_reach_the_run():
    on = _fit_summary(shared_teacher_state=True, shared_teacher_init=True, slot_teachers=4)
    assert on["hyperparameters"]["shared_teacher_state"] and on["iterations"] == 2
    with pytest.raises(ConfigError, match="shared_teacher_state must be true or false"):
        generators.get("gpate")(**SMALL, shared_teacher_state="yes")
