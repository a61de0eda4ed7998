"""`raudit audit`: the distinguishing game with thousands of shadow models.

Its options, mapped onto :class:`raudit.runs.audit_settings.AuditSettings` (checked once,
by :func:`raudit.runs.audit_plan.prepare` and the threat model it selects, before ``--out``
is touched, as for :func:`raudit.api.audit`) and the run; what it prints is
:mod:`raudit.cli.audit_view`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from raudit.attacks import ATTACKS
from raudit.attacks import get as get_attack
from raudit.cli import options as opt
from raudit.cli.audit_view import show, summary_json
from raudit.cli.errors import results_only_stdout, user_errors
from raudit.cli.progress import phase_bars

Attack = Annotated[str, typer.Option("--attack", "-a", help="groundhog (summary statistics), querybased (counting queries on the target), domias (synthetic over reference density at the target) or ensemble (the best of these, chosen on validation).")]
Features = Annotated[Optional[str], typer.Option("--features", help="Feature set: naive, hist, corr, ensemble (groundhog); default: the attack's.")]
Target = Annotated[Optional[str], typer.Option("--target", "-t", help="auto (mini-MIAs over the most outlying records), worst-case (the planted target), or a row id of the training table. Default: worst-case where planted, else auto.")]
Shadow = Annotated[str, typer.Option("--shadow-models", "-S", help="Shadow models per world (40% train the attack, 20% choose the threshold, 40% test), or `auto`: a sequential audit of up to 2,000 (stages of --first-stage, doubling) that stops by --target-width or --until-ceiling (the default rule).")]
Width = Annotated[Optional[float], typer.Option("--target-width", help="Sequential audit: stop once the interval \\[eps_lo, eps_hi] is narrower than this. Every look is corrected (alpha spending), so stopping early never inflates the bound; -S is then the most models per world.")]
UntilCeiling = Annotated[bool, typer.Option("--until-ceiling", help="Sequential audit: go on while the bound sits at its ceiling (the number of models limits it); stop once it is below its ceiling and stopped growing.")]
FirstStage = Annotated[int, typer.Option("--first-stage", help="Sequential audit: models per world at the first look (then doubling).")]
SynthRows = Annotated[Optional[str], typer.Option("--synthetic-rows", help="Rows each shadow model samples, the SAME in both worlds (default |D_in|), or `per-world`: each model samples its own training size, as the study's harness did (the one-row size difference can give the world away; use it to reproduce the study's figures).")]
Selection = Annotated[str, typer.Option("--target-selection", help="--target auto: `pool` (one pool of --selection-models models scores every candidate at once) or `per-candidate` (the study's mini-MIA per candidate: 2 x candidates x pairs models).")]
SelModels = Annotated[int, typer.Option("--selection-models", help="--target-selection pool: models in the shared pool (even; half train the per-candidate attack, half score it).")]
Out = Annotated[Optional[Path], typer.Option("--out", parser=opt.out_folder, help="Result folder (Parquet store; rerun the same command to resume). Default runs/audit-IMPL-ATTACK-DATASET-S...-s...")]
Chunk = Annotated[str, typer.Option("--chunk-size", "-M", help="Shadow models trained together in one batched call (one chunk, one world); auto: calibrated once per generator set-up and machine, then cached; the chunk size changes no result (checked on CPU), except where the generator says a model's last bits could depend on its chunk (RAUDIT_COMPILE=fused|step): there auto is one fixed size on every machine and resume, and an explicit -M N may change the last bits (docs/performance.md).")]
Workers = Annotated[Optional[int], typer.Option("--workers", "-w", help="Actors (default: one per CPU, or per GPU share).")]
PerGpu = Annotated[int, typer.Option("--per-gpu", help="Actors sharing one GPU (each gets 1/N of it).")]
Retries = Annotated[int, typer.Option("--retries", help="Further attempts of a failed chunk before its models are recorded as failed.")]
Neighbours = Annotated[str, typer.Option("--neighbours", help="add-remove (D_out = D minus the target) or replace (the target replaced by another row).")]
Candidates = Annotated[int, typer.Option("--target-candidates", help="--target auto: outlying records to try.")]
Pairs = Annotated[int, typer.Option("--target-pairs", help="--target-selection per-candidate: in/out model pairs per candidate.")]
Json = Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]
Samples = Annotated[int, typer.Option("--samples-per-model", help="Synthetic datasets each shadow model samples (default 1, the study's game). The extra ones feed eps_bayes_multi, a Bayesian estimate that treats every (model, dataset) pair as an independent trial: an assumption, never used in the verdict.")]
SynthIn = Annotated[Optional[Path], typer.Option("--synthetic-in", help="Data-only audit: a folder of synthetic datasets (CSV/Parquet, one per shadow model, taken in name order) produced elsewhere from D_in. Needs --synthetic-out and --target; no generator is run.")]
Threat = Annotated[str, typer.Option("--threat-model", help="black-box: the attack sees the final synthetic data (shadow models); white-box: it also reads each trained model (unlimited sampling: density near the target; the student/discriminator's score at the target where kept), same shadow models; transcript: it sees every noisy vote the mechanism releases (worst-case neighbours, mechanism-only trials: -S is trials per world; paper, fixed and dpgan by a dry run of their schedule, the other vote-releasing ports and gpate from the events of one training run); active: the auditor also chooses the queries (canary queries replace the student's) and builds the worst-case neighbours (the target alone in one teacher's partition), paper and fixed. one-run and external are black-box's --one-run and data-only audits by name.")]
OneRun = Annotated[bool, typer.Option("--one-run", help="One-run audit (Steinke et al. 2023): --canaries records, each in with probability 1/2, in ONE run; an eps lower bound assuming pure DP. Black-box: the most outlying rows, scored on the run's synthetic data; transcript or active: on the mechanism's releases.")]
Canaries = Annotated[int, typer.Option("--canaries", help="--one-run: canaries in the one run (at most the training rows).")]
SequentialRule = Annotated[Optional[str], typer.Option("--sequential", help="anytime: an anytime-valid sequential audit (a test martingale, valid at every look) that stops as soon as the claim is rejected. Black-box: stages of --first-stage models per world, doubling up to -S (the first stage only trains the attack); transcript or active: up to 2 x -S trials, a look every 100.")]
SynthOut = Annotated[Optional[Path], typer.Option("--synthetic-out", help="Data-only audit: the same from D_out (the data without the target), as many files as --synthetic-in.")]


@user_errors
def audit(
    impl: opt.Impl = "paper",
    attack: Attack = "groundhog",
    features: Features = None,
    dataset: Annotated[Optional[str], typer.Option("--dataset", "-d", help="Dataset name or CSV/Parquet path (default: the attack's: " + ", ".join(f"{get_attack(a).default_dataset} for {a}" for a in ATTACKS.names()) + ").")] = None,
    target: Target = None,
    shadow_models: Shadow = "1000",
    epsilon: opt.Epsilon = 1.0,
    delta: opt.Delta = None,
    teachers: opt.Teachers = None,
    lam: opt.Lambda = None,
    max_iter: opt.MaxIter = None,
    preset: opt.Preset = "default",
    option: opt.Options = None,
    seed: opt.Seed = 0,
    synthetic_rows: SynthRows = None,
    label: opt.Label = None,
    bounds: opt.Bounds = None,
    neighbours: Neighbours = "add-remove",
    target_candidates: Candidates = 64,
    target_pairs: Pairs = 100,
    target_selection: Selection = "pool",
    selection_models: SelModels = 200,
    out: Out = None,
    chunk_size: Chunk = "auto",
    workers: Workers = None,
    backend: opt.Backend = "ray",
    device: opt.Device = "auto",
    per_gpu: PerGpu = 1,
    retries: Retries = 1,
    as_json: Json = False,
    samples_per_model: Samples = 1,
    target_width: Width = None,
    until_ceiling: UntilCeiling = False,
    first_stage: FirstStage = 50,
    synthetic_in: SynthIn = None,
    synthetic_out: SynthOut = None,
    threat_model: Threat = "black-box",
    one_run: OneRun = False,
    canaries: Canaries = 1000,
    sequential_rule: SequentialRule = None,
) -> None:
    """Audit a generator by the distinguishing game: S shadow models per world, an attack, eps lower bounds.

    D_in = the training data with the target, D_out = without it; every shadow model is one fit with its own seed and one synthetic dataset, of the same size in both worlds. Results go to --out as Parquet (shadow/, summary/); rerun the same command to resume.
    """
    from raudit.runs.audit_plan import execute, prepare
    from raudit.runs.audit_settings import AuditSettings

    plan = prepare(AuditSettings(  # every check, once, in the run layer
        impl=impl, attack=attack, features=features, dataset=dataset, target=target,
        shadow_models=shadow_models, epsilon=epsilon, delta=delta, teachers=teachers, lam=lam,
        max_iter=max_iter, preset=preset, options=option, seed=seed,
        synthetic_rows=synthetic_rows, label=label, bounds=bounds, neighbours=neighbours,
        target_candidates=target_candidates, target_pairs=target_pairs,
        target_selection=target_selection, selection_models=selection_models, out=out,
        chunk_size=chunk_size, workers=workers, backend=backend, device=device, per_gpu=per_gpu,
        retries=retries, samples_per_model=samples_per_model, target_width=target_width,
        until_ceiling=until_ceiling, first_stage=first_stage, synthetic_in=synthetic_in,
        synthetic_out=synthetic_out, threat_model=threat_model, one_run=one_run,
        canaries=canaries, sequential=sequential_rule))
    # stdout carries only the result: Ray's and the workers' messages go to stderr.
    with results_only_stdout(), phase_bars(quiet=as_json) as progress:
        result = execute(plan, progress, notice=_notice)
    if as_json:
        typer.echo(json.dumps(summary_json(result), indent=2))
    else:
        show(result)


def _notice(message: str) -> None:
    from raudit.cli.progress import notice

    notice(message)


