"""An audit's request and plan: validate, plan the trials and the target selection
(the summary of the stored models: :mod:`raudit.audit.summary`).
:func:`raudit.runs.run_audit` runs them::

    game, manifest, ds = prepare(AuditRequest(impl="paper", attack="querybased",
                                              dataset="worst-case", shadow_models=200))
    specs = chunk_specs(game, audit_id, per_world, done=set(), chunk_size=100)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from raudit import data, generators
from raudit.attacks import resolve as resolve_attack
from raudit.audit import selection as sel
from raudit.audit import targets as tg
from raudit.audit import whitebox as wb
from raudit.audit.flags import SELECTION, refuse_given
from raudit.audit.game import NEIGHBOURS, Game, data_digest, default_context, split_sizes
from raudit.audit.guard import validate_generator
from raudit.errors import ConfigError
from raudit.privacy import PrivacySpec
from raudit.results import ResultStore
from raudit.seeds import check_root

DEFAULT_CHUNK = 100


@dataclass(frozen=True)
class AuditRequest:
    """What the user asked for; ``None`` fields take the documented defaults."""

    impl: str = "paper"
    attack: str = "groundhog"
    features: str | None = None  # default: the attack's
    dataset: str | None = None  # default: the attack's (raudit.attacks.Attack.default_dataset)
    label: str | None = None
    bounds: str | None = None
    target: str | None = None  # auto | worst-case | ROWID; default: planted target or auto
    options: dict = field(default_factory=dict)
    epsilon: float = 1.0
    delta: float | None = None  # default: the generator's declared rule (raudit.privacy)
    shadow_models: int = 1000  # per world
    seed: int = 0
    synthetic_rows: int | str | None = None  # default |D_in|; "per-world": the study's harness
    neighbours: str = "add-remove"
    chunk_size: int = DEFAULT_CHUNK
    target_candidates: int = 64
    target_pairs: int = 100  # per-candidate selection: in/out pairs per candidate
    target_selection: str = "pool"  # pool | per-candidate
    selection_models: int = 200  # pool selection: models shared by every candidate
    samples_per_model: int = 1  # synthetic datasets per model (extra ones: multi-sample Bayes)
    # sequential audit (raudit.audit.sequential): stages first_stage, 2x, ... up to
    # shadow_models, stopping early by either rule
    target_width: float | None = None
    until_ceiling: bool = False
    first_stage: int = 50
    # ``anytime``: the stopping rule is the test martingale of raudit.audit.anytime_game
    # (valid at every look), instead of the alpha-spending rules above
    anytime: bool = False
    # the attack also reads each trained model (raudit.audit.whitebox); the run layer's
    # threat model decides it (raudit.runs.threats: ThreatModel.reads_models)
    white_box: bool = False

    @property
    def sequential(self) -> bool:
        return self.target_width is not None or self.until_ceiling or self.anytime

    def __post_init__(self) -> None:
        """Check what needs no data, so that a config file or the Python API fails at once,
        with the same messages as the command line."""
        for name in ("shadow_models", "seed", "chunk_size", "target_candidates", "target_pairs",
                     "selection_models", "samples_per_model", "first_stage"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{name.replace('_', '-')} must be an integer, got {value!r}")
        check_root(self.seed)
        if self.chunk_size < 1:
            raise ConfigError(f"--chunk-size must be at least 1, got {self.chunk_size}")
        if self.target_width is not None and not self.target_width > 0:
            raise ConfigError(f"--target-width must be positive, got {self.target_width!r}")
        if self.anytime and (self.target_width is not None or self.until_ceiling):
            raise ConfigError("--sequential anytime is its own stopping rule: drop "
                              "--target-width / --until-ceiling")
        if self.anytime and self.white_box:  # WhiteBox.check's refusal, for campaign jobs too
            raise ConfigError("--threat-model white-box runs the shadow-model game: --sequential "
                              "anytime is not built for it (use black-box)")
        if self.sequential:
            from raudit.audit.sequential import check_anytime_stages, stages
            if self.anytime:
                check_anytime_stages(self.first_stage, self.shadow_models)
            else:
                stages(self.first_stage, self.shadow_models)  # first stage in [5, -S]
        split_sizes(self.shadow_models)
        _synthetic_rows(self.synthetic_rows)
        if self.neighbours not in NEIGHBOURS:
            raise ConfigError(f"--neighbours must be one of {', '.join(NEIGHBOURS)}; "
                              f"got {self.neighbours!r}")
        if self.target_selection not in sel.PROTOCOLS:
            raise ConfigError(f"--target-selection must be one of {', '.join(sel.PROTOCOLS)}; "
                              f"got {self.target_selection!r}")
        self._refuse_idle()
        if not isinstance(self.options, dict):
            raise ConfigError(f"options must be a mapping of option names to values, got "
                              f"{type(self.options).__name__}")
        generators.base.check_privacy(self.epsilon, self.delta)
        if not isinstance(self.white_box, bool):
            raise ConfigError(f"white_box must be true or false, got {self.white_box!r}")

    def _refuse_idle(self) -> None:
        """The flags these settings make idle (:mod:`raudit.audit.flags`); a default target
        is the dataset's to decide (:func:`prepare`)."""
        if not self.sequential:
            refuse_given(self, ("first_stage",), "an audit of a fixed -S")
        if self.target_selection == "pool":
            refuse_given(self, ("target_pairs",), "the pooled selection")
        else:
            refuse_given(self, ("selection_models",), "--target-selection per-candidate")
        if self.target is not None and str(self.target) != "auto":
            refuse_given(self, SELECTION, f"--target {self.target}")

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> "AuditRequest":
        """A request from a config mapping; unknown keys are an error naming the known ones."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(config) - known)
        if unknown:
            raise ConfigError(f"unknown audit setting(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(known))}")
        return cls(**config)


def prepare(req: AuditRequest) -> tuple[Game, dict, Any]:
    """Validate the request; return the game (target unresolved if auto), the store's
    manifest spec, and the loaded dataset."""
    attack, features = resolve_attack(req.attack, req.features)
    threat = wb.threat_model(req.impl) if req.white_box else None
    cls = generators.get(req.impl)
    protocol, fixed_rows = _synthetic_rows(req.synthetic_rows)
    dataset = req.dataset or attack.default_dataset
    ds = data.load(dataset, label=req.label, bounds=req.bounds)
    data.require_binary(ds, "an audit")
    target = tg.resolve(req.target, ds.train, ds.notes, dataset)
    if target != "auto":  # the planted target by default: nothing to select
        refuse_given(req, SELECTION, f"an audit of the planted target of {dataset}")
    else:
        if req.target_selection == "pool":
            sel.check_pool(req.selection_models, req.target_candidates)
        else:
            tg.check_settings(req.target_candidates, req.target_pairs)
    # One delta for training and for the bounds, resolved here once, as `raudit train`
    # resolves it (on D = D_in); the game carries it to every chunk and to the analysis.
    gen = cls(**dict(req.options))  # the constructor checks the options
    privacy = PrivacySpec(req.epsilon, req.delta).resolve(gen, len(ds.train))
    validate_generator(gen, ds.train, target, req.neighbours, privacy, ds.columns)
    game = Game(impl=req.impl, options=dict(req.options), dataset=dataset, target=target,
                epsilon=privacy.epsilon, delta=privacy.delta, attack=attack.name, features=features,
                shadow_models=int(req.shadow_models), seed=int(req.seed),
                synthetic_rows=int(fixed_rows or len(ds.train)), synthetic_protocol=protocol,
                data_digest=data_digest(ds.train), label=req.label,
                bounds=None if req.bounds is None else str(req.bounds), neighbours=req.neighbours,
                context=default_context(req.seed), samples_per_model=req.samples_per_model,
                white_box=None if threat is None else wb.settings(fixed_rows or len(ds.train)))
    manifest = {**game.spec(), "target": "auto" if target == "auto" else target,
                "target_request": req.target or "default"}
    if threat is not None:  # absent for black-box: its manifests and ids stay as they were
        manifest["threat_model"] = threat.spec()
    if req.sequential:  # the same trials as the fixed audit; stopping makes it another run
        manifest["sequential"] = {"first_stage": req.first_stage, "target_width": req.target_width,
                                  "until_ceiling": req.until_ceiling}
        if req.anytime:  # only then: the ids of the alpha-spending audits stay as they were
            manifest["sequential"]["rule"] = "anytime"
    if target == "auto":
        manifest.update(target_candidates=req.target_candidates, target_pairs=req.target_pairs)
        if req.target_selection != "per-candidate":  # absent for the protocol older stores used
            manifest.update(target_selection=req.target_selection,
                            selection_models=req.selection_models)
    return game, manifest, ds


def _synthetic_rows(value: int | str | None) -> tuple[str, int | None]:
    """(protocol, fixed row count or None) from --synthetic-rows."""
    if value is None:
        return "same", None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("per-world", "same"):
            return text, None
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"--synthetic-rows takes a positive number or per-world, got "
                              f"{value!r}") from None
    if isinstance(value, bool) or int(value) < 1:
        raise ConfigError(f"--synthetic-rows must be at least 1, got {value!r}")
    return "same", int(value)


def chunk_specs(game: Game, audit_id: str, per_world: dict[str, list[dict]], done: set[str],
                chunk_size: int, events_of: str | None = None) -> list[dict]:
    """Pending trials as chunks of at most ``chunk_size``, one world each, worlds alternating.
    ``events_of``: the trial whose chunk keeps its privacy events (:func:`event_trial`)."""
    chunks: dict[str, list[dict]] = {}
    for world, ts in per_world.items():
        pending = [t for t in ts if t["trial_id"] not in done]
        chunks[world] = [{"audit_id": audit_id, "game": game.spec(), "world": world,
                          "trials": pending[i:i + chunk_size]}
                         for i in range(0, len(pending), chunk_size)]
        for c in chunks[world]:
            if events_of is not None and any(t["trial_id"] == events_of for t in c["trials"]):
                c["events_of"] = events_of
    out, worlds = [], list(chunks)
    for i in range(max((len(c) for c in chunks.values()), default=0)):
        out += [chunks[w][i] for w in worlds if i < len(chunks[w])]
    # the short chunks (each world's remainder) last: the pool's last chunks then end
    # closer together (longest first); a world's own chunks keep their order
    out.sort(key=lambda c: -len(c["trials"]))
    return out


def selection_plan(game: Game, req: AuditRequest, ds, store: ResultStore) -> dict[str, Any]:
    """The pending chunks of a target selection (resuming from ``store``) and what
    :func:`choose_selected` needs afterwards: keys specs, fn, failed, ids, candidates,
    description."""
    cands = tg.candidates_of(ds.train, req.target_candidates)
    pooled = req.target_selection == "pool"
    meta = {**game.spec(), "target": "auto", "candidates": [str(c) for c in cands],
            "pairs": req.target_pairs}
    if pooled:
        meta.update(selection="pool", models=req.selection_models)
    store.ensure_manifest(meta)
    done = store.done_ids()
    if pooled:
        pool = sel.pool_trials(game, cands, req.selection_models)
        specs = sel.pool_chunks(game, "target-selection", cands, pool, done, req.chunk_size)
        ids = {c: {sel.candidate_trial_id(t["trial_id"], c) for t in pool} for c in cands}
        return {"specs": specs, "fn": sel.run_pool_chunk, "failed": sel.failed_pool_rows,
                "ids": ids, "candidates": cands, "pooled": True,
                "description": f"target selection ({len(cands)} candidates, one pool of "
                               f"{req.selection_models} models)"}
    games = [tg.candidate_game(game, c) for c in cands]
    per_game = [tg.selection_trials(gm, req.target_pairs) for gm in games]
    specs = [s for gm, pw in zip(games, per_game)
             for s in chunk_specs(gm, "target-selection", pw, done, req.chunk_size)]
    ids = {gm.target: {t["trial_id"] for ts in pw.values() for t in ts}
           for gm, pw in zip(games, per_game)}
    return {"specs": specs, "fn": None, "failed": None, "ids": ids, "candidates": cands,
            "pooled": False, "description": f"target selection ({len(cands)} candidates)"}


def choose_selected(store: ResultStore, plan: dict, seed: int) -> tuple[Any, list[tuple[Any, float]]]:
    """The chosen row and every (row, AUC) once the selection's chunks are stored."""
    shadow = store.read("shadow")
    aucs = [(c, tg.candidate_auc(shadow, plan["ids"][c], seed)) for c in plan["candidates"]]
    row, _ = tg.choose(aucs)
    return row, aucs


