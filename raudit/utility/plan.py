"""A utility run as plain data: the request, its sweep points, the fits of each point.

A *config* is one sweep point (generator, options, dataset, eps, teachers, preset,
conditional); a *trial* is one generator fit of a config, scored on all its
samples, classifiers and settings. Trial ids are content hashes of everything
that decides their rows, so a rerun of the same request skips finished fits.

Seeds come from the root seed through the UTILITY stream of :mod:`raudit.seeds`, keys
(UTILITY, purpose, ...), and do NOT depend on the sweep point: fit f uses
the same seed at every eps, so a sweep compares like with like. Nor do they depend on
the control arm: with a control (:mod:`raudit.utility.controls`: ``coin``, every released
vote replaced by a coin; ``shuffle``, the training labels permuted) each sweep point runs
twice, the real fits and the same fits (same seeds), so fit f of the control pairs with
fit f of the real run (see :mod:`raudit.utility.learning`).
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass, field
from typing import Any

from raudit import classifiers as clf
from raudit import data, generators
from raudit.audit.game import data_digest
from raudit.seeds import UTILITY, check_root, derive_seed
from raudit.errors import ConfigError, DataError, NoStep
from raudit.privacy import STUDY_DELTA, PrivacySpec
from raudit.results.ids import trial_id
from raudit.utility import controls

STUDY_EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 50.0)
STUDY_TEACHER_RATIOS = (50, 100, 500, 1000, 5000)  # k = N / ratio
STUDY_MAX_ITER = 10_000
SETTINGS = ("A", "B", "C")
# Purposes within the UTILITY seed stream (second spawn-key entry): never renumber.
FIT, SAMPLE, CLASSIFIER, SPLIT_C, REAL, SHUFFLE = 1, 2, 3, 4, 5, 6


@dataclass(frozen=True)
class UtilityRequest:
    """What the user asked for; each tuple field is a sweep axis (product of all)."""

    impl: str = "paper"
    dataset: str = "cervical"
    label: str | None = None
    bounds: str | None = None
    options: dict = field(default_factory=dict)  # generator kwargs (not the swept ones)
    epsilons: tuple[float, ...] = (1.0,)
    delta: float | None = None  # default: the generator's own rule (raudit.privacy)
    teachers: tuple[str, ...] = ()  # "" = the preset's rule, "N/100" = len(train)//100, "7"
    presets: tuple[str, ...] = ("default",)
    conditional: tuple[bool, ...] = ()  # () = the generator's default
    fits: int = 5
    samples: int = 5
    seed: int = 0
    classifiers: tuple[str, ...] = ()  # () = the study's 12 (2 on mnist)
    settings: tuple[str, ...] = SETTINGS
    real_only: bool = False
    chunk_size: int | None = None  # fits per batched call (default: all fits of a config)
    max_iter: int | None = STUDY_MAX_ITER
    control: str | None = None  # "coin" or "shuffle": every sweep point also runs that control

    def __post_init__(self) -> None:
        check_root(self.seed)


def _crc(name: str) -> int:
    return zlib.crc32(name.encode())


def seeds(root: int, fit: int, sample: int | None = None) -> dict[str, int]:
    if sample is None:
        return {"seed": derive_seed(root, UTILITY, FIT, fit)}
    return {"sample_seed": derive_seed(root, UTILITY, SAMPLE, fit, sample),
            "split_seed": derive_seed(root, UTILITY, SPLIT_C, fit, sample) % 2**32}


def shuffle_seed(root: int, fit: int) -> int:
    """The label permutation of fit ``fit``'s ``shuffle`` control: the same at every eps."""
    return derive_seed(root, UTILITY, SHUFFLE, fit)


def classifier_seed(root: int, name: str, fit: int = -1, sample: int = -1) -> int:
    if fit < 0:
        return derive_seed(root, UTILITY, REAL, _crc(name))
    return derive_seed(root, UTILITY, CLASSIFIER, fit, sample, _crc(name))


