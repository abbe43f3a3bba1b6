"""dlsched on a Dask cluster started the usual way (``dask scheduler``, ``dask worker``, Dask's
defaults: daemonic worker processes): the exact routes fork their work under its deadline
(dlsched/solvers/deadline.py) without multiprocessing, which refuses children to a daemonic
process; a forked child dies with its parent (a worker killed -9 leaves nothing running); and
the runner's watchdog gives up a task that never returns (dlsched/runner.py, Watchdog)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlsched.cli import main
from dlsched.runner import Pool, RunnerOptions, Watchdog

ROOT = Path(__file__).resolve().parents[2]  # this tree's dlsched, for the workers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dask(*args: str) -> list[str]:
    """The ``dask`` command beside this Python (else its module)."""
    beside = Path(sys.executable).with_name("dask")
    if beside.exists():
        return [str(beside), *args]
    return [sys.executable, "-m", "dask", *args]


def _wait_for(address: str, workers: int, timeout: float = 60) -> None:
    from distributed import Client

    with Client(address, timeout=timeout) as client:
        client.wait_for_workers(workers, timeout=timeout)


#: the scheduler's process of each running cluster fixture, by address (a test may kill it)
SCHEDULERS: dict[str, subprocess.Popen[bytes]] = {}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, with Dask's defaults
    (no dashboard, so that nothing else's port is taken); killed at the end."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    logs = (tmp_path / "scheduler.log").open("w"), (tmp_path / "workers.log").open("w")
    port = address.rsplit(":", 1)[1]
    started = [
        subprocess.Popen(
            _dask("scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"),
            env=env,
            stdout=logs[0],
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ),  # fmt: skip
        subprocess.Popen(
            _dask("worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"),
            env=env,
            stdout=logs[1],
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ),  # fmt: skip
    ]
    try:
        _wait_for(address, 2)
        SCHEDULERS[address] = started[0]
        yield address
    finally:
        SCHEDULERS.pop(address, None)
        for proc in reversed(started):  # each in a session of its own: its whole group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for log in logs:
            log.close()


def test_a_sweep_with_an_exact_route_runs_on_a_cluster_with_dask_defaults(
    cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Placement's exact reference forks SCIP under its deadline on these sizes: with
    multiprocessing's fork, every task ended in "daemonic processes are not allowed to have
    children". Every record comes back once, none an error."""
    out = tmp_path / "sw.jsonl"
    argv = ["sweep", "placement", "--count", "4", "--jobs", "3", "--gpus", "6", "--methods",
            "has,jps", "--time-limit", "60", "--task-seconds", "0", "--scheduler", cluster,
            "--quiet", "-o", str(out)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    keys = [(r["instance_hash"], r["method"]) for r in records]
    assert len(keys) == len(set(keys)) == 4 * 3  # the reference and two methods, each once
    assert {r["method"] for r in records} == {"exact", "has", "jps"}
    assert all(r["status"] in ("optimal", "feasible") for r in records)
    assert all(r["reference_kind"] == "optimum" for r in records)  # the exact route proved


def test_a_cluster_lost_midway_is_one_line_and_keeps_what_was_written(
    cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The scheduler killed -9 while the sweep runs: the command ends with one line naming the
    cluster (exit status 2), not Dask's traceback, and every record written before stays whole
    (the same command resumes from them)."""
    out = tmp_path / "sw.jsonl"
    argv = ["sweep", "placement", "--count", "200", "--jobs", "3", "--gpus", "6", "--methods",
            "has", "--time-limit", "60", "--task-seconds", "0", "--scheduler", cluster,
            "--quiet", "-o", str(out)]  # fmt: skip

    def kill_once_written() -> None:
        for _ in range(3000):
            if out.exists() and out.read_text().count("\n") >= 2:
                break
            time.sleep(0.1)
        os.killpg(SCHEDULERS[cluster].pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_once_written, daemon=True)
    killer.start()
    code = main(argv)
    killer.join()
    err = capsys.readouterr().err
    lines = out.read_text().splitlines()
    if code == 0:  # the sweep outran the kill on a fast machine: nothing to check
        pytest.skip("the sweep ended before the scheduler was killed")
    assert code == 2, err
    assert "Traceback" not in err and err.strip().count("\n") == 0, err
    assert f"--scheduler {cluster}" in err and "the same command resumes" in err
    assert len(lines) >= 2 and all(json.loads(line)["method"] for line in lines)


def _echo(k: int) -> int:
    return k


def _never() -> None:
    threading.Event().wait()  # a task that never returns


def test_a_task_that_never_returns_gives_its_failed_result_and_the_map_goes_on() -> None:
    """On the runner's own cluster: the stuck task's call gets the watchdog's result (its
    worker is restarted), every other call its own; nothing waits for the stuck one."""
    calls = [(_echo, (k,)) for k in range(3)] + [(_never, ())] + [(_echo, (k,)) for k in (4, 5)]
    watchdog = Watchdog(5.0, lambda i, why: ("failed", i, why))
    got = {}
    options = RunnerOptions(processes=2, task_seconds=0, progress=False)
    with Pool(options) as pool:
        for finished in pool.map(calls, watchdog=watchdog):
            got.update(finished)
    assert sorted(got) == list(range(6))
    assert [got[i] for i in (0, 1, 2, 4, 5)] == [0, 1, 2, 4, 5]
    failed, index, why = got[3]
    assert (failed, index) == ("failed", 3) and why.startswith("StuckTask: given up after")


def test_a_map_and_lines_end_at_their_deadline_without_waiting_for_the_tasks_still_out() -> None:
    """A task that never returns is dropped once ``until`` has passed: the map yields every
    other task's results and ends, and lines of calls end too (without ``until`` both would
    wait for ever)."""
    from dlsched.solvers.deadline import Deadline

    calls = [(_echo, (k,)) for k in range(3)] + [(_never, ())]
    got: dict[int, int] = {}
    options = RunnerOptions(processes=2, task_seconds=0, progress=False)
    with Pool(options) as pool:
        pool.size()  # the cluster started before the deadlines are
        for finished in pool.map(calls, until=Deadline.after(20.0)):
            got.update(finished)
        assert got == {0: 0, 1: 1, 2: 2}
        ended: list[int] = []
        pool.follow([(_echo, (7,)), (_never, ())], lambda i, r: ended.append(r) or None,
                    until=Deadline.after(20.0))  # fmt: skip
        assert ended == [7]


_ORPHAN = """
import os, sys, time
from dlsched.solvers.deadline import call_with_deadline

