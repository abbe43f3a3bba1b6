"""The large-neighbourhood search of the hare exact route (dlsched.models.hare.lns): its windows,
its fixed tasks consistent with the model, and steps that reach the brute-force optimum."""

from __future__ import annotations

import pytest
from fake_clock import FakeClock
from hypothesis import HealthCheck, given, settings
from strategies import hare_brute_force as brute_force
from strategies import small_jobs

from dlsched.models.hare import generate
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.lns import _wider, all_windows, improve, job_window, reoptimize
from dlsched.models.hare.rounding import list_schedule
from dlsched.models.hare.scaling import scale_data
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.deadline import Deadline

STEP = SolverSettings(extra={"num_workers": 1})
#: Seconds of a step's CP-SAT run.
STEP_SECONDS = 10.0


def _worst_order(inst):
    """A poor but feasible schedule: the list schedule with the latest arrivals first."""
    order = sorted(inst.tasks, key=lambda i: (-inst.jobs[i[0]].arrival, i[0], i[1], i[2]))
    order.sort(key=lambda i: i[1])  # rounds in order
    return list_schedule(inst, order, "earliest-available")


def test_windows_are_consecutive_in_arrival_order_within_the_task_cap():
    inst = generate(8, 4, 5, arrival_span=20.0)
    order = sorted(range(inst.num_jobs), key=lambda n: (inst.jobs[n].arrival, n))
    size = {n: inst.jobs[n].rounds * inst.jobs[n].tasks_per_round for n in order}
    for first in range(inst.num_jobs):
        for cap in (1, 5, 12):
            w = job_window(inst, first, cap)
            pos = sorted(order.index(n) for n in w)
            assert pos[0] == first and pos == list(range(first, first + len(w)))
            assert len(w) == 1 or sum(size[n] for n in w) <= cap
            nxt = first + len(w)
            if nxt < len(order):  # the next job would not have fitted
                assert sum(size[n] for n in w) + size[order[nxt]] > cap


def test_nothing_free_gives_back_the_same_objective():
    # every task fixed where the schedule has it: the model must accept it (canonical order of
    # the round's tasks, GPU classes) and can do nothing else
    inst = generate(5, 4, 2, rounds=(1, 3), tasks=(1, 3))
    sched = _worst_order(inst)
    got, proven = reoptimize(
        inst, scale_data(inst), sched, set(), STEP, Deadline.never(), STEP_SECONDS
    )
    assert got is not None and proven
    assert check_schedule(inst, got).objective == pytest.approx(
        check_schedule(inst, sched).objective, rel=1e-12
    )


@settings(
    max_examples=8, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_jobs())
def test_search_from_a_poor_schedule_reaches_the_optimum(inst):
    sched = _worst_order(inst)
    start = check_schedule(inst, sched).objective
    # windows of every task: each step is the whole model, proven within its seconds; on a
    # clock that never moves the search can only end by itself, its windows all proven
    got = improve(
        inst, sched, Deadline.after(30.0, FakeClock()), window_tasks=100, step_seconds=5.0
    )
    value = check_schedule(inst, got.schedule).objective  # feasible, or the checker raises
    assert value <= start + 1e-9
    assert value == pytest.approx(brute_force(inst), rel=1e-9)
    assert got.steps >= 1 and got.objective <= got.start_objective


def test_the_search_runs_only_on_a_wide_gap():
    from dlsched.models.hare.cpsat import PriorBounds
    from dlsched.models.hare.hint import best_hint
    from dlsched.models.hare.pipeline import LNS_MIN_GAP, wide_gap
    from dlsched.models.hare.scaling import scaled_objective

    inst = generate(5, 4, 2, rounds=(1, 3), tasks=(1, 3))
    d = scale_data(inst)
    hint = best_hint(inst)[1]
    upper = scaled_objective(d, inst, hint)
    assert wide_gap(d, inst, hint, PriorBounds())  # nothing proven
    assert not wide_gap(d, inst, hint, PriorBounds(upper))  # the hint meets the bound
    near = int(upper * (1 - LNS_MIN_GAP / 2))
    far = int(upper * (1 - 2 * LNS_MIN_GAP))
    assert not wide_gap(d, inst, hint, PriorBounds(near))
    assert wide_gap(d, inst, hint, PriorBounds(far))
    assert not wide_gap(d, inst, None, PriorBounds())


def test_windows_widen_until_the_schedule_is_a_local_optimum_of_every_size():
    # windows of one task hold one job each; once they are all proven the search widens them,
    # and it ends (on a clock that never moves: by itself) only when the next size would free
    # every job
    inst = generate(4, 3, 7, rounds=(1, 2), tasks=(1, 2))
    sched = _worst_order(inst)
    got = improve(
        inst, sched, Deadline.after(120.0, FakeClock()), window_tasks=1, step_seconds=10.0
    )
    assert got.window_tasks > 1
    assert all(len(w) < inst.num_jobs for w in all_windows(inst, got.window_tasks))
    widest = all_windows(inst, got.window_tasks)
    assert _wider(inst, got.window_tasks, widest)[1] is None  # the next size frees every job
    value = check_schedule(inst, got.schedule).objective
    assert value <= check_schedule(inst, sched).objective + 1e-9
    d = scale_data(inst)
    size = 1
    while size <= got.window_tasks:  # no window of any size searched can still gain
        for free in all_windows(inst, size):
            better, proven = reoptimize(
                inst, d, got.schedule, set(free), STEP, Deadline.never(), STEP_SECONDS
            )
            assert proven
            if better is not None:
                assert check_schedule(inst, better).objective >= value - 1e-9
        size *= 2
