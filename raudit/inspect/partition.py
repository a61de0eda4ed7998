"""Teachers and their data: is there a PATE ensemble, are its partitions disjoint, are
its members trained teachers, and did the model the generator learns from read real rows.

All four read the TeacherBatch / Votes / TeacherLoss events (the study's figures 2-3).
Disjoint rows are not enough when teachers share state (G-PATE's upstream slots: one
Adam state for the teachers of a slot, issue 47), so where a generator reports each
teacher's input to its first aggregation (TeacherContributions) the partition cell also
measures independence: the runner retrains with one teacher's rows changed
(:func:`permuted_partition`) and every other teacher's input must stay bit-identical.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from raudit.inspect.cells import Cell, cell
from raudit.inspect.context import Context

__all__ = ["check_partition", "check_pate", "check_student", "check_teachers", "overlaps",
           "permuted_partition"]

NO_EVENTS = "the generator emitted no training events (no observer support): only black-box checks ran"
#: a teacher whose loss on its own rows is this far below chance (ln 2) after its first
#: iteration was fit to convergence inside one iteration: a refit classifier
REFIT_FRACTION = 0.1


def overlaps(seen: dict[int, np.ndarray]) -> dict[tuple[int, int], int]:
    """Rows shared by each pair of teachers (ids >= 0)."""
    ids = sorted(t for t in seen if t >= 0)
    return {(a, b): int(np.intersect1d(seen[a], seen[b], assume_unique=True).size)
            for a, b in itertools.combinations(ids, 2)}


def _dp_sgd_text(tr) -> str:
    total = sum(v[1] for v in tr.dp_sgd)
    _, _, z, clip, q = tr.dp_sgd[0]
    return (f"{total} steps, per-sample gradients clipped to {clip:g}, noise multiplier "
            f"{z:.4g}, Poisson rate {q:.4g}")


def check_pate(ctx: Context) -> Cell:
    """Violated when real rows trained a discriminator and no teacher vote was ever aggregated."""
    tr = ctx.trace
    if tr is None:
        return Cell("pate", "not_checked", NO_EVENTS)
    steps = sum(tr.teacher_steps.values())  # teachers and a critic reading real rows
    if tr.dp_sgd and not tr.votes:
        return Cell("pate", "not_applicable", f"not a PATE generator: real rows reach the "
                    f"critic through DP-SGD ({_dp_sgd_text(tr)})")
    if tr.votes:
        q = sum(v[1].size for v in tr.votes)
        return cell("pate", False, f"{len(tr.votes)} noisy aggregations of the votes of "
                    f"{tr.votes[0][7]} teachers ({q} queries) labelled the student's data")
    if tr.gradient_votes:
        q = sum(v[1] for v in tr.gradient_votes)
        return cell("pate", False, f"{len(tr.gradient_votes)} noisy aggregations of "
                    f"{tr.gradient_votes[0][7]} teachers' gradients ({q} coordinate queries, "
                    "Confident-GNMax) trained the generator")
    if steps:
        rows = np.unique(np.concatenate(list(tr.teachers_seen.values())))
        extra = f"; noisy real/fake labels instead ({len(tr.label_noise)} LabelNoise events)" \
            if tr.label_noise else ""
        return cell("pate", True, f"no teacher votes were aggregated (0 Votes events): "
                    f"{steps} discriminator steps read {rows.size} real rows directly and the "
                    f"generator learns from that discriminator{extra}")
    return Cell("pate", "not_checked", "no teacher or discriminator steps were recorded")


def check_partition(ctx: Context) -> Cell:
    """Violated when two teachers share a row or one reads more than its share ceil(N/k)."""
    tr = ctx.trace
    if tr is None:
        return Cell("data_partition", "not_checked", NO_EVENTS)
    ids = tr.teacher_ids
    if not ids:
        return Cell("data_partition", "not_checked", "no TeacherBatch events with a teacher id")
    k = ctx.k or len(ids)
    share = math.ceil(ctx.n_rows / k)
    sizes = [int(tr.teachers_seen[t].size) for t in ids]
    pairs = overlaps(tr.teachers_seen)
    worst = max(pairs.values(), default=0)
    shared_pairs = sum(1 for v in pairs.values() if v)
    covered = np.unique(np.concatenate([tr.teachers_seen[t] for t in ids])).size
    over = [t for t, s in zip(ids, sizes) if s > share]
    # Disjoint teachers of unequal sizes (an iid assignment of records) are a partition;
    # reading more than N/k only shows a missing partition when teachers are missing too
    # (one discriminator on every row in place of k teachers).
    violated = worst > 0 or (bool(over) and len(ids) < k)
    ev = (f"{len(ids)} teachers saw {sizes} distinct rows (share ceil(N/k) = {share}, N = "
          f"{ctx.n_rows}); {shared_pairs} of {len(pairs)} pairs share rows (largest overlap "
          f"{worst} rows); together they cover {covered}/{ctx.n_rows} rows "
          f"({100 * covered / max(ctx.n_rows, 1):.0f}%)")
    if over:
        ev += (f"; teachers {over} read more than their share"
               + ("" if violated else " (disjoint: an unequal but valid partition)"))
    shared, independence = _independence(ctx)
    return cell("data_partition", violated or shared, ev + independence, "records-seen")


def permuted_partition(table: pd.DataFrame, rows: np.ndarray,
                       rng: np.random.Generator) -> pd.DataFrame:
    """``table`` with each column's values permuted among ``rows`` (its own permutation per
    column): those records change, while every column keeps its values (its marginal), so
    anything fitted on the columns (bounds, encoders, categories) is fitted the same."""
    out = table.copy()
    rows = np.asarray(rows, dtype=np.int64)
    for j in range(out.shape[1]):
        col = out.iloc[:, j].to_numpy(copy=True)
        col[rows] = col[rng.permutation(rows)]
        out.iloc[:, j] = col
    return out


def _independence(ctx: Context) -> tuple[bool, str]:
    """(another teacher's first input changed, the evidence) from the partition probe;
    (False, "") where the generator reports no teacher inputs."""
    tr, probe = ctx.trace, ctx.partition_probe
    if probe is None or tr is None or tr.contributions is None:
        return False, ""
    if probe.skipped:
        return False, f"; independence of the votes not measured ({probe.skipped})"
    base, other = tr.contributions, probe.info["contributions"]
    j, n = probe.info["teacher"], probe.info["rows"]
    changed = [t for t in range(base.shape[0]) if not np.array_equal(base[t], other[t])]
    others = [t for t in changed if t != j]
    own = int(np.sum(base[j] != other[j]))
    text = (f"; retrained with teacher {j}'s {n} rows permuted column-wise (same seed, the "
            f"columns' values unchanged): its own first-step input changed in {own} of "
            f"{base[j].size} values, the inputs of {len(others)} of {base.shape[0] - 1} other "
            "teachers changed")
    if others:
        scale = float(np.abs(base).max()) or 1.0
        worst = max(float(np.abs(base[t] - other[t]).max()) for t in others)
        text += (f" (teachers {others[:8]}{' ...' if len(others) > 8 else ''}, largest "
                 f"change {worst / scale:.2g} of the largest input): their votes depend on "
                 "another teacher's partition, so one record moves more than one vote")
    elif not own:
        text += ": the change did not reach the teacher itself, so this shows nothing"
    else:
        text += ": each teacher's votes depend on its own partition only"
    return bool(others), text


def check_teachers(ctx: Context) -> Cell:
    """Violated when teachers are fit to convergence within their first iteration (refit
    classifiers rather than the incrementally trained networks of PATE-GAN)."""
    tr = ctx.trace
    if tr is None:
        return Cell("teachers", "not_checked", NO_EVENTS)
    if not tr.votes and not tr.gradient_votes:
        return Cell("teachers", "not_applicable", "no teacher ensemble (no votes aggregated)")
    if not tr.losses:
        return Cell("teachers", "not_checked", "no TeacherLoss events: teacher losses unknown")
    first = min(tr.losses)
    own = np.diag(tr.losses[first])
    last = np.diag(tr.losses[max(tr.losses)])
    chance = math.log(2.0)
    med = float(np.median(own))
    refit = med < REFIT_FRACTION * chance
    ev = (f"median BCE of a teacher on its own first rows after iteration {first}: {med:.4f} "
          f"(chance ln 2 = {chance:.3f}, {chance / max(med, 1e-12):.1f}x lower); after the last "
          f"iteration {float(np.median(last)):.4f}")
    ev += ("; teachers converge inside one iteration: refit classifiers, not trained teachers"
           if refit else "; teachers start near chance and learn across iterations")
    return cell("teachers", refit, ev, "teacher-losses")


def check_student(ctx: Context) -> Cell:
    """Violated when the model the generator learns from read real rows (a critic's real
    batches, id -1, or a discriminator trained on real rows without any vote)."""
    tr = ctx.trace
    if tr is None:
        return Cell("student_real_records", "not_checked", NO_EVENTS)
    critic = tr.teachers_seen.get(-1)
    if critic is not None and critic.size and tr.dp_sgd:
        return cell("student_real_records", False, f"the critic read {critic.size} distinct real "
                    f"rows only through DP-SGD ({_dp_sgd_text(tr)})")
    if critic is not None and critic.size:
        return cell("student_real_records", True,
                    f"the critic/student read {critic.size} distinct real rows in "
                    f"{tr.teacher_steps.get(-1, 0)} batches")
    if not tr.votes and not tr.gradient_votes and tr.teacher_ids:
        rows = np.unique(np.concatenate([tr.teachers_seen[t] for t in tr.teacher_ids]))
        return cell("student_real_records", True, f"the generator's only discriminator read "
                    f"{rows.size} real rows (no PATE student)")
    if tr.gradient_votes or not tr.votes:
        return cell("student_real_records", False, "the generator only learned from the "
                    "teachers' noisy aggregate (no real-row batches recorded for it)")
    return cell("student_real_records", False, "the student only saw generated samples "
                "labelled by the teachers' votes (no real-row batches recorded for it)")
