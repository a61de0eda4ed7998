"""Arguments that did nothing, or could not be used, are refused (issue 48): one line, exit
2, nothing written, the same message from the command and from raudit.api.

Before, each of these ran as if the argument were absent (an audit of a planted target
with --target-candidates 8, a transcript audit with --first-stage 10, identity with
--teachers 0 or -o nosuch=1) or ran with an impossible value (utility at --max-iter 0,
"-1 iterations per model")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import raudit
import raudit.api as ra
from raudit import generators
from raudit.errors import ConfigError
from raudit.generators.kwargs import generator_kwargs

from error_lines import api_error, cli_error


def _flags(kwargs: dict) -> list[str]:
    out = []
    for key, value in kwargs.items():
        flag = {"lam": "--lambda", "options": "-o"}.get(key, "--" + key.replace("_", "-"))
        values = value if isinstance(value, list) else [value]
        out += [flag] if value is True else [a for v in values for a in (flag, str(v))]
    return out


def _folders(tmp_path: Path) -> dict[str, str]:
    for world in ("in", "out"):
        (tmp_path / world).mkdir()
        (tmp_path / world / "0.csv").write_text("a\n1\n")
    return {"synthetic_in": str(tmp_path / "in"), "synthetic_out": str(tmp_path / "out")}


# (the audit's arguments, the flag refused, the words of "not to ...")
IDLE = [
    (dict(first_stage=10), "--first-stage 10", "an audit of a fixed -S"),
    (dict(attack="querybased", dataset="worst-case", target_candidates=8),
     "--target-candidates 8", "an audit of the planted target of worst-case"),
    (dict(target="3", selection_models=20), "--selection-models 20", "--target 3"),
    (dict(target="worst-case", target_selection="per-candidate"),
     "--target-selection per-candidate", "--target worst-case"),
    (dict(target_pairs=8), "--target-pairs 8", "the pooled selection"),
    (dict(target_selection="per-candidate", selection_models=20), "--selection-models 20",
     "--target-selection per-candidate"),
    (dict(impl="paper", threat_model="transcript", target_candidates=8),
     "--target-candidates 8", "a transcript audit"),
    (dict(impl="paper", threat_model="transcript", sequential="anytime", first_stage=10),
     "--first-stage 10", "a transcript audit"),
    (dict(impl="paper", threat_model="active", target="3"), "--target 3", "an active audit"),
    (dict(one_run=True, features="naive"), "--features naive", "a one-run audit"),
    (dict(one_run=True, synthetic_rows=10), "--synthetic-rows 10", "a one-run audit"),
    (dict(external=True, samples_per_model=2), "--samples-per-model 2", "a data-only audit"),
]


def _refused(tmp_path, kwargs: dict) -> str:
    """The audit's refusal of ``kwargs`` (``external``: with two folders of synthetic
    files), the same line from the command and the API, and nothing written by either."""
    kwargs = dict(kwargs)
    if kwargs.pop("external", False):
        kwargs.update(_folders(tmp_path))
    cli = cli_error("audit", "--backend", "local", *_flags(kwargs), "--out",
                    str(tmp_path / "cli"))
    api = api_error(ra.audit, backend="local", out=tmp_path / "api", quiet=True, **kwargs)
    assert api == cli
    assert not (tmp_path / "cli").exists() and not (tmp_path / "api").exists()
    return cli


@pytest.mark.parametrize("kwargs, flag, here", IDLE)
def test_an_audit_flag_given_where_it_does_nothing_is_refused(tmp_path, kwargs, flag, here):
    # small: on the code before, each of these ran (and so failed this test) in seconds
    cli = _refused(tmp_path, {"impl": "identity", "shadow_models": 10, **kwargs})
    assert cli.startswith(f"{flag} applies to ") and f"not to {here}" in cli, cli
    assert cli.endswith(": drop it")


ONE_RUN = "a one-run audit (its canaries are the most outlying rows)"
DATA_ONLY = "a data-only audit (the files are the shadow models)"
TRANSCRIPT = "a transcript audit (the mechanism's worst case, no synthetic data)"
# (the audit's arguments, the flag refused, what it applies to, the words of "not to ...");
# each ran on 1b63218 as if the flag were absent (a one-run or data-only audit has no -S,
# only a shadow-model audit runs chunks on the engine, a transcript's trials have their own
# neighbours and no attack, a data-only audit runs no generator)
IDLE_REST = [
    (dict(impl="identity", one_run=True, canaries=20, shadow_models=50), "--shadow-models 50",
     "an audit of shadow models or mechanism-only trials", ONE_RUN),
    (dict(impl="paper", threat_model="transcript", one_run=True, canaries=20,
          shadow_models=50), "--shadow-models 50", "or mechanism-only trials",
     "a one-run transcript audit (one run with --canaries canaries)"),
    (dict(impl="paper", threat_model="active", one_run=True, canaries=20,
          shadow_models=10000), "--shadow-models 10000", "or mechanism-only trials",
     "a one-run active audit"),
    (dict(external=True, shadow_models=50), "--shadow-models 50", "or mechanism-only trials",
     DATA_ONLY),
    (dict(impl="paper", threat_model="transcript", chunk_size=10), "--chunk-size 10",
     "whose chunks run on the engine", TRANSCRIPT),
    (dict(impl="paper", threat_model="active", workers=2), "--workers 2",
     "whose chunks run on the engine", "an active audit"),
    (dict(impl="identity", one_run=True, canaries=20, per_gpu=2), "--per-gpu 2",
     "whose chunks run on the engine", ONE_RUN),
    (dict(external=True, retries=3), "--retries 3", "whose chunks run on the engine",
     DATA_ONLY),
    # these run in the driver's process, on its CPU: --device cuda placed nothing on a GPU
    (dict(impl="identity", one_run=True, canaries=20, device="cuda"), "--device cuda",
     "whose chunks run on the engine", ONE_RUN),
    (dict(impl="paper", threat_model="transcript", device="cuda"), "--device cuda",
     "whose chunks run on the engine", TRANSCRIPT),
    (dict(external=True, device="cpu"), "--device cpu", "whose chunks run on the engine",
     DATA_ONLY),
    (dict(impl="paper", threat_model="transcript", neighbours="replace"),
     "--neighbours replace", "the others make their own neighbours", TRANSCRIPT),
    (dict(impl="paper", threat_model="active", neighbours="replace"), "--neighbours replace",
     "the others make their own neighbours", "an active audit"),
    (dict(impl="identity", one_run=True, canaries=20, neighbours="replace"),
     "--neighbours replace", "the others make their own neighbours", ONE_RUN),
    (dict(external=True, impl="smartnoise"), "--impl smartnoise",
     "an audit that runs the generator", DATA_ONLY),
    (dict(external=True, options=["max_iter=5"]), "-o max_iter=5",
     "an audit that runs the generator", DATA_ONLY),
    (dict(external=True, teachers=5), "--teachers 5", "an audit that runs the generator",
     DATA_ONLY),
    (dict(external=True, lam=0.5), "--lambda 0.5", "an audit that runs the generator",
     DATA_ONLY),
    (dict(impl="paper", threat_model="transcript", attack="querybased"), "--attack querybased",
     "an attack on synthetic data", TRANSCRIPT),
    (dict(impl="identity", one_run=True, canaries=20, attack="domias"), "--attack domias",
     "an attack on synthetic data", ONE_RUN),
]


@pytest.mark.parametrize("kwargs, flag, applies, here", IDLE_REST)
def test_the_rest_of_the_idle_audit_flags_are_refused(tmp_path, kwargs, flag, applies, here):
    cli = _refused(tmp_path, kwargs)
    assert cli.startswith(f"{flag} applies to ") and applies in cli, cli
    assert f"not to {here}" in cli and cli.endswith(": drop it"), cli


@pytest.mark.parametrize("kwargs", [
    dict(impl="identity", one_run=True, canaries=20, shadow_models="1000", chunk_size="AUTO"),
    dict(impl="paper", threat_model="transcript", one_run=True, canaries=20,
         options=[], workers=None),
])
def test_a_flag_given_its_default_is_no_flag(tmp_path, kwargs):
    """-S 1000 is the default the command passes as text; -M AUTO is auto; no -o is none."""
    from raudit.runs.audit_plan import prepare
    from raudit.runs.audit_settings import AuditSettings

    prepare(AuditSettings(backend="local", out=tmp_path / "x", **kwargs))
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("args, message", [
    (["--preset", "nope"], "identity has no preset 'nope'; its presets: default"),
    (["--max-iter", "-1"], "--max-iter must be at least 1, got -1"),
    (["--teachers", "0"], "--teachers must be at least 1, got 0"),
    (["--teachers", "5"], "identity has no option --teachers; its options: preset"),
    (["-o", "nosuch=1"], "identity has no option 'nosuch'; its options: preset"),
    (["-o", "teachers=0"], "identity has no option 'teachers'; its options: preset"),
])
@pytest.mark.parametrize("command", ["train", "audit"])
def test_identity_refuses_what_it_cannot_use(tmp_path, command, args, message):
    small = ["--backend", "local", "-S", "10"] if command == "audit" else []
    cli = cli_error(command, "--impl", "identity", *args, *small, "--out",
                     str(tmp_path / "cli"))
    assert cli == message
    kwargs = {"preset": args[1]} if args[0] == "--preset" else \
        {"options": [args[1]]} if args[0] == "-o" else \
        {args[0][2:].replace("-", "_"): int(args[1])}
    if command == "audit":
        kwargs.update(backend="local", shadow_models=10)
    fn = ra.train if command == "train" else ra.audit
    assert api_error(fn, impl="identity", out=tmp_path / "api", quiet=True, **kwargs) == message
    assert not (tmp_path / "cli").exists() and not (tmp_path / "api").exists()


@pytest.mark.parametrize("name", generators.names())
def test_every_generator_refuses_impossible_shared_values_in_one_place(name):
    for kwargs, message in [(dict(teachers=0), "--teachers must be at least 1, got 0"),
                            (dict(max_iter=-1), "--max-iter must be at least 1, got -1"),
                            (dict(lam=0.0), "--lambda must be positive, got 0.0"),
                            (dict(preset="nope"), f"{name} has no preset 'nope'"),
                            (dict(options=["max_iter=0"]), "has no option 'max_iter'|"
                                                           "-o max_iter must be at least 1")]:
        given = dict(preset=None, teachers=None, lam=None, max_iter=None, device=None,
                     options=None)
        with pytest.raises(ConfigError, match=message):
            generator_kwargs(name, **{**given, **kwargs})


@pytest.mark.parametrize("impl, max_iter, message", [
    ("independent", 0, "--max-iter must be at least 1, got 0"),
    ("paper", -3, "--max-iter must be at least 1, got -3"),
    ("independent", 50, "independent has no option --max-iter; its options: preset"),
])
def test_utility_refuses_a_max_iter_it_cannot_use(tmp_path, impl, max_iter, message):
    small = dict(dataset="breast-cancer", fits=1, samples=1, classifier="lr")
    cli = cli_error("utility", "--impl", impl, "--max-iter", str(max_iter), "--backend",
                     "local", *_flags(small), "--out", str(tmp_path / "cli"))
    api = api_error(ra.utility, impl=impl, max_iter=max_iter, backend="local",
                     out=tmp_path / "api", quiet=True, **small)
    assert cli == api == message
    assert not (tmp_path / "cli").exists() and not (tmp_path / "api").exists()


def test_no_message_writes_a_quoted_name_with_an_apostrophe_s():
    """f"{name!r}'s" printed "backend 'ray''s worker processes"."""
    root = Path(raudit.__file__).parent
    bad = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py"))
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if re.search(r"!r\}'s\b", line)]
    assert bad == []
