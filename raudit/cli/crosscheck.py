"""`raudit crosscheck`: compare a port with the released code it reproduces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from raudit.cli import options as opt
from raudit.cli.errors import results_only_stdout, user_errors
from raudit.cli.progress import phase_bars
from raudit.privacy import STUDY_DELTA


@user_errors
def crosscheck(
    impl: str = typer.Option("smartnoise", "--impl", help="the port to check (smartnoise)"),
    dataset: str = typer.Option("cervical", "--dataset", "-d",
                                help="Dataset name (see `raudit datasets list`) both sides train on."),
    seeds: int = typer.Option(20, "--seeds", "-n", help="models per side"),
    seed: int = typer.Option(0, "--seed", parser=opt.parse_seed, metavar="INTEGER",
                             help="root seed, 0 to 2**63-1"),
    epsilon: float = typer.Option(1.0, "--epsilon", "-e",
                                  help="Privacy budget epsilon (> 0) of both sides."),
    delta: float = typer.Option(STUDY_DELTA, "--delta", help="delta (default: the study's)"),
    teachers: int = typer.Option(5, "--teachers", "-k",
                                 help="teachers on both sides (the released code's "
                                      "int(N/1000) is replaced, as the study did)"),
    classifiers: str = typer.Option("lr", "--classifiers",
                                    help="comma-separated classifiers of the utility check"),
    alpha: float = typer.Option(0.05, "--alpha", help="family-wise level of the statistical checks"),
    config: Optional[str] = typer.Option(None, "--config",
                                         help="exec config of the released code (default: the "
                                              "one `raudit upstream setup IMPL` wrote)"),
    upstream_dir: Optional[str] = typer.Option(None, "--upstream-dir",
                                               help="root of the upstream environments"),
    # --out has no -o: every other command's -o is --option
    out: Optional[Path] = typer.Option(None, "--out", parser=opt.out_folder,
                                       help="write crosscheck.json, crosscheck.md, models.csv"),
    as_json: bool = typer.Option(False, "--json", help="print the JSON report"),
    quiet: bool = typer.Option(False, "--quiet", "-q",
                               help="No progress lines or bars (the report is still printed)."),
) -> None:
    """Run a port and the released code on the same data and settings, and compare: stopping
    iteration, eps_hat trajectory, accountant moments on the released votes, schema and
    ranges, statistics over many seeds, utility, speed. Exit 1 when a check fails."""
    from raudit.crosscheck import report
    from raudit.crosscheck.runner import CrosscheckSpec
    from raudit.crosscheck.runner import crosscheck as run

    names = tuple(c.strip() for c in classifiers.split(",") if c.strip())
    if out is not None:
        try:  # refused before any training, as every command does
            out.mkdir(parents=True, exist_ok=True)
            (out / ".write-test").touch()
            (out / ".write-test").unlink()
        except OSError as exc:
            from raudit.errors import ConfigError
            raise ConfigError(f"--out {out} is not writable: {exc.strerror or exc}") from None
    with results_only_stdout(), phase_bars(quiet or as_json) as phase:
        spec = CrosscheckSpec(models=seeds, seed=seed, epsilon=epsilon, delta=delta,
                              teachers=teachers, classifiers=names, alpha=alpha)
        result = run(impl, dataset, spec, config=config, upstream_dir=upstream_dir, phase=phase)
    if out is not None:
        report.write(result, out)
    if as_json:
        print(json.dumps(report.as_json(result), indent=2))
    else:
        print(report.markdown(result))
    if report.failed(result):
        raise typer.Exit(1)
