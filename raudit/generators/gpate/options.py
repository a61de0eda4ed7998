"""`gpate`'s options: what they may be, and the two configurations they default from.

:class:`GPateOptions` is what ``-o KEY=VALUE`` sets (None: the ``config``'s value),
:data:`CONFIGS` the proportions of each configuration (their source: the module docstring
of :mod:`.generator`), :class:`GPateHP` the hyperparameters a run resolves them to on a
table (:meth:`.generator.GPate.resolve`), and :func:`check_options` the checks a
constructor runs before anything trains: one-line errors that say which option, and for
which configuration, it is meant.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from raudit.errors import ConfigError
from raudit.generators.capabilities import OptionsObject
from raudit.generators.labelled import check_conditional
from raudit.generators.pategan.core.options import positive

#: per configuration: rows per teacher (k = N // ratio), batch, k_proj, sigma1 and sigma2 as
#: fractions of k (the reference MNIST run: 60,000 rows, 4,000 teachers, sigma1 = 3000,
#: sigma2 = 1000), iteration cap, teachers per block of the teacher step (:mod:`.chunked`:
#: the same numbers in bounded memory; None: all at once; image: 4 with the fast kernels, 16,
#: the earlier default, with ``teacher_kernels="reference"``, both chosen by measurement)
CONFIGS = {
    "tabular": dict(ratio=15, batch=30, k_proj=5, sigma1=0.75, sigma2=0.25, max_iter=10_000,
                    teacher_chunk=None, reference_chunk=None),
    "image": dict(ratio=15, batch=30, k_proj=10, sigma1=0.75, sigma2=0.25, max_iter=10_000,
                  teacher_chunk=4, reference_chunk=16),
}


#: the G-PATE authors' two MNIST commands (AI-secure/G-PATE README, ad7279a), on ``mnist10``, and
#: the paper's tabular setting:
#: 40 x 100 = 4,000 teachers (eps = 1; 40 x 50 = 2,000 at eps = 10), --sigma_thresh and --sigma,
#: --z_dim, --batch_size 64 (clamped to the rows per teacher: the recipe), --step_size 1e-4 (the
#: clip), random projection to 10 dimensions, thresh 0.5, Adam 1e-3 / 0.5, at most --epoch 1000
#: generator steps (one per epoch: a partition holds one batch). The privacy bugs stay off
#: (their switches: shared_teacher_state, shared_teacher_init, accountant=gnmax).
PRESETS: dict[str, dict] = {
    "default": {},
    "paper-eps1": {"config": "image", "conditional": True, "classes": 10, "teachers": 4000,
                   "sigma1": 3000.0, "sigma2": 1000.0, "z_dim": 50, "batch": 64, "max_iter": 1000,
                   "clip": 1e-4, "k_proj": 10, "slot_teachers": 40},
    "paper-eps10": {"config": "image", "conditional": True, "classes": 10, "teachers": 2000,
                    "sigma1": 600.0, "sigma2": 100.0, "z_dim": 100, "batch": 64, "max_iter": 1000,
                    "clip": 1e-4, "k_proj": 10, "slot_teachers": 40},
    # the paper's tabular setting (Kaggle credit, not downloadable here): it states only the
    # networks (fully connected, as PATE-GAN's: the tabular config's) and a projection to 5
    # dimensions; the authors' code is image-only, so the rest is their MNIST recipe where it
    # carries over (batch clamped to the rows per teacher, the whole partition as the real
    # batch, the bugs off) and the tabular config's proportions (k = N // 15, sigma 0.75 k /
    # 0.25 k); no batch norm, so no separate real and generated passes, and no class labels
    "paper-tabular": {"config": "tabular", "recipe": "upstream", "k_proj": 5, "clip": 1e-4,
                      "accountant": "gnmax-independent", "slot_teachers": 40},
}

#: the generator batch of ``recipe=upstream`` when ``batch`` is not given (--batch_size 64)
UPSTREAM_BATCH = 64


@dataclass(frozen=True)
class GPateHP:
    config: str
    teachers: int
    batch: int
    teacher_batch: int
    max_iter: int | None
    k_proj: int
    clip: float
    bins: int
    thresh: float
    sigma1: float
    sigma2: float
    lr: float
    beta1: float
    teacher_steps: int
    accountant: str
    projection: str
    z_dim: int | None = None
    teacher_chunk: int | None = None
    teacher_hidden: int = 0
    label_channel: bool = False
    teacher_label: str = "input"
    teacher_lr: float | None = None
    teacher_decay: float = 0.0
    teacher_kernels: str = "fast"
    classes: int = 2
    label_input: str = "value"
    teacher_net: str = "small"
    teacher_sample: str = "with-replacement"
    teacher_labels: bool = False
    slot_teachers: int = 40
    shared_teacher_state: bool = False
    shared_teacher_init: bool = False


@dataclass(frozen=True)
class GPateOptions(OptionsObject):
    """`gpate`'s options, one frozen object; None: the ``config``'s value (:data:`CONFIGS`)."""

    config: Literal["tabular", "image"] = "tabular"
    teachers: int | None = None
    batch: int | None = None
    teacher_batch: int | None = None
    max_iter: int | None = None
    k_proj: int | None = None
    clip: float = 1e-4
    bins: int = 10
    thresh: float = 0.5
    sigma1: float | None = None
    sigma2: float | None = None
    lr: float = 1e-3
    beta1: float = 0.5
    teacher_steps: int = 1
    # None: image "gnmax-independent", tabular "gnmax" (the data-dependent stop, upstream's
    # unsanitised release; kept as the tabular default so its earlier numbers stand)
    accountant: Literal["gnmax", "gnmax-independent"] | None = None
    projection: Literal["random", "none"] = "random"
    conditional: bool = False
    label_prior: float = 0.5
    z_dim: int | None = None
    teacher_chunk: int | None = None
    teacher_hidden: int = 0
    label_channel: bool = False
    teacher_label: Literal["input", "heads"] = "input"
    teacher_lr: float | None = None
    teacher_decay: float = 0.0
    teacher_kernels: Literal["fast", "reference"] = "fast"
    classes: int = 2
    label_input: Literal["value", "one-hot"] = "value"
    # image: None is "upstream" (issue 47); "small" is every image run's teacher before it
    teacher_net: Literal["upstream", "small"] | None = None
    # image: None is "upstream" (batch clamped to the rows per teacher, the whole partition as
    # the real batch, per-teacher generated labels); "raudit" the earlier recipe; tabular: None
    # is "raudit" (its earlier numbers stand), "upstream" the paper-tabular preset's
    recipe: Literal["upstream", "raudit"] | None = None
    slot_teachers: int = 40  # teachers time-sharing one in-graph slot (the authors' --teachers_batch)
    shared_teacher_state: bool = False  # upstream bug: one Adam state per slot (:mod:`.slots`)
    shared_teacher_init: bool = False  # upstream bug: a slot's teachers start equal


def check_options(o: GPateOptions, preset: str) -> None:
    """Refuse a preset or an option value gpate cannot run, or one meant for the other
    configuration (or for the conditional mode) than the one chosen."""
    if preset not in PRESETS:
        raise ConfigError(f"gpate has no preset {preset!r}; its presets: {', '.join(PRESETS)} "
                          "(choose the network family with -o config=tabular|image)")
    for name, value in (("teachers", o.teachers), ("batch", o.batch),
                        ("teacher_batch", o.teacher_batch), ("max_iter", o.max_iter),
                        ("k_proj", o.k_proj), ("z_dim", o.z_dim),
                        ("teacher_chunk", o.teacher_chunk)):
        positive(name, value, integer=True, allow_none=True)
    positive("bins", o.bins, integer=True)
    positive("teacher_steps", o.teacher_steps, integer=True)
    for name, value in (("clip", o.clip), ("thresh", o.thresh), ("lr", o.lr)):
        positive(name, value)
    positive("sigma1", o.sigma1, allow_none=True)
    positive("teacher_lr", o.teacher_lr, allow_none=True)
    if not isinstance(o.teacher_decay, (int, float)) or o.teacher_decay < 0:
        raise ConfigError(f"teacher_decay must be a non-negative number, got {o.teacher_decay!r}")
    positive("sigma2", o.sigma2, allow_none=True)
    if o.bins < 2:
        raise ConfigError(f"bins must be at least 2, got {o.bins}")
    if not 0 < o.beta1 < 1:
        raise ConfigError(f"beta1 must lie in (0, 1), got {o.beta1!r}")
    check_conditional(o.conditional, o.label_prior)
    if not isinstance(o.teacher_hidden, int) or o.teacher_hidden < 0:
        raise ConfigError(f"teacher_hidden must be a non-negative integer, got {o.teacher_hidden!r}")
    if o.teacher_hidden and o.config != "tabular":
        raise ConfigError("teacher_hidden is for config=tabular (the image teachers are "
                          "convolutional)")
    if not isinstance(o.label_channel, bool):
        raise ConfigError(f"label_channel must be true or false, got {o.label_channel!r}")
    if o.label_channel and o.config != "image":
        raise ConfigError("label_channel is for config=image (tabular: -o teacher_hidden)")
    if o.teacher_kernels not in ("fast", "reference"):
        raise ConfigError(f"teacher_kernels must be fast or reference, got {o.teacher_kernels!r}")
    if o.teacher_kernels != "fast" and o.config != "image":
        raise ConfigError("teacher_kernels is for config=image (the tabular teachers have no "
                          "convolutions)")
    if o.teacher_label not in ("input", "heads"):
        raise ConfigError(f"teacher_label must be input or heads, got {o.teacher_label!r}")
    if o.teacher_label == "heads" and (o.config != "tabular" or not o.conditional):
        raise ConfigError("teacher_label=heads needs config=tabular and conditional=true "
                          "(a head per label of the generator's public 0/1 label)")
    if isinstance(o.classes, bool) or not isinstance(o.classes, int) or o.classes < 2:
        raise ConfigError(f"classes must be an integer >= 2, got {o.classes!r}")
    if o.classes > 2 and (o.config != "image" or not o.conditional):
        raise ConfigError("classes > 2 needs config=image and conditional=true (a generator "
                          "conditioned on the digit, e.g. on mnist10)")
    if o.label_input not in ("value", "one-hot"):
        raise ConfigError(f"label_input must be value or one-hot, got {o.label_input!r}")
    if o.label_input == "one-hot" and (o.config != "image" or not o.conditional):
        raise ConfigError("label_input=one-hot needs config=image and conditional=true")
    if (o.classes > 2 or o.label_input == "one-hot") and o.label_prior != 0.5:
        raise ConfigError("label_prior is for the 0/1 label input; with classes > 2 or "
                          "label_input=one-hot the label is uniform over the classes")
    for name in ("shared_teacher_state", "shared_teacher_init"):
        if not isinstance(getattr(o, name), bool):
            raise ConfigError(f"{name} must be true or false, got {getattr(o, name)!r}")
    positive("slot_teachers", o.slot_teachers, integer=True)
    if o.accountant not in (None, "gnmax", "gnmax-independent"):
        raise ConfigError(f"accountant must be gnmax or gnmax-independent, got {o.accountant!r}")
    if o.teacher_net not in (None, "upstream", "small"):
        raise ConfigError(f"teacher_net must be upstream or small, got {o.teacher_net!r}")
    if o.recipe not in (None, "upstream", "raudit"):
        raise ConfigError(f"recipe must be upstream or raudit, got {o.recipe!r}")
    if o.config != "image" and o.teacher_net is not None:
        raise ConfigError("teacher_net is for config=image (the tabular teachers are PATE-GAN's "
                          "fully connected nets)")
    if teacher_net_of(o) == "upstream" and (o.label_channel or o.teacher_kernels != "fast"):
        raise ConfigError("label_channel and teacher_kernels are for teacher_net=small (the "
                          "upstream teacher reads the label at every layer and has one path)")
    if recipe_of(o) == "upstream" and o.teacher_batch is not None:
        raise ConfigError("teacher_batch is the generator batch under recipe=upstream (the "
                          "authors' one batch_size); set batch, or use recipe=raudit")
    if o.z_dim is not None and o.config != "image":
        raise ConfigError("z_dim is for config=image (the tabular generator's z has the "
                          "table's width)")


def teacher_net_of(o: GPateOptions) -> str:
    """The image teacher an options object resolves to (tabular: "small", unused)."""
    return o.teacher_net or ("upstream" if o.config == "image" else "small")


def recipe_of(o: GPateOptions) -> str:
    """The recipe an options object resolves to: image "upstream" unless asked otherwise."""
    return o.recipe or ("upstream" if o.config == "image" else "raudit")


def accountant_of(o: GPateOptions) -> str:
    """image: the data-independent accountant unless ``accountant=gnmax`` (the authors'
    data-dependent stop, released unsanitised: a named switch, off); tabular: "gnmax"."""
    return o.accountant or ("gnmax-independent" if o.config == "image" else "gnmax")


def with_preset(given: GPateOptions | None, preset: str) -> GPateOptions | None:
    """``given`` (or the defaults) with the preset's values where ``given`` left the default."""
    values = PRESETS.get(preset, {})
    if not values:
        return given
    base = GPateOptions()
    o = given if given is not None else base
    return replace(o, **{k: v for k, v in values.items() if getattr(o, k) == getattr(base, k)})