def teachers_of(text: str, n_rows: int) -> int | None:
    """"" -> None (the preset's rule); "N/100" -> max(1, n_rows // 100); "7" -> 7."""
    text = str(text).strip()
    if text == "":
        return None
    try:
        if text.upper().startswith("N/"):
            ratio = int(text[2:])
            if ratio < 1:
                raise ValueError
            return max(1, n_rows // ratio)
        k = int(text)
        if k < 1:
            raise ValueError
        return k
    except ValueError:
        raise ConfigError(f"--teachers takes N/RATIO or a positive integer, got {text!r}") from None


def _accepts(cls: type, name: str) -> bool:
    """Whether the generator declares ``name`` as an option (its keyword-only
    parameters or its options object's fields, as ``describe()`` lists them; a catch-all
    ``**options`` does not count: sweeping an option the generator ignores would only
    relabel identical runs)."""
    return name in cls.describe().option_names()


def check(req: UtilityRequest):
    """Validate the request before any work; returns the loaded dataset."""
    if req.fits < 1 or req.samples < 1:
        raise ConfigError(f"--fits and --samples must be at least 1, got {req.fits} and {req.samples}")
    if req.chunk_size is not None and req.chunk_size < 1:
        raise ConfigError(f"--chunk-size must be at least 1, got {req.chunk_size}")
    bad = [s for s in req.settings if s not in SETTINGS]
    if bad or not req.settings:
        raise ConfigError(f"--setting takes A, B, C; got {list(req.settings)}")
    for name in req.classifiers:
        clf.get(name)
    if req.control is not None:
        check_control(req)
    if not req.real_only:
        generators.get(req.impl)
        if not req.epsilons:
            raise ConfigError("give at least one --epsilon")
        for eps in req.epsilons:
            generators.base.check_privacy(float(eps), req.delta or STUDY_DELTA)
    ds = data.load(req.dataset, label=req.label, bounds=req.bounds)
    y = ds.train.iloc[:, -1]
    if set(y.unique().tolist()) - {0, 1} or y.nunique() < 2:
        raise DataError(f"dataset {ds.name!r}: the utility benchmark needs a binary 0/1 label with "
                        f"both classes in the last column, got values {sorted(y.unique().tolist())[:5]}")
    check_size(ds)
    return ds


#: rows of each class the real training set needs: Setting A fits every classifier on it
#: (a class of one row leaves LDA a zero within-class scatter: scikit-learn's IndexError),
#: and Setting C's split is stratified only from two rows of each class on
MIN_PER_CLASS = 2


def check_size(ds) -> None:
    """Refuse a table too small for the benchmark (issue 48: the 5-row worst case trained
    for a minute, then every classifier's failure was reported as a success)."""
    train = ds.train.iloc[:, -1].value_counts()
    test = ds.test.iloc[:, -1].value_counts() if ds.test is not None else train
    few = {int(c): int(n) for c, n in train.items() if n < MIN_PER_CLASS}
    if few or len(test) < 2:
        where = (f"its training split has {', '.join(f'{n} row(s) of label {c}' for c, n in few.items())}"
                 if few else "its test split has a single class")
        raise DataError(f"dataset {ds.name!r} is too small for the utility benchmark: {where} "
                        f"({len(ds.train)} training rows); each class needs at least "
                        f"{MIN_PER_CLASS} training rows and a place in the test split")


def check_control(req: UtilityRequest) -> None:
    """``coin`` needs a generator that declares it (one whose labels come from votes or an
    aggregate: replacing them by coins must remove everything it learns from); ``shuffle``
    acts on the training table, so every generator takes it."""
    if req.real_only:
        raise ConfigError("--control compares a generator with its control; it cannot go with --real-only")
    if req.control not in controls.KINDS:
        raise ConfigError(f"--control takes {' or '.join(controls.KINDS)}, got {req.control!r}")
    cls = generators.get(req.impl)
    if req.control not in controls.DATA_LEVEL and req.control not in cls.describe().controls:
        covered = sorted(n for n in generators.names()
                         if req.control in generators.get(n).describe().controls)
        raise ConfigError(f"--control {req.control}: {req.impl} does not vote or aggregate; "
                          f"generators with it: {', '.join(covered) or 'none'}; --control shuffle "
                          "works with any generator")


def classifier_names(req: UtilityRequest, dataset: str) -> tuple[str, ...]:
    if req.classifiers:
        return tuple(req.classifiers)
    return clf.MNIST_2 if dataset == "mnist" else clf.STUDY_12


def base_config(req: UtilityRequest, ds) -> dict[str, Any]:
    return {"dataset": str(req.dataset), "label": req.label,
            "bounds": None if req.bounds is None else str(req.bounds),
            "data_digest": data_digest(ds.train)}


def _cap(cls: type, opts: dict, preset: str, ds, cap: int | None) -> int | None:
    """The study's iteration cap (10,000) as a cap: a generator whose own schedule stops
    earlier keeps it (turing runs its fixed 100); one without a limit (the `paper`
    preset) or above it gets ``cap``. An explicit -o max_iter=... wins."""
    if cap is None or "max_iter" in opts or not _accepts(cls, "max_iter"):
        return None
    try:
        kw = {**opts, **({"preset": preset} if _accepts(cls, "preset") else {})}
        own = getattr(cls(**kw).resolve(len(ds.train), ds.train.shape[1]), "max_iter", None)
    except (AttributeError, NotImplementedError, TypeError, ConfigError):
        return cap
    return cap if own is None or own >= cap else None


def configs(req: UtilityRequest, ds) -> list[tuple[dict, str | None]]:
    """Every sweep point as (config, reason it cannot run or None)."""
    cls = generators.get(req.impl)
    base = base_config(req, ds)  # the table's digest hashes every cell: once, not per point
    out = []
    axes = itertools.product(req.epsilons, req.teachers or ("",), req.presets,
                             req.conditional or (None,), (None, req.control) if req.control else (None,))
    for eps, teach, preset, cond, control in axes:
        k = teachers_of(teach, len(ds.train))
        opts = dict(req.options)
        reason = None
        for key, value in (("preset", preset), ("teachers", k), ("conditional", cond),
                           ("max_iter", _cap(cls, opts, preset, ds, req.max_iter))):
            if value is None:
                continue
            if _accepts(cls, key):
                opts[key] = value
            elif key != "max_iter" and not (key == "preset" and value == "default"):
                reason = f"{req.impl} has no option {key!r} (cannot sweep it)"
        cfg = {**base, "impl": req.impl, "options": opts, "epsilon": float(eps),
               "delta": float(req.delta or STUDY_DELTA), "teachers": k, "preset": preset,
               "conditional": cond, "teachers_request": teach}
        if control is not None:  # only then: the real arm keeps the ids of runs without one
            cfg["control"] = control
        if reason is None:
            try:  # options the generator rejects are the user's error: before any work
                gen = cls(**opts)
            except TypeError as exc:
                raise ConfigError(f"{req.impl}: {exc}") from None
            # one delta rule for train, audit and utility (raudit.privacy); the study's
            # sweeps used 10^-5 for every generator: pass that --delta to reproduce them
            cfg["delta"] = float(PrivacySpec(float(eps), req.delta).resolve(gen, len(ds.train)).delta)
            reason = _no_step(gen, ds, cfg)
        out.append((cfg, reason))
    return out


_STEP_CHECKS: dict[str, str | None] = {}  # per process: a function of the key below


def _no_step(gen, ds, cfg: dict) -> str | None:
    """Why the point cannot take a single training step (it is skipped, named), or None.
    Any other refusal of the generator's checks is the user's error, before any work."""
    # a control arm gives the same answer; configs() is called several times per run
    key = repr((cfg["impl"], cfg["options"], cfg["epsilon"], cfg["delta"], cfg["data_digest"],
                cfg["label"], cfg["bounds"]))
    if key not in _STEP_CHECKS:
        try:
            gen.check(ds.train, epsilon=cfg["epsilon"], delta=cfg["delta"], columns=ds.columns)
            _STEP_CHECKS[key] = None
        except NoStep as exc:
            _STEP_CHECKS[key] = _NoStepReason(exc)
    return _STEP_CHECKS[key]


class _NoStepReason(str):
    """A skip reason that is the generator's "cannot take a single step" message."""


def check_runnable(req: UtilityRequest, ds) -> None:
    """Refuse a request none of whose points can take a step (a sweep with some that can
    runs them and reports the others as skipped, with the reason)."""
    if req.real_only:
        return
    reasons = [reason for _, reason in configs(req, ds)]
    if all(isinstance(r, _NoStepReason) for r in reasons):
        raise NoStep(str(reasons[0]))


def fit_trials(req: UtilityRequest, cfg: dict, names: tuple[str, ...]) -> list[dict]:
    settings = [s for s in req.settings if s in ("B", "C")]
    out = []
    for f in range(req.fits):
        spec = {"config": cfg, "fit_index": f, "root": int(req.seed), "samples": req.samples,
                "classifiers": list(names), "settings": settings}
        out.append({"trial_id": trial_id(spec), "fit_index": f, **seeds(req.seed, f)})
    return out


def real_trial(req: UtilityRequest, ds, names: tuple[str, ...]) -> dict:
    cfg = base_config(req, ds)
    spec = {"config": cfg, "real": True, "root": int(req.seed), "classifiers": list(names)}
    return {"trial_id": trial_id(spec), "config": cfg}
