"""dlsched sweep on the shared runner (dlsched.runner): the records of a Dask run (its own
LocalCluster, or a pool shared between sweeps) are an in-process run's; a rerun runs only the
missing (instance, method) pairs whatever ran first; a sweep killed (SIGKILL) midway resumes with
no record lost or written twice; one runner module, imported by bounds and verify, importing
neither."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_run import count_runs

from dlsched.bounds import SWEEP_KEY, sweep
from dlsched.cli import main
from dlsched.instances import instance_hash
from dlsched.models.placement import generate
from dlsched.runner import Pool, RunnerOptions

METHODS = ["has", "optimus", "las"]
TWO = RunnerOptions(processes=2, progress=False)


def keys(path: Path) -> list[tuple[Any, ...]]:
    return [tuple(json.loads(line)[f] for f in SWEEP_KEY) for line in path.read_text().splitlines()]


def comparable(path: Path) -> list[dict[str, Any]]:
    """The file's records without their timings, in key order."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        del r["wall_time"]
    return sorted(rows, key=lambda r: json.dumps([r[f] for f in SWEEP_KEY]))


def test_a_sweep_on_dask_writes_the_records_of_a_sweep_in_this_process(tmp_path: Path) -> None:
    """Two worker processes (the runner's own LocalCluster), then a pool shared by two sweeps:
    the same records as in this process, each key once, every instance's reference a proven
    optimum that no heuristic beats."""
    instances = [generate(2, 3, seed) for seed in range(8)]
    here = sweep(instances, METHODS, tmp_path / "here.jsonl")
    assert len(here) == 8 * 4 and len(set(keys(tmp_path / "here.jsonl"))) == 32
    for r in here:
        assert r.reference_kind == "optimum" and r.ratio is not None and r.ratio >= 1 - 1e-9
    dask = sweep(instances, METHODS, tmp_path / "dask.jsonl", runner=TWO)
    assert len(dask) == 32 and comparable(tmp_path / "dask.jsonl") == comparable(
        tmp_path / "here.jsonl"
    )
    with Pool(TWO) as pool:  # one cluster for both: the second sweep adds a method only
        sweep(instances[:4], ["has"], tmp_path / "pool.jsonl", pool=pool)
        added = sweep(instances, METHODS, tmp_path / "pool.jsonl", pool=pool)
        assert pool.size() == 2
    assert len(added) == 32 - 8
    assert comparable(tmp_path / "pool.jsonl") == comparable(tmp_path / "here.jsonl")


def test_a_rerun_after_a_dask_sweep_runs_only_the_missing_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Half the instances and one method on Dask, then everything in this process: only the
    missing pairs run (the reference again only beside a missing method), and an instance given
    twice runs once."""
    instances = [generate(2, 3, seed) for seed in range(6)]
    log = tmp_path / "s.jsonl"
    sweep(instances[:3], ["has"], log, runner=TWO)
    calls = count_runs(monkeypatch)
    new = sweep([*instances, instances[4]], ["has", "optimus"], log)
    old = {instance_hash(i) for i in instances[:3]}
    ran = sorted((h in old, m) for h, m in calls)
    assert ran == sorted([(True, "exact"), (True, "optimus")] * 3
                         + [(False, "exact"), (False, "has"), (False, "optimus")] * 3)  # fmt: skip
    assert len(new) == 3 + 9
    assert len(keys(log)) == len(set(keys(log))) == 6 * 3
    calls.clear()
    assert sweep(instances, ["optimus", "has"], log, runner=TWO) == [] and calls == []


def _kill_midway(argv: list[str], log: Path, lines: int) -> int:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.read_bytes().count(b"\n") >= lines:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return log.read_bytes().count(b"\n")


@pytest.mark.parametrize("processes", ["0", "2"])
def test_a_sweep_killed_midway_resumes_with_no_record_lost_or_repeated(
    tmp_path: Path, processes: str
) -> None:
    """``dlsched sweep`` killed by SIGKILL part way (in this process, or on a LocalCluster of two
    processes), its file then torn mid-record as by a kill inside a write, is run again: the
    file ends with every (instance, method) key once, and the records of a clean run."""
    head = ["sweep", "placement", "--count", "24", "--jobs", "2", "--gpus", "3",
            "--methods", ",".join(METHODS), "--quiet"]  # fmt: skip
    log = tmp_path / "killed.jsonl"
    argv = [sys.executable, "-m", "dlsched.cli", *head, "--processes", processes, "-o", str(log)]
    before = _kill_midway(argv, log, 8)
    assert 8 <= before < 24 * 4  # killed midway
    with log.open("ab") as f:
        f.write(b'{"instance_hash": "ab12", "method": "ha')
    cx = str(tmp_path / "cx")
    rest = [*head, "--processes", "0", "--counterexamples", cx, "-o", str(log)]
    assert main(rest) == 0
    assert (
        main([*head, "--processes", "0", "--counterexamples", cx, "-o", str(tmp_path / "c")]) == 0
    )
    resumed = keys(log)
    assert len(resumed) == len(set(resumed)) == 24 * 4
    assert comparable(log) == comparable(tmp_path / "c")


def _file_of(fd: int) -> tuple[int, int] | None:
    """(device, inode) of what ``fd`` is open on, None if it is closed."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def test_a_child_forked_while_a_log_is_locked_does_not_keep_the_lock(tmp_path: Path) -> None:
    """A solver stage forked under its deadline used to inherit the locked descriptor, so after
    a kill -9 of the sweep the rerun found the file "in use" until that child ended. The child
    closes its copy at once; the lock stays this process's."""
    import fcntl
    import multiprocessing

    from dlsched.bounds import locked_log

    log = tmp_path / "s.jsonl"
    with locked_log(log) as fd:
        mine = _file_of(fd)
        assert mine == (log.stat().st_dev, log.stat().st_ino)
        with multiprocessing.get_context("fork").Pool(1) as children:
            assert children.apply(_file_of, (fd,)) != mine  # closed (the number maybe reused)
        assert _file_of(fd) == mine
        other = os.open(log, os.O_RDONLY)
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(other)


