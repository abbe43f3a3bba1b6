"""Progress lines of long solves (dlsched/solvers/progress.py): the heartbeat speaks when
nothing else did, names the running stage, survives forks, and the command line uses it."""

from __future__ import annotations

import threading
import time

import pytest

from dlsched.cli import main
from dlsched.solvers import progress
from dlsched.solvers.deadline import call_with_deadline


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_EVERY", 0.2)


def _lines(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("dlsched: ")]


def test_a_silent_body_gets_lines_with_the_elapsed_time_and_the_stage(fast, capsys):
    nodes = [0]
    with progress.heartbeat("job", 5.0):
        progress.note(lambda: f"search: {nodes[0]} nodes")
        for _ in range(10):
            nodes[0] += 1
            time.sleep(0.1)
    lines = _lines(capsys.readouterr().err)
    assert 2 <= len(lines) <= 6
    assert all(x.startswith("dlsched: job: ") and "of 5 s, search: " in x for x in lines)
    counts = [int(x.split("search: ")[1].split()[0]) for x in lines]
    assert counts == sorted(counts) and counts[-1] > counts[0]  # read when printed


def test_no_line_for_a_short_body_or_while_a_solver_speaks(fast, capsys):
    with progress.heartbeat("short"):
        time.sleep(0.05)
    assert capsys.readouterr().err == ""
    with progress.heartbeat("talkative"):
        for _ in range(8):
            progress.say("solver: still here")
            time.sleep(0.05)
    assert all("talkative" not in x for x in _lines(capsys.readouterr().err))


def test_the_heartbeat_stops_with_its_body_and_nested_ones_add_no_thread(fast, capsys):
    with progress.heartbeat("outer"), progress.heartbeat("inner"):
        time.sleep(0.6)
    lines = _lines(capsys.readouterr().err)
    assert lines and all("outer" in x for x in lines)
    time.sleep(0.5)
    assert capsys.readouterr().err == ""


def _child_says() -> str:
    progress.say("child: hello")
    return "done"


def test_a_fork_while_a_line_is_being_printed_does_not_hang_the_child():
    # a fork waits for the line in progress: the child never starts with the lock taken
    # (without the fork hook its own line would wait forever and the call time out)
    held = threading.Event()

    def slow_line() -> None:
        with progress._lock:
            held.set()
            time.sleep(0.5)

    thread = threading.Thread(target=slow_line)
    thread.start()
    held.wait()
    assert call_with_deadline(_child_says, seconds=5.0) == "done"
    thread.join()


def test_solve_on_the_command_line_reports_the_branch_and_bound(fast, capsys):
    from dlsched.models.hare.branch import compile_search

    compile_search()  # compiled (or loaded) first: not within the 2.5 s of the run below
    code = main(["solve", "hare/hetero-4gpu-6jobs", "--method", "exact", "--time-limit", "2.5"])
    assert code == 0
    err = capsys.readouterr().err
    assert "dlsched: exact on hare/hetero-4gpu-6jobs: " in err
    assert "branch and bound: " in err and " nodes, searching below " in err


def _sleep_briefly() -> str:
    time.sleep(0.7)
    return "slept"


def test_forked_work_under_a_heartbeat_is_told_once_by_the_heartbeat(fast, capsys):
    with progress.heartbeat("job"):
        assert call_with_deadline(_sleep_briefly, seconds=5.0, label="forked work") == "slept"
    lines = _lines(capsys.readouterr().err)
    assert lines and all(x.startswith("dlsched: job: ") and "forked work" in x for x in lines)
