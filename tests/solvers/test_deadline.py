"""The Deadline (dlsched/solvers/deadline.py) on an injected clock: what is left, when it has
passed, the stage budgets it splits into, what it hands a solver, the grace of forked work; and
its fork: killed past the limit and its grace, and after HiGHS ran multi-threaded in the
parent process. No test reads the wall clock: time passes when a test says so."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_clock import FakeClock

from dlsched.models.hare.generate import generate_unrelated
from dlsched.models.hare.special import solve_single_task
from dlsched.solvers import SolverSettings, Status
from dlsched.solvers import deadline as deadline_module
from dlsched.solvers.deadline import (
    FORK_GRACES,
    GRACE,
    GRACE_SHARE,
    MIN_SOLVER_SECONDS,
    NEVER,
    Deadline,
    grace,
)


def started(limit: float | None) -> tuple[Deadline, FakeClock]:
    clock = FakeClock()
    return Deadline.after(limit, clock), clock


def test_left_elapsed_and_passed_follow_the_clock():
    d, clock = started(10.0)
    assert (d.elapsed(), d.left(), d.passed()) == (0.0, 10.0, False)
    clock.advance(4.0)
    assert (d.elapsed(), d.left(), d.passed()) == (4.0, 6.0, False)
    clock.advance(6.0)
    assert (d.left(), d.passed()) == (0.0, True)  # at the limit it has passed
    clock.advance(5.0)
    assert d.left() == 0.0 and d.elapsed() == 15.0  # never negative


def test_without_a_limit_nothing_passes_and_nothing_is_left_to_count():
    d, clock = started(None)
    clock.advance(1e9)
    assert d.unlimited and d.left() is None and not d.passed()
    assert d.seconds() is None and d.seconds(cap=7.0) == 7.0
    assert not d.almost_passed(0.5)
    assert d.share_of_rest(0.5).limit is None and d.share_from_start(0.5) is d and d.for_fork() is d
    assert NEVER.left() is None and not NEVER.passed()


def test_a_deadline_started_in_the_past_has_that_much_less_left():
    clock = FakeClock()
    clock.advance(10.0)
    d = Deadline.after(2.0, clock, start=9.25)  # the process started 0.75 s ago
    assert (d.start, d.elapsed(), d.left(), d.whole) == (9.25, 0.75, 1.25, 2.0)
    assert Deadline.after(2.0, clock, start=5.0).passed()  # its start-up took the whole limit


def test_the_process_start_is_its_age_before_now(monkeypatch):
    clock = FakeClock()
    clock.advance(100.0)
    monkeypatch.setattr(deadline_module, "process_age", lambda: 1.5)
    assert deadline_module.process_start(clock) == 98.5
    monkeypatch.setattr(deadline_module, "process_age", lambda: None)  # the system cannot say
    assert deadline_module.process_start(clock) == 100.0


def test_the_process_age_is_read_from_the_system_start_and_the_boot_clock(monkeypatch, tmp_path):
    stat = tmp_path / "stat"
    ticks = os.sysconf("SC_CLK_TCK")
    stat.write_text(f"42 (a (strange) name) S 1 42 42 0 -1 4194560 {'0 ' * 12}{50 * ticks} 0\n")
    monkeypatch.setattr(deadline_module, "PROC_STAT", str(stat))
    monkeypatch.setattr(deadline_module.time, "clock_gettime", lambda _clock: 52.0)
    assert deadline_module.process_age() == pytest.approx(2.0)  # started at 50 s since boot
    monkeypatch.setattr(deadline_module, "PROC_STAT", str(tmp_path / "missing"))
    assert deadline_module.process_age() is None


def test_seconds_handed_to_a_solver_are_what_is_left_capped_and_never_zero():
    d, clock = started(10.0)
    assert d.seconds() == 10.0 and d.seconds(cap=3.0) == 3.0
    clock.advance(8.0)
    assert d.seconds() == 2.0 and d.seconds(cap=3.0) == 2.0
    clock.advance(5.0)  # past it: a solver given 0 s may read it as no limit
    assert d.seconds() == MIN_SOLVER_SECONDS
    settings = SolverSettings(seed=4, threads=2)
    assert d.solve_options(settings) == settings.limited(MIN_SOLVER_SECONDS)
    # options with a limit of their own are read for their settings only
    assert d.solve_options(settings.limited(10.0)) == settings.limited(MIN_SOLVER_SECONDS)


def test_the_deadline_module_does_not_import_the_highs_backend():
    """Forked work stops HiGHS's scheduler through :mod:`dlsched.solvers.highs_scheduler`:
    the deadline never imports the backend (nor scipy with it), which imports the deadline."""
    code = (
        "import sys, dlsched.solvers.deadline; "
        "print('dlsched.solvers.highs' in sys.modules, 'scipy' in sys.modules)"
    )
    root = str(Path(deadline_module.__file__).parents[2])  # this tree's dlsched
    env = {**os.environ, "PYTHONPATH": root}
    run = [sys.executable, "-c", code]
    out = subprocess.run(run, capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False", "False"]


def test_a_stage_is_a_share_of_what_is_left_now_and_keeps_the_whole_limit():
    d, clock = started(10.0)
    clock.advance(2.0)
    stage = d.share_of_rest(0.5)  # half of the 8 s left, from now
    assert (stage.limit, stage.left(), stage.whole) == (4.0, 4.0, 10.0)
    clock.advance(4.0)
    assert stage.passed() and not d.passed()
    assert stage.grace() == d.grace() == grace(10.0)  # the grace of the whole limit
    assert d.share_of_rest(1.0).left() == d.left() == 4.0  # all of it: never past the deadline


def test_a_share_is_planned_from_the_start():
    d, clock = started(10.0)
    clock.advance(2.0)
    first = d.share_from_start(0.3)  # the first 30 % of the limit, whenever it is asked
    assert (first.limit, first.start, first.left()) == (3.0, 0.0, 1.0)
    clock.advance(1.0)
    assert first.passed() and not d.passed()


def test_almost_passed_says_when_less_than_a_share_of_the_limit_is_left():
    d, clock = started(10.0)
    clock.advance(7.0)
    assert not d.almost_passed(0.2)
    clock.advance(1.0)
    assert d.almost_passed(0.2)  # 2 s left of 10


def test_grace_is_a_share_of_the_limit_up_to_a_second():
    assert grace(None) == GRACE == 1.0
    assert grace(120.0) == 1.0 and grace(10.0) == 1.0
    assert grace(1.0) == pytest.approx(GRACE_SHARE * 1.0) and grace(0.5) < grace(1.0)


def test_forked_work_ends_two_graces_sooner():
    d, clock = started(1.0)
    child = d.for_fork()
    assert child.left() == pytest.approx(1.0 - FORK_GRACES * grace(1.0))
    assert child.grace() == d.grace()  # killed a grace before the method's limit
    clock.advance(0.81)
    assert child.passed() and not d.passed()


def _sleep_then(seconds: float, value: int) -> int:
    time.sleep(seconds)
    return value


def test_forked_work_gets_what_is_left_plus_the_grace(monkeypatch):
    handed = []
    real = deadline_module.call_with_deadline

    def spy(fn, *args, seconds, label):  # type: ignore[no-untyped-def]
        handed.append((seconds, label))
        return real(fn, *args, seconds=seconds, label=label)

    monkeypatch.setattr(deadline_module, "call_with_deadline", spy)
    d, clock = started(5.0)
    clock.advance(1.0)
    assert d.run(_sleep_then, 0.0, 7) == 7  # within the limit the answer comes back
    assert handed == [(4.0 + grace(5.0), "sleep then")]
    assert Deadline.after(None, clock).run(_sleep_then, 0.0, 8) == 8  # no limit: no fork
    assert len(handed) == 1


def test_work_past_its_limit_and_grace_is_killed():
    # a real short wait: only the answer is checked, never how long it took
    d = Deadline.after(0.2)
    assert d.run(_sleep_then, 30.0, 1) is None


def _fails() -> None:
    raise ValueError("from the child")


def test_an_exception_in_forked_work_is_raised_in_the_parent():
    with pytest.raises(ValueError, match="from the child"):
        Deadline.after(30.0).run(_fails)


def test_a_forked_highs_mip_after_a_multithreaded_parent_run_still_proves():
    # Without stopping HiGHS's workers before the fork, the child inherits the task scheduler
    # without its threads and this MILP (a proof in about 2 s) runs to the 30 s limit.
    inst = generate_unrelated(30, 3, 1)
    opts = SolverSettings(threads=2)
    first = solve_single_task(inst, opts, "colgen", deadline=Deadline.after(30))  # in-process
    forked = solve_single_task(  # the MILP in a forked child
        inst, opts, "time-indexed", deadline=Deadline.after(30)
    )
    cert = forked.certified()
    assert cert.status == Status.OPTIMAL
    assert forked.objective == first.objective
