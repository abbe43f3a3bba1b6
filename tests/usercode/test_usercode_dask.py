"""A user's methods on Dask (``sweep --processes 2``: a LocalCluster of daemonic workers): a
spec is resolved again by each worker, a function registered in this process travels with the
task; a method that raises, answers infeasibly or never returns is a record like the others,
and every record of the sweep is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_run import run

import dlsched
from dlsched import usercode
from dlsched.bounds import sweep
from dlsched.models import MethodOptions
from dlsched.runner import RunnerOptions

ROOT = Path(__file__).resolve().parents[2]
BAD = """
import time


def raises(instance):
    raise ValueError("my bug")


def infeasible(instance):
    return {"tasks": [{"job": j.name, "round": r, "index": k, "gpu": 0, "start": 0.0}
                      for j in instance.jobs for r in range(j.rounds)
                      for k in range(j.tasks_per_round)]}


def hangs(instance):
    while True:
        time.sleep(0.01)


def wrong_type(instance):
    return [1, 2]
"""


def all_on_gpu0_here(instance: Any) -> Any:
    """Registered in this process only: it travels to the workers with the task."""
    from dlsched.models.hare.solution import TaskSchedule

    items, now = [], 0.0
    for n, job in enumerate(instance.jobs):
        now = max(now, job.arrival)
        for r in range(job.rounds):
            for k in range(job.tasks_per_round):
                items.append(((n, r, k), 0, now))
                now += job.train_time[0] + job.sync_time[0]
    return TaskSchedule.from_items(items)


@pytest.mark.slow
def test_sweep_on_two_processes_runs_every_kind_of_user_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    (tmp_path / "bad.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    names = ["bad.py:raises", "bad.py:infeasible", "bad.py:hangs", "bad.py:wrong_type"]
    good = f"{ROOT}/examples/rules.py:hare_greedy"
    argv = ["sweep", "hare", "--count", "3", "--jobs", "2", "--gpus", "2", "--methods",
            ",".join([*names, good]), "--processes", "2", "--quiet", "--time-limit", "3",
            "-o", "sw.jsonl"]  # fmt: skip
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "Traceback (most recent" not in err
    rows = [json.loads(line) for line in (tmp_path / "sw.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * 6  # every record, once
    by = {m: [r for r in rows if r["method"] == m] for m in [*names, good]}
    assert all(r["status"] == "error" and "ValueError: my bug" in r["error"]
               and "in raises" in r["traceback"] for r in by["bad.py:raises"])  # fmt: skip
    assert all("infeasible answer" in r["error"] for r in by["bad.py:infeasible"])
    assert all(r["status"] == "time_limit" for r in by["bad.py:hangs"])
    assert all("got list" in r["error"] for r in by["bad.py:wrong_type"])
    assert all(r["status"] == "feasible" and r["ratio"] >= 1 - 1e-9 for r in by[good])
    code, out, _ = run(capsys, *argv)  # resumed: nothing left to run
    assert code == 0 and out.startswith("0 new records")


@pytest.mark.slow
def test_a_function_registered_here_travels_to_the_workers(tmp_path: Path) -> None:
    name = dlsched.register(all_on_gpu0_here, family="hare", guarantee=1e6)
    try:
        instances = [dlsched.generate("hare", 2, gpus=2, seed=s) for s in range(2)]
        options = MethodOptions(time_limit=20)
        on_dask = sweep(instances, [name], tmp_path / "a.jsonl", options=options,
                        runner=RunnerOptions(processes=2, progress=False))  # fmt: skip
        here = sweep(instances, [name], tmp_path / "b.jsonl", options=options)
    finally:
        usercode.REGISTERED.clear()
    key = sorted((r.instance_hash, r.method, r.status, r.objective, r.holds) for r in on_dask)
    assert key == sorted((r.instance_hash, r.method, r.status, r.objective, r.holds) for r in here)
    assert {r.status for r in on_dask if r.method == name} == {"feasible"}