def work(path):
    with open(path, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)

call_with_deadline(work, sys.argv[1], seconds=600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (dead, not yet reaped by init) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def test_forked_work_dies_with_its_parent_killed_9(tmp_path: Path) -> None:
    """A parent killed -9 (a worker, say) while its forked work runs: the work is killed too
    (Linux's parent-death signal, else the child's watcher), never left running for ever."""
    pid_file = tmp_path / "child.pid"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", _ORPHAN, str(pid_file)], env=env)
    try:
        for _ in range(600):  # the child has started (at most a minute on a loaded machine)
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.1)
        child = int(pid_file.read_text())
        assert _alive(child)
    finally:
        parent.kill()
        parent.wait()
    for _ in range(300):  # the child is gone within half a minute (a second without prctl)
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(child)


_USER = """


def raises(instance):
    raise ValueError("my bug")


def infeasible(instance):
    return {"jobs": {j.name: [] for j in instance.jobs}}


def hangs(instance):
    while True:
        time.sleep(0.01)


def wrong_type(instance):
    return 42
"""


def test_a_user_rule_on_a_cluster_with_dask_defaults_gives_the_rows_it_gives_here(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A rule named by its file, swept on ``dask worker`` processes (Dask's defaults), gives the
    rows the same function registered from Python gives in this process; a rule that raises,
    answers infeasibly, never returns or returns the wrong type is a record like the others
    there too (its message, or time_limit), every record written once."""
    import dlsched
    from dlsched import usercode

    rules = ROOT / "examples" / "rules.py"
    (tmp_path / "mine.py").write_text(rules.read_text() + "\nimport time\n" + _USER)
    monkeypatch.chdir(tmp_path)
    kinds = ["raises", "infeasible", "hangs", "wrong_type"]
    specs = [f"mine.py:{k}" for k in kinds]
    size = ["--count", "3", "--jobs", "2", "--gpus", "4", "--time-limit", "5", "--quiet"]
    good = "mine.py:placement_all_on_fastest"
    argv = ["sweep", "placement", *size, "--methods", ",".join([good, *specs]),
            "--scheduler", cluster, "-o", "cluster.jsonl"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in (tmp_path / "cluster.jsonl").read_text().splitlines()]
    assert len(rows) == len({(r["instance_hash"], r["method"]) for r in rows}) == 3 * 6
    by = {m: {r["instance_hash"]: r for r in rows if r["method"] == m} for m in specs}
    assert all("ValueError: my bug" in r["error"] for r in by["mine.py:raises"].values())
    assert all("infeasible answer" in r["error"] for r in by["mine.py:infeasible"].values())
    assert all(r["status"] == "time_limit" for r in by["mine.py:hangs"].values())
    assert all("got int" in r["error"] for r in by["mine.py:wrong_type"].values())
    fastest = usercode.load_spec(f"{rules}:placement_all_on_fastest")
    name = dlsched.register(fastest, family="placement")
    try:
        argv_here = ["sweep", "placement", *size, "--methods", name, "-o", "here.jsonl"]
        assert main(argv_here) == 0, capsys.readouterr().err
    finally:
        usercode.REGISTERED.pop(("placement", name), None)
    here = [json.loads(line) for line in (tmp_path / "here.jsonl").read_text().splitlines()]
    mine = sorted((r["instance_hash"], r["status"], r["objective"], r["ratio"])
                  for r in rows if r["method"] == good)  # fmt: skip
    same = sorted((r["instance_hash"], r["status"], r["objective"], r["ratio"])
                  for r in here if r["method"] == name)  # fmt: skip
    assert mine == same and {s for _, s, _, _ in mine} == {"feasible"}


def test_a_function_the_workers_cannot_import_is_one_line(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A function from a module only this process can import (its folder on this process's
    path alone, not the workers') cannot reach ``dask worker`` processes: the sweep ends with
    one line saying so, exit 2, no Dask traceback."""
    import dlsched
    from dlsched import usercode

    (tmp_path / "only_here_mod.py").write_text("def rule(instance):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from only_here_mod import rule  # type: ignore[import-not-found]

    name = dlsched.register(rule, family="hare")
    try:
        out = str(tmp_path / "sw.jsonl")
        argv = ["sweep", "hare", "--count", "2", "--jobs", "2", "--gpus", "2", "--methods",
                name, "--scheduler", cluster, "--quiet", "-o", out]  # fmt: skip
        code = main(argv)
    finally:
        usercode.REGISTERED.pop(("hare", name), None)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert "could not be sent to the workers" in err and err.strip().count("\n") == 0