def test_an_unreachable_scheduler_is_one_line_before_any_file(capsys, tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    argv = ["sweep", "placement", "--count", "1", "--jobs", "2", "--gpus", "3", "--methods",
            "has", "--scheduler", "nonsense://", "-o", str(log)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--scheduler" in err and "Traceback" not in err
    assert not log.exists()


def test_the_runner_imports_neither_bounds_nor_verify() -> None:
    """dlsched.runner is the one Dask path: bounds (sweep) and verify import it, it imports
    neither of them (no cycle)."""
    code = (
        "import sys, dlsched.runner; "
        "print([m for m in sys.modules if m.startswith(('dlsched.bounds', 'dlsched.verify'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    import dlsched.bounds.sweeps
    import dlsched.runner
    import dlsched.verify.runner

    assert dlsched.bounds.sweeps.Pool is dlsched.runner.Pool is dlsched.verify.runner.Pool


def test_the_options_of_where_a_sweep_runs_are_verifys() -> None:
    from dlsched.cli import build_parser

    parser = build_parser()
    sweep_args = parser.parse_args(["sweep", "hare", "--count", "1", "--jobs", "1", "--gpus", "1",
                                    "--methods", "hare", "-o", "x", "--processes", "3",
                                    "--scheduler", "tcp://h:1", "--task-seconds", "0",
                                    "--quiet"])  # fmt: skip
    verify_args = parser.parse_args(["verify", "--processes", "3", "--scheduler", "tcp://h:1",
                                     "--task-seconds", "0", "--quiet"])  # fmt: skip
    names = ("processes", "scheduler", "task_seconds", "quiet")
    assert [getattr(sweep_args, n) for n in names] == [getattr(verify_args, n) for n in names]
    assert [getattr(sweep_args, n) for n in names] == [3, "tcp://h:1", 0.0, True]


def test_the_api_verify_takes_the_runners_options(tmp_path: Path) -> None:
    """dlsched.api.verify on a LocalCluster of two processes gives the rows of a run in this
    process; an unreachable scheduler is one line naming it, before any file."""
    from dlsched import api
    from dlsched.errors import OptionError

    here = api.verify("000-has", count=3, time_limit=30, out=tmp_path / "here")
    dask = api.verify("000-has", count=3, time_limit=30, out=tmp_path / "dask", processes=2)
    columns = [c for c in here.columns if c != "wall_time"]
    assert len(here) == 6 and not here.status.eq("error").any()
    order = ["instance_hash", "method"]

    def rows(frame: Any) -> str:
        return str(frame[columns].sort_values(order).to_json(orient="records"))

    assert rows(dask) == rows(here)
    with pytest.raises(OptionError, match="--scheduler"):
        api.verify("000-has", count=1, out=tmp_path / "remote", scheduler="nonsense://")
    assert not (tmp_path / "remote").exists()


def _countdown(line: int, n: int) -> tuple[int, int, int]:
    return line, n, os.getpid()


@pytest.mark.parametrize("processes", [0, 2])
def test_lines_of_calls_run_each_call_once_in_order_and_stop_when_told(processes: int) -> None:
    """Pool.follow: three lines of calls, each next call given by the last one's result (line
    k counts down from 2 k); every call of every line runs once, a line's calls in its order,
    and a line ends when ``then`` says so; on Dask, the calls ran in the workers, not here."""
    seen: list[tuple[int, int]] = []
    pids = set()

    def then(i: int, result: tuple[int, int, int]) -> Any:
        line, n, pid = result
        assert line == i
        seen.append((line, n))
        pids.add(pid)
        return (_countdown, (line, n - 1)) if n > 0 else None

    with Pool(RunnerOptions(processes=processes, progress=False)) as pool:
        pool.follow([(_countdown, (k, 2 * k + 3)) for k in range(3)], then)
    for k in range(3):
        assert [n for line, n in seen if line == k] == list(range(2 * k + 3, -1, -1))
    assert len(seen) == sum(2 * k + 4 for k in range(3))
    assert (len(pids) == 1) if processes == 0 else (os.getpid() not in pids)
