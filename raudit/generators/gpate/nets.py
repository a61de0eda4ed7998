"""G-PATE's networks on stacked parameters: the tabular MLPs and a small DCGAN for MNIST.

Tabular (our choice; the G-PATE paper only says "the same architecture as PATE-GAN"):
PATE-GAN's networks as raudit's ``paper`` builds them: generator widths {z, d, d/2, d}
with ReLU hidden layers and a sigmoid output (data scaled to [0, 1]), z ~ U(0, 1)^d,
teachers one layer (logistic regression on the record).

Image (MNIST as raudit loads it: 784 pixel columns then the label): the teacher is the
G-PATE authors' discriminator by default (:class:`UpstreamTeacher`, ``teacher_net=upstream``:
batch norm, the one-hot label at every layer; issue 47); ``teacher_net=small`` keeps the
teacher of every earlier run (:class:`ImageTeacher`). The generator is a small
DCGAN in the spirit of the reference code's, scaled down to run on CPU. Generator:
z (100, U(-1, 1) as the reference code draws it) -> 64*7*7 (ReLU) -> transposed conv
4x4/2 to 32x14x14 (ReLU) -> transposed conv 4x4/2 to 1x28x28 (sigmoid), plus a sigmoid
label head on the 64*7*7 code (the reference code conditions on the digit instead; raudit's
table carries a binary label column). Small teacher: conv 4x4/2 1->16 (leaky ReLU 0.2) -> conv
4x4/2 16->32 (leaky ReLU) -> linear on [32*7*7 features, label] -> 1 logit.
Models are batched with grouped convolutions (groups = models or teachers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from raudit.generators.labelled import with_class, with_label
from raudit.generators.nn import whole
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked, constant, xavier_uniform


class TabularNets:
    """PATE-GAN's generator and a one-layer teacher."""

    z_kind = "uniform"

    def __init__(self, d: int, teacher_hidden: int = 0):
        self.z_dim = d
        self.generator = MLP([d, d, max(1, d // 2), d], ["relu", "relu", "sigmoid"])
        # one layer (PATE-GAN's logistic regression) is linear in the record, so its gradient
        # has the same direction for both labels: it cannot teach a conditional generator
        # which features go with which label; ``teacher_hidden`` units of leaky ReLU can
        self.teacher = (MLP([d, 1], ["sigmoid"]) if not teacher_hidden else
                        MLP([d, teacher_hidden, 1], ["leaky_relu", "sigmoid"]))

    def generate(self, p: Stacked, z: torch.Tensor) -> torch.Tensor:
        return self.generator(p, z)


class LabelHeadTeacher(MLP):
    """A teacher with one output per label (``teacher_label="heads"``): the features go through
    the MLP, whose two logits are D_0 and D_1, and the record's own label (its last column,
    0/1) picks one. Each head is trained only on the real and generated rows of its class,
    so the gradient a generated row of class y receives points from the fakes of class y to
    the real rows of class y: it says which features go with which label, even with no
    hidden layer (a conditional GAN's per-class discriminator). Why: a teacher that reads
    the label as one more input can say so only through a hidden layer, which 1-15 rows per
    teacher barely train (lab/learning.md)."""

    def __init__(self, d: int, hidden: int = 0):
        widths = [d - 1, 2] if not hidden else [d - 1, hidden, 2]
        super().__init__(widths, ["sigmoid"] if not hidden else ["leaky_relu", "sigmoid"])

    def __call__(self, p: Stacked, x: torch.Tensor, *, logits: bool = False,
                 shared: int = 1) -> torch.Tensor:
        out = MLP.__call__(self, p, x[..., :-1], logits=True, shared=shared)  # (G, B, 2)
        y = x[..., -1:]
        if shared > 1:
            y = y.repeat_interleave(shared, dim=0)
        z = torch.where(y > 0.5, out[..., 1:2], out[..., 0:1])
        return z if logits else whole.sigmoid(z)  # same bits in any chunk (nn/whole.py)


class LabelledTabularNets(TabularNets):
    """The tabular nets with a conditional generator: the last z coordinate becomes a label
    y ~ Bernoulli(``prior``) (public), fed beside the rest of z; the network writes the
    d - 1 features and y is appended (:mod:`raudit.generators.labelled`)."""

    def __init__(self, d: int, prior: float, teacher_hidden: int = 0, teacher_label: str = "input"):
        super().__init__(d, teacher_hidden)
        self.prior = prior
        if teacher_label == "heads":
            self.teacher = LabelHeadTeacher(d, teacher_hidden)
        self.generator = MLP([d, d, max(1, d // 2), d - 1], ["relu", "relu", "sigmoid"])

    def generate(self, p: Stacked, z: torch.Tensor) -> torch.Tensor:
        return with_label(lambda zy: self.generator(p, zy), z, self.prior, self.z_kind)


def _normal(rng: CounterRNG, shape: tuple[int, ...], std: float, copies: int) -> torch.Tensor:
    return rng.normal(copies, *shape, std=std).reshape(-1, *shape)


def _grouped(x: torch.Tensor) -> torch.Tensor:
    """(G, B, C, H, W) -> (B, G*C, H, W) for a grouped convolution."""
    g, b, c, h, w = x.shape
    return x.permute(1, 0, 2, 3, 4).reshape(b, g * c, h, w)


def _ungrouped(x: torch.Tensor, g: int) -> torch.Tensor:
    b, gc, h, w = x.shape
    return x.view(b, g, gc // g, h, w).permute(1, 0, 2, 3, 4)


#: the image teachers' paths: "fast" (in-place activations; real and generated rows in one
#: forward, :mod:`.chunked`) or "reference" (every run before issue 31, bit for bit)
KERNELS = ("fast", "reference")


def _fast_convs(img: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor,
                b2: torch.Tensor, g: int) -> torch.Tensor:
    """Both grouped convolutions with in-place leaky ReLUs: (G, B, C, 28, 28) -> (B, G*2ch, 7, 7).

    The in-place leaky ReLU (its backward reads the output, valid for a positive slope: the
    same mask, so the same numbers) spares an activation buffer per layer and its page
    faults. Measured and not kept: channels-last tensors (1.25x over the reference at load 3,
    but 1.24x against this path's 1.35x side by side at load 13, 128 teachers in blocks of 4).
    """
    h = F.conv2d(_grouped(img), w1, b1, stride=2, padding=1, groups=g)
    h = F.conv2d(F.leaky_relu_(h, 0.2), w2, b2, stride=2, padding=1, groups=g)
    return F.leaky_relu_(h, 0.2)


class ImageGenerator:
    """z -> (28x28 image, label) as 785 values in [0, 1] (pixels row-major, label last)."""

    def __init__(self, z_dim: int = 100, ch: int = 32):
        self.z_dim, self.ch = z_dim, ch

    def shapes(self) -> dict[str, tuple[int, ...]]:
        c2 = 2 * self.ch
        return {"w0": (self.z_dim, c2 * 49), "b0": (c2 * 49,), "wl": (c2 * 49, 1), "bl": (1,),
                "c1": (c2, self.ch, 4, 4), "cb1": (self.ch,), "c2": (self.ch, 1, 4, 4), "cb2": (1,)}

    def create(self, rng: CounterRNG, copies: int = 1) -> Stacked:
        c2 = 2 * self.ch
        inits = {"w0": xavier_uniform(rng, self.z_dim, c2 * 49, copies),
                 "b0": constant(rng, (c2 * 49,), 0.0, copies),
                 "wl": xavier_uniform(rng, c2 * 49, 1, copies), "bl": constant(rng, (1,), 0.0, copies),
                 "c1": _normal(rng, (c2, self.ch, 4, 4), 0.02, copies),  # DCGAN's N(0, 0.02)
                 "cb1": constant(rng, (self.ch,), 0.0, copies),
                 "c2": _normal(rng, (self.ch, 1, 4, 4), 0.02, copies),
                 "cb2": constant(rng, (1,), 0.0, copies)}
        return Stacked.create(self.shapes(), inits)

    def __call__(self, p: Stacked, z: torch.Tensor) -> torch.Tensor:
        v = p.views()
        g, b, _ = z.shape
        h = torch.relu(torch.baddbmm(v["b0"].unsqueeze(1), z, v["w0"]))  # (G, B, 2ch*49)
        label = whole.sigmoid(torch.baddbmm(v["bl"].unsqueeze(1), h, v["wl"]))  # (G, B, 1)
        x = _grouped(h.view(g, b, 2 * self.ch, 7, 7))
        x = F.conv_transpose2d(x, v["c1"].reshape(-1, self.ch, 4, 4), v["cb1"].reshape(-1),
                               stride=2, padding=1, groups=g)
        x = F.conv_transpose2d(torch.relu(x), v["c2"].reshape(-1, 1, 4, 4), v["cb2"].reshape(-1),
                               stride=2, padding=1, groups=g)
        img = whole.sigmoid(_ungrouped(x, g)).reshape(g, b, 784)
        return torch.cat([img, label], dim=2)


class ImageTeacher:
    """A small conv discriminator on (image, label); called like :class:`MLP` (logits=True)."""

    def __init__(self, ch: int = 16, label_channel: bool = False, kernels: str = "fast",
                 classes: int = 2):
        # label_channel: the label also enters as a constant second image channel (the
        # reference code's conv_cond_concat), so the image gradient can depend on it; a label
        # seen only by the last, linear layer adds a constant to the logit and leaves the
        # gradient with respect to the image the same for both labels.
        # classes > 2 (mnist10's digit, encoded d / (classes - 1)): the label is read back
        # as a one-hot of ``classes`` values, which enters as that many constant image
        # channels AND beside the last layer's features, as the reference code's
        # conv_cond_concat / concat of y (always: without it the image gradient could not
        # depend on the digit, and a conditional generator could not learn which is which)
        if kernels not in KERNELS:
            raise ValueError(f"kernels must be one of {KERNELS}, got {kernels!r}")
        self.ch, self.kernels, self.classes = ch, kernels, classes
        self.cin = 1 + classes if classes > 2 else (2 if label_channel else 1)
        self.lin = classes if classes > 2 else 1  # label values beside the conv features

    def shapes(self) -> dict[str, tuple[int, ...]]:
        c2 = 2 * self.ch
        return {"c1": (self.ch, self.cin, 4, 4), "cb1": (self.ch,), "c2": (c2, self.ch, 4, 4),
                "cb2": (c2,), "w": (c2 * 49 + self.lin, 1), "b": (1,)}

    def _label(self, x: torch.Tensor) -> torch.Tensor:
        """The label as the teacher reads it: the encoded value (binary), or a one-hot."""
        if self.classes == 2:
            return x[..., 784:785]
        digit = torch.round(x[..., 784].detach() * (self.classes - 1)).long().clamp_(0, self.classes - 1)
        return F.one_hot(digit, self.classes).to(x.dtype)

    def create(self, rng: CounterRNG, copies: int = 1) -> Stacked:
        c2 = 2 * self.ch
        inits = {"c1": _normal(rng, (self.ch, self.cin, 4, 4), 0.02, copies),
                 "cb1": constant(rng, (self.ch,), 0.0, copies),
                 "c2": _normal(rng, (c2, self.ch, 4, 4), 0.02, copies),
                 "cb2": constant(rng, (c2,), 0.0, copies),
                 "w": xavier_uniform(rng, c2 * 49 + self.lin, 1, copies),
                 "b": constant(rng, (1,), 0.0, copies)}
        return Stacked.create(self.shapes(), inits)

    def __call__(self, p: Stacked, x: torch.Tensor, *, logits: bool = False, shared: int = 1) -> torch.Tensor:
        v = p.views()
        g = p.groups
        if shared > 1:  # one batch per model, k teachers each: copy it to every teacher
            x = x.repeat_interleave(shared, dim=0)
        b = x.shape[1]
        img = x[..., :784].reshape(g, b, 1, 28, 28)
        label = self._label(x)  # (G, B, 1) or (G, B, classes)
        if self.cin > 1:
            c = self.cin - 1
            img = torch.cat([img, label[..., None, None].expand(g, b, c, 28, 28)], dim=2)
        w1, w2 = v["c1"].reshape(-1, self.cin, 4, 4), v["c2"].reshape(-1, self.ch, 4, 4)
        if self.kernels == "fast":
            h = _fast_convs(img, w1, v["cb1"].reshape(-1), w2, v["cb2"].reshape(-1), g)
        else:  # the NCHW path of every run before issue 31 (bit for bit)
            h = F.leaky_relu(F.conv2d(_grouped(img), w1, v["cb1"].reshape(-1), stride=2, padding=1,
                                      groups=g), 0.2)
            h = F.leaky_relu(F.conv2d(h, w2, v["cb2"].reshape(-1), stride=2, padding=1, groups=g), 0.2)
        feats = torch.cat([_ungrouped(h, g).reshape(g, b, -1), label], dim=2)
        out = torch.baddbmm(v["b"].unsqueeze(1), feats, v["w"])
        return out if logits else whole.sigmoid(out)


#: the image teachers: "upstream" (the G-PATE authors' discriminator, :class:`UpstreamTeacher`)
#: or "small" (:class:`ImageTeacher`, every image run before issue 47)
TEACHER_NETS = ("upstream", "small")

_BN_EPS = 1e-5  # the authors' ops.batch_norm (tf.contrib.layers.batch_norm, epsilon=1e-5)


def _truncated_normal(rng: CounterRNG, shape: tuple[int, ...], std: float, copies: int) -> torch.Tensor:
    """N(0, std^2) truncated at 2 std, as TF's truncated_normal_initializer (the authors'
    conv2d), drawn by inverting the CDF of one uniform each (no redraw loop)."""
    lo = 0.5 * math.erfc(2.0 / math.sqrt(2.0))  # Phi(-2)
    u = rng.uniform(copies, *shape).to(torch.float64)
    z = math.sqrt(2.0) * torch.erfinv(2.0 * (lo + u * (1.0 - 2.0 * lo)) - 1.0)
    return (std * z).to(rng.dtype).reshape(-1, *shape)


def _same_pad(x: torch.Tensor) -> torch.Tensor:
    """TF's padding='SAME' for a 5x5 stride-2 convolution of an even side: 1 before, 2 after
    (28 -> 14 -> 7); torch's symmetric padding=2 would shift the grid by one pixel."""
    return F.pad(x, (1, 2, 1, 2))


def _batch_norm_rows(h: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """Train-mode batch norm of (G, B, U) over each group's B rows (biased variance)."""
    mean = h.mean(dim=1, keepdim=True)
    var = h.var(dim=1, unbiased=False, keepdim=True)
    return (h - mean) * torch.rsqrt(var + _BN_EPS) * gamma.unsqueeze(1) + beta.unsqueeze(1)


class UpstreamTeacher:
    """The G-PATE authors' teacher (``model.py``'s ``discriminator``), stacked over groups.

    [image, y maps] -> conv 5x5/2 SAME to 1+Y channels, leaky ReLU 0.2 -> [., y maps] ->
    conv 5x5/2 to 32+Y channels, batch norm, leaky ReLU -> flatten, [., y] -> linear 256,
    batch norm, leaky ReLU -> [., y] -> linear 1. Y = ``classes`` (the one-hot label enters
    at every layer; a binary 0/1 label v as [1 - v, v]). Convolutions N(0, 0.02) truncated
    at 2 std, linears N(0, 0.02), biases 0, batch-norm scale 1 and shift 0. Batch norm always
    in train mode (the authors never switch it off): each group's statistics over the rows
    of ONE call, so real and generated rows must go through separate calls (as the authors'
    two ``discriminator`` calls) or their statistics pool. Why this net (issue 47): the small
    teacher saturates (accuracy 0.93-1.0, class-blind gradients); this one stays at 0.5-0.8
    and its gradients point at the classes.
    """

    #: statistics per call: :class:`.chunked.ChunkedTeachers` keeps real and generated rows apart
    batch_norm = True

    def __init__(self, classes: int = 10, df_dim: int = 32, dfc_dim: int = 256):
        self.classes, self.fc = classes, dfc_dim
        self.c1, self.c2 = 1 + classes, df_dim + classes  # the authors' c_dim + y_dim, df_dim + y_dim

    def shapes(self) -> dict[str, tuple[int, ...]]:
        y = self.classes
        return {"c1": (self.c1, 1 + y, 5, 5), "cb1": (self.c1,),
                "c2": (self.c2, self.c1 + y, 5, 5), "cb2": (self.c2,),
                "bn1_g": (self.c2,), "bn1_b": (self.c2,),
                "w3": (self.c2 * 49 + y, self.fc), "b3": (self.fc,),
                "bn2_g": (self.fc,), "bn2_b": (self.fc,),
                "w4": (self.fc + y, 1), "b4": (1,)}

    def create(self, rng: CounterRNG, copies: int = 1) -> Stacked:
        s = self.shapes()
        inits = {"c1": _truncated_normal(rng, s["c1"], 0.02, copies),
                 "cb1": constant(rng, s["cb1"], 0.0, copies),
                 "c2": _truncated_normal(rng, s["c2"], 0.02, copies),
                 "cb2": constant(rng, s["cb2"], 0.0, copies),
                 "bn1_g": constant(rng, s["bn1_g"], 1.0, copies),
                 "bn1_b": constant(rng, s["bn1_b"], 0.0, copies),
                 "w3": _normal(rng, s["w3"], 0.02, copies), "b3": constant(rng, s["b3"], 0.0, copies),
                 "bn2_g": constant(rng, s["bn2_g"], 1.0, copies),
                 "bn2_b": constant(rng, s["bn2_b"], 0.0, copies),
                 "w4": _normal(rng, s["w4"], 0.02, copies), "b4": constant(rng, s["b4"], 0.0, copies)}
        return Stacked.create(s, inits)

    def label(self, x: torch.Tensor) -> torch.Tensor:
        """The one-hot label (G, B, Y) of rows (G, B, 785); binary: [1 - v, v] (exact at 0/1,
        differentiable for a label head's soft value)."""
        if self.classes == 2:
            v = x[..., 784:785]
            return torch.cat([1.0 - v, v], dim=-1)
        digit = torch.round(x[..., 784].detach() * (self.classes - 1)).long().clamp_(0, self.classes - 1)
        return F.one_hot(digit, self.classes).to(x.dtype)

    def __call__(self, p: Stacked, x: torch.Tensor, *, logits: bool = False, shared: int = 1) -> torch.Tensor:
        v = p.views()
        g = p.groups
        if shared > 1:  # one batch per model, k teachers each: copy it to every teacher
            x = x.repeat_interleave(shared, dim=0)
        b, ny = x.shape[1], self.classes
        y = self.label(x)
        ymap = y[..., None, None]
        h = torch.cat([x[..., :784].reshape(g, b, 1, 28, 28), ymap.expand(g, b, ny, 28, 28)], dim=2)
        h = F.conv2d(_same_pad(_grouped(h)), v["c1"].reshape(-1, 1 + ny, 5, 5), v["cb1"].reshape(-1),
                     stride=2, groups=g)
        h = _ungrouped(F.leaky_relu(h, 0.2), g)  # (G, B, c1, 14, 14)
        h = torch.cat([h, ymap.expand(g, b, ny, 14, 14)], dim=2)
        h = F.conv2d(_same_pad(_grouped(h)), v["c2"].reshape(-1, self.c1 + ny, 5, 5),
                     v["cb2"].reshape(-1), stride=2, groups=g)  # (B, G*c2, 7, 7)
        # per (group, channel) over the call's rows and pixels: F.batch_norm's channels
        h = F.batch_norm(h, None, None, v["bn1_g"].reshape(-1), v["bn1_b"].reshape(-1),
                         training=True, eps=_BN_EPS)
        h = _ungrouped(F.leaky_relu(h, 0.2), g).reshape(g, b, -1)
        h = torch.baddbmm(v["b3"].unsqueeze(1), torch.cat([h, y], dim=2), v["w3"])
        h = F.leaky_relu(_batch_norm_rows(h, v["bn2_g"], v["bn2_b"]), 0.2)
        out = torch.baddbmm(v["b4"].unsqueeze(1), torch.cat([h, y], dim=2), v["w4"])
        return out if logits else whole.sigmoid(out)


def image_teacher(net: str, *, classes: int = 2, label_channel: bool = False,
                  kernels: str = "fast"):
    """The image teacher ``net`` (:data:`TEACHER_NETS`) for ``classes`` labels."""
    if net not in TEACHER_NETS:
        raise ValueError(f"teacher net must be one of {TEACHER_NETS}, got {net!r}")
    if net == "upstream":
        return UpstreamTeacher(classes)
    return ImageTeacher(label_channel=label_channel, kernels=kernels, classes=classes)


class ImageNets:
    """The MNIST configuration (tables of exactly 785 columns: 784 pixels + label)."""

    z_kind = "uniform-sym"

    def __init__(self, d: int, z_dim: int = 100, label_channel: bool = False, kernels: str = "fast",
                 teacher_net: str = "small"):
        if d != 785:
            raise ValueError(f"the image configuration takes 784 pixel columns plus the label, got {d}")
        self.z_dim = z_dim
        self.generator = ImageGenerator(z_dim)
        self.teacher = image_teacher(teacher_net, label_channel=label_channel, kernels=kernels)

    def generate(self, p: Stacked, z: torch.Tensor) -> torch.Tensor:
        return self.generator(p, z)


class LabelledImageNets(ImageNets):
    """The image nets with a conditional generator (the G-PATE authors' generator is
    conditioned on the digit): the last z coordinate becomes y ~ Bernoulli(``prior``), a
    public constant, fed to the generator; its label head is dropped and y is written as
    the row's label (:mod:`raudit.generators.labelled`), so every sample has both classes."""

    def __init__(self, d: int, prior: float, z_dim: int = 100, label_channel: bool = False,
                 kernels: str = "fast", teacher_net: str = "small"):
        super().__init__(d, z_dim, label_channel, kernels, teacher_net)
        self.prior = prior

    def generate(self, p: Stacked, z: torch.Tensor) -> torch.Tensor:
        return with_label(lambda zy: self.generator(p, zy)[..., :784], z, self.prior, self.z_kind)


class ClassImageNets(ImageNets):
    """The image nets over ``classes`` > 2 labels (``mnist10``'s digit): the conditional
    generator of the G-PATE authors, G(z, one-hot y), with y uniform over the classes (a
    public constant), read off the last z coordinate (:func:`raudit.generators.labelled.with_class`);
    teachers conditioned on the one-hot label (:class:`ImageTeacher` with ``classes``)."""

    def __init__(self, d: int, classes: int, z_dim: int = 100, kernels: str = "fast",
                 label_channel: bool = False, teacher_net: str = "small"):
        super().__init__(d, z_dim, label_channel, kernels, teacher_net)
        self.classes = classes
        self.generator = ImageGenerator(z_dim - 1 + classes)  # z less its last draw, one-hot y
        # classes == 2 (``label_input="one-hot"``): the binary teacher, label_channel as asked
        self.teacher = image_teacher(teacher_net, classes=classes, label_channel=label_channel,
                                     kernels=kernels)

    def generate(self, p: Stacked, z: torch.Tensor) -> torch.Tensor:
        return with_class(lambda zy: self.generator(p, zy)[..., :784], z, self.classes, self.z_kind)

    def generate_for(self, p: Stacked, z: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """G(z, one-hot ``labels``): z (M, B, z_dim) shared by R label rows (M, R, B) of class
        indices -> (M*R, B, 785). The authors feed each teacher's generated batch its real
        batch's labels (one ``y`` placeholder for both of its discriminator calls); z's last
        draw, which :meth:`generate` reads the label from, is unused here."""
        m, r, b = labels.shape
        zz = z[..., :-1].unsqueeze(1).expand(m, r, b, z.shape[-1] - 1)
        onehot = F.one_hot(labels, self.classes).to(z.dtype)
        img = self.generator(p, torch.cat([zz, onehot], -1).reshape(m, r * b, -1))[..., :784]
        y = labels.to(z.dtype).reshape(m * r, b, 1) / (self.classes - 1)
        return torch.cat([img.reshape(m * r, b, 784), y], -1)


@dataclass(frozen=True)
class ImageTeacherChoice:
    """Which image teacher a configuration builds: ``net`` (:data:`TEACHER_NETS`), and for
    the small teacher its convolution path (``kernels``, :data:`KERNELS`) and whether the
    label enters as an extra input channel (``label_channel``)."""

    net: str = "small"
    kernels: str = "fast"
    label_channel: bool = False


def nets_for(kind: str, d: int, label_prior: float | None = None, *, z_dim: int | None = None,
             teacher_hidden: int = 0, teacher_label: str = "input", classes: int = 2,
             label_input: str = "value", image: ImageTeacherChoice = ImageTeacherChoice()):
    """The nets of a configuration; ``label_prior`` (tabular only): a conditional generator;
    ``z_dim`` (image only; default 100, the G-PATE authors' eps = 1 run used 50);
    ``teacher_hidden`` (tabular only): teachers with one hidden layer of that width;
    ``teacher_label="heads"`` (conditional tabular only): :class:`LabelHeadTeacher`;
    ``image`` (image only): which teacher (:class:`ImageTeacherChoice`);
    ``classes`` > 2 (image, conditional only): :class:`ClassImageNets`; so does
    ``label_input="one-hot"`` for a binary conditional image generator (the 0/1 label as
    two one-hot inputs instead of one 0/1 value, which drifts class 1: lab/learning.md)."""
    if kind == "tabular":
        if label_prior is None:
            return TabularNets(d, teacher_hidden)
        return LabelledTabularNets(d, label_prior, teacher_hidden, teacher_label)
    kernels, label_channel, teacher_net = image.kernels, image.label_channel, image.net
    z = {"label_channel": label_channel, "kernels": kernels, "teacher_net": teacher_net}
    if z_dim is not None:
        z["z_dim"] = z_dim
    if classes > 2 or (label_prior is not None and label_input == "one-hot"):
        return ClassImageNets(d, classes, z.get("z_dim", 100), kernels, label_channel, teacher_net)
    return ImageNets(d, **z) if label_prior is None else LabelledImageNets(d, label_prior, **z)

