"""G-PATE's paper-tabular preset (issue 47, item 1): the paper's tabular setting on a small table.

The preset is the tabular configuration (PATE-GAN's fully connected nets, projection to 5
dimensions) with the authors' recipe where it carries over from their image code: the batch
clamped to the rows per teacher, each teacher's whole partition as its real batch every step,
data-independent accounting (the bug switches off).
"""

import numpy as np
import pandas as pd
import pytest

from raudit import generators
from raudit.accountants.gnmax import (DEFAULT_ORDERS, eps_from_rdp, rdp_gnmax_independent,
                                      rdp_threshold_independent)
from raudit.events import EventLog, GradientVotes, TeacherBatch
from raudit.generators.transcript import run_eps_true, teachers_per_record


def table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n), "c": rng.integers(0, 4, n)})
    df["label"] = (df.a + rng.normal(size=n) > 0).astype(int)
    return df


def test_the_preset_is_the_tabular_nets_with_the_authors_recipe_and_the_bugs_off():
    hp = generators.get("gpate")(preset="paper-tabular").resolve(455, 31)  # breast-cancer
    assert (hp.config, hp.teachers, hp.k_proj, hp.batch, hp.teacher_batch) == ("tabular", 30, 5, 15, 15)
    assert (hp.teacher_sample, hp.accountant, hp.sigma1, hp.sigma2) == (
        "sequential", "gnmax-independent", 22.5, 7.5)
    assert not (hp.shared_teacher_state or hp.shared_teacher_init or hp.teacher_labels)
    on = generators.get("gpate")(preset="paper-tabular", accountant="gnmax").resolve(455, 31)
    assert on.accountant == "gnmax"  # -o beats the preset: the switch stays reachable
    assert generators.get("gpate")().resolve(455, 31).batch == 30  # the tabular default stands


def test_it_trains_on_a_small_table_and_its_events_and_eps_true_agree_with_its_claim():
    log = EventLog()
    gen = generators.get("gpate")(preset="paper-tabular", max_iter=3)
    gen.fit(table(), epsilon=1e4, seed=0, observer=log)  # 8 teachers of 15 rows
    s = gen.summary()
    assert s["iterations"] == 3 and s["stopped"] == "max_iter"
    votes = log.of(GradientVotes)
    assert len(votes) == 3 and all(v.charged[0] for v in votes)
    assert s["queries"] == sum(v.counts[0].size // v.counts.shape[-1] for v in votes) == 3 * 15 * 5
    assert s["answered"] == sum(int(v.answered[0].sum()) for v in votes)
    # the whole partition every step: a teacher's rows are the same 15 at each step, and
    # no row reaches two teachers (the sensitivity eps_true uses)
    rows = {}
    for b in log.of(TeacherBatch):
        r = frozenset(np.asarray(b.rows[0]).ravel().tolist())
        assert len(r) == 15 and rows.setdefault(b.teacher, r) == r
    assert len(rows) == 8 and len(frozenset().union(*rows.values())) == 120
    assert teachers_per_record(log.events) == 1
    # claimed: the data-independent curves of the charged queries, recomputed here
    o = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    v = votes[0]
    rdp = s["queries"] * rdp_threshold_independent(v.sigma1, o) + s["answered"] * \
        rdp_gnmax_independent(v.sigma2, o)
    assert (v.sigma1, v.sigma2, v.threshold) == (6.0, 2.0, 4.0)  # 0.75 k, 0.25 k, k / 2
    assert s["eps_hat"] == pytest.approx(float(eps_from_rdp(rdp, o, 1e-5)), rel=1e-12)
    assert s["eps_data_independent"] == pytest.approx(s["eps_hat"], rel=1e-12)
    # eps_true of the released votes is their data-dependent bound: never above the claim
    true = run_eps_true(log.events, delta=1e-5)
    assert true.method == "rdp-data-dependent" and 0 < true.eps <= s["eps_hat"] * (1 + 1e-12)
    assert true.releases["confident-gnmax queries"] == s["queries"]


def _run(**kw):
    log = EventLog()
    gen = generators.get("gpate")(preset="paper-tabular", max_iter=3, slot_teachers=4, **kw)
    gen.fit(table(), epsilon=1e4, seed=0, observer=log)  # 8 teachers: 2 slots of 4
    return gen.summary(), log.events


def test_with_shared_teacher_state_a_record_reaches_its_slot_and_eps_true_pays_for_it():
    # issue 47: the teachers of a slot step through one Adam state, so a record of one
    # partition moves the votes of all 4 teachers of its slot; eps_true once read 1 here
    from raudit.accountants.true_curve import eps_true
    from raudit.generators.transcript import ModelEvents, privacy_events

    s_off, off = _run()
    s_on, on = _run(shared_teacher_state=True)
    assert {b.reached for b in off if isinstance(b, TeacherBatch)} == {(t,) for t in range(8)}
    assert {b.teacher: b.reached for b in on if isinstance(b, TeacherBatch)}[5] == (1, 3, 5, 7)
    assert teachers_per_record(off) == 1
    assert teachers_per_record(on) == teachers_per_record(on, per_iteration=True) == 4
    true_off, true_on = run_eps_true(off, delta=1e-5), run_eps_true(on, delta=1e-5)
    assert (true_off.sensitivity, true_on.sensitivity) == (1, 4)
    assert true_on.eps > 5 * true_off.eps
    # the same released votes at one teacher per record cost what they cost before
    assert true_on.eps > eps_true(privacy_events(on).events, delta=1e-5).eps == pytest.approx(
        s_on["eps_hat"], rel=1e-12)
    # at these sizes the data-dependent bound never applies: the closed form at sigma / 4
    o = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    rdp = s_on["queries"] * rdp_threshold_independent(6.0 / 4, o) + s_on["answered"] * \
        rdp_gnmax_independent(2.0 / 4, o)
    assert true_on.eps == pytest.approx(float(eps_from_rdp(rdp, o, 1e-5)), rel=1e-12)
    kept = ModelEvents(0)  # what an audit's chunk keeps of a shadow model
    for e in on:
        kept(e)
    assert kept.eps_true(delta=1e-5).eps == true_on.eps
