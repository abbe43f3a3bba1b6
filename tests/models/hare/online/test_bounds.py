"""The mixed flow-time bound of online hare (each job's own floor and the mean busy times of
the pooled machine at once, :func:`mixed_bound`): a case worked by hand where it is above
both pieces and below the certified optimum, SRPT's optimum on one machine above it, the
certified optimum above it on small instances, and every online policy above it on random
instances with long and short jobs."""

from __future__ import annotations

import pytest
from gavel_sample import check_below_optimum
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.online.bounds import flow_bound
from dlsched.models.hare.online.methods import LIST_METHODS
from dlsched.online.bounds import mixed_bound, srpt_total, wspt_bound
from dlsched.solvers import SolveOptions, Status

#: Online policies of the family: the paper's, two of its baselines and the list rules.
POLICIES = ("hlas", "hlas-p", "online-fifo", "2d-las", *LIST_METHODS)


def _one_task(name: str, arrival: float, train: float, gpus: int = 2) -> HareJob:
    return HareJob(name, arrival, 1.0, 1, 1, (train,) * gpus, (0.0,) * gpus)


#: Two equal GPUs; a: 10 alone at 0; b1-b3: 2 each, arriving together at 100.
APART = HareInstance(
    "apart",
    ("g0", "g1"),
    (_one_task("a", 0.0, 10.0), *(_one_task(f"b{k}", 100.0, 2.0) for k in (1, 2, 3))),
)


def test_a_long_job_apart_counts_its_floor_and_the_crowd_its_mean_busy_times():
    """Pooled machine of speed 2: a has size 5 and span 10, the b's size 1 and span 2. Per job
    (floors 10, 102, 102, 102): flow 10 + 6 = 16. Mean busy times (WSPT): a runs 0-5, M = 2.5,
    C >= 2.5 + 5; b's run 100-101, 101-102, 102-103, C >= M + 1 = 101.5, 102.5, 103.5: flow
    7.5 + 7.5 = 15. Mixed with lambda = (0, 1, 1, 1): a's floor 10, the b's 7.5 (a is gone
    by 100 either way): 17.5. The optimum: a alone, two b's at once, the third after: 18."""
    b = flow_bound(APART)
    assert b.alone == 16.0 and b.pooled == pytest.approx(15.0)
    assert b.flow == b.mixed and 17.5 - 1e-9 <= b.flow <= 18.0
    exact = run_method(APART, "exact", MethodOptions(solve=SolveOptions(time_limit=30)))
    assert exact.status == Status.OPTIMAL
    assert exact.objective - sum(j.arrival for j in APART.jobs) == pytest.approx(18.0)
    assert all(run_method(APART, m).details["flow_time_s"] >= b.flow for m in POLICIES)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 12), st.integers(1, 6), st.integers(1, 4)), min_size=1, max_size=6
    )
)
def test_on_one_machine_it_is_below_srpt_and_above_goemans(jobs):
    """Floors r + p are valid on one machine; with unit weights SRPT is the optimum of
    1|r_j, pmtn|sum C_j; lambda = 1 (the first step) is Goemans' bound."""
    rel = [float(r) for r, _, _ in jobs]
    size = [float(p) for _, p, _ in jobs]
    w = [float(x) for _, _, x in jobs]
    floors = [r + p for r, p in zip(rel, size, strict=True)]
    unit = [1.0] * len(jobs)
    mixed = mixed_bound(rel, size, unit, None, floors)
    assert wspt_bound(rel, size, unit) - 1e-9 <= mixed <= srpt_total(rel, size) + 1e-9
    fifo, now = 0.0, 0.0  # weighted: below a schedule's, first come first served
    for j in sorted(range(len(jobs)), key=rel.__getitem__):
        now = max(now, rel[j]) + size[j]
        fifo += w[j] * now
    assert mixed_bound(rel, size, w, None, floors) <= fifo + 1e-9


def _generated() -> list[HareInstance]:
    from dlsched.api import generate

    return [APART] + [generate("hare", 3, 2, seed, arrival_span=12.0) for seed in range(3)]


@pytest.mark.parametrize("inst", _generated(), ids=lambda i: i.name)
def test_the_bound_with_mixing_is_below_the_certified_optimum(inst):
    check_below_optimum(inst, flow_bound, 30)


#: Training times on three GPU types of a short, a long and a K80-friendly profile.
PROFILES = ((1.0, 2.0, 3.0), (8.0, 8.0, 24.0), (2.0, 1.0, 1.0))


@st.composite
def long_and_short(draw: st.DrawFn) -> HareInstance:
    """Long and short jobs on 2-3 GPUs of unrelated speeds, arrivals spread and bunched;
    weights 1 to 3 by job index, a synchronization of a quarter of the training on some."""
    kinds = draw(st.lists(st.integers(0, 2), min_size=2, max_size=3))
    job = st.tuples(st.integers(0, 20), st.integers(0, 2), st.integers(1, 3), st.integers(1, 2))
    spec = draw(st.lists(job, min_size=2, max_size=6))
    sync = draw(st.booleans())
    jobs = tuple(
        HareJob(
            f"j{n}",
            float(a),
            1.0 + n % 3,
            rounds,
            tasks,
            tuple(PROFILES[p][k] for k in kinds),
            tuple(PROFILES[p][k] / 4 * sync for k in kinds),
        )
        for n, (a, p, rounds, tasks) in enumerate(spec)
    )
    return HareInstance("long-short", tuple(f"g{k}" for k in range(len(kinds))), jobs)


@settings(max_examples=40, deadline=None)
@given(long_and_short())
def test_no_online_schedule_is_below_the_mixed_bound(inst):
    b = flow_bound(inst)
    assert b.flow >= max(b.alone, b.pooled, b.mixed) - 1e-9
    runs = [run_method(inst, method) for method in POLICIES]
    assert b.flow <= min(out.details["flow_time_s"] for out in runs) * (1 + 1e-9)
    assert b.weighted_completion <= min(out.objective for out in runs) * (1 + 1e-9)
