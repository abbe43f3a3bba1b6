"""Instances of the hare family: offline task scheduling on heterogeneous GPUs (Hare_Sched).

Chen, Chen, Li, Guo, Zhang, Li, Sun, Guo. *Hare: Exploiting Inter-job and Intra-job Parallelism
of Distributed Machine Learning on Heterogeneous GPUs*. HPDC 2022, Section 5.

Job n arrives at ``arrival`` (a_n), has weight ``weight`` (w_n), ``rounds`` training rounds
(|R_n|) of ``tasks_per_round`` parallel tasks (|D_r|). One task of job n takes
``train_time[m]`` (T^c_{n,m}) to train and ``sync_time[m]`` (T^s_{n,m}) to synchronize on GPU m
(lists aligned with ``gpus``, or objects keyed by GPU name). Times are in any consistent unit
(seconds in the paper).

Accepted ranges (:data:`LIMITS`): arrival and sync_time 0 to 1e9, train_time 1e-6 to 1e9,
weight 1e-6 to 1e6, rounds and tasks_per_round integers from 1 to 1e6, and at most 1e6 tasks
in all. 1e-6 is the finest time step of the exact route (times are scaled by at most 1e6);
1e9 seconds is three decades. Unknown keys are refused.

A task is identified by ``(n, r, k)``: job index, round index (0-based), index within the round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dlsched.errors import InstanceError
from dlsched.instances.base import JobList
from dlsched.instances.validate import (
    COUNT,
    MAX_COUNT,
    RESOLUTION,
    Range,
    Reader,
    built,
    check_integer,
    check_keys,
    check_number,
    number_list,
    unique_names,
)

Task = tuple[int, int, int]

#: The accepted range of every numeric field (documented in the module docstring).
LIMITS = {
    "arrival": Range(0, 1e9),
    "weight": Range(RESOLUTION, 1e6),
    "rounds": COUNT,
    "tasks_per_round": COUNT,
    "train_time": Range(RESOLUTION, 1e9),
    "sync_time": Range(0, 1e9),
}
_FIELDS = ("family", "name", "description", "gpus", "jobs")
_JOB_FIELDS = ("name", "arrival", "weight", "rounds", "tasks_per_round", "train_time", "sync_time")


@dataclass(frozen=True)
class HareJob:
    name: str
    arrival: float
    weight: float
    rounds: int
    tasks_per_round: int
    train_time: tuple[float, ...]
    sync_time: tuple[float, ...]


@dataclass(frozen=True)
class HareInstance(JobList):
    """|N| jobs of rounds of parallel tasks on |M| heterogeneous GPUs."""

    name: str
    gpus: tuple[str, ...]
    jobs: tuple[HareJob, ...]
    description: str = ""
    family: str = field(default="hare", init=False)

    def __post_init__(self) -> None:
        validate_hare(self, "<instance>")

    # --- sizes -----------------------------------------------------------------------------
    @property
    def num_gpus(self) -> int:
        return len(self.gpus)

    @property
    def num_tasks(self) -> int:
        return sum(j.rounds * j.tasks_per_round for j in self.jobs)

    @cached_property
    def tasks(self) -> tuple[Task, ...]:
        """Every task (n, r, k) in job, round, index order."""
        return tuple(
            (n, r, k)
            for n, j in enumerate(self.jobs)
            for r in range(j.rounds)
            for k in range(j.tasks_per_round)
        )

    @cached_property
    def tc(self) -> np.ndarray:
        """T^c[n, m], read-only."""
        a = np.array([j.train_time for j in self.jobs], dtype=float)
        a.setflags(write=False)
        return a

    @cached_property
    def ts(self) -> np.ndarray:
        """T^s[n, m], read-only."""
        a = np.array([j.sync_time for j in self.jobs], dtype=float)
        a.setflags(write=False)
        return a

    def horizon(self) -> float:
        """An upper bound on every start and completion time of some optimal schedule.

        In a semi-active schedule (no task can start earlier without changing the GPU
        sequences) every start is the end of a chain of distinct tasks, each contributing at
        most max_m (T^c + T^s), after an arrival; an optimal semi-active schedule exists.
        """
        per_task = (self.tc + self.ts).max(axis=1)
        work = sum(per_task[n] * j.rounds * j.tasks_per_round for n, j in enumerate(self.jobs))
        return float(max(j.arrival for j in self.jobs) + work)

    def alpha(self) -> float:
        """alpha of Lemma 3: max over tasks of T^c_max/T^c_min and T^s_max/T^s_min.

        A sync ratio with T^s_min = 0 < T^s_max is infinite; all-zero sync gives ratio 1
        (docs/errata.md, Seed 002).
        """
        best = 1.0
        for j in self.jobs:
            best = max(best, max(j.train_time) / min(j.train_time))
            smax, smin = max(j.sync_time), min(j.sync_time)
            if smax > 0:
                best = max(best, smax / smin if smin > 0 else float("inf"))
        return best


def is_single_task_case(instance: HareInstance) -> bool:
    """One round of one task per job and a common arrival: R || sum w_j C_j (with sync)."""
    jobs = instance.jobs
    return all(j.rounds == 1 and j.tasks_per_round == 1 for j in jobs) and all(
        j.arrival == jobs[0].arrival for j in jobs
    )


def validate_hare(inst: HareInstance, source: str) -> None:
    m = len(inst.gpus)
    if m == 0:
        raise InstanceError(source, "gpus", [], "at least one GPU is required")
    if not inst.jobs:
        raise InstanceError(source, "jobs", [], "at least one job is required")
    for i, name in enumerate(inst.gpus):
        if not isinstance(name, str) or not name:
            raise InstanceError(source, f"gpus[{i}]", name, "expected a non-empty string")
    if len(set(inst.gpus)) != m:
        dup = next(g for k, g in enumerate(inst.gpus) if g in inst.gpus[:k])
        raise InstanceError(source, "gpus", dup, "duplicate GPU name")
    tasks = 0
    for i, j in enumerate(inst.jobs):
        f = f"jobs[{i}]"
        check_number(j.arrival, source, f"{f}.arrival", LIMITS["arrival"])
        check_number(j.weight, source, f"{f}.weight", LIMITS["weight"])
        check_integer(j.rounds, source, f"{f}.rounds", LIMITS["rounds"])
        check_integer(j.tasks_per_round, source, f"{f}.tasks_per_round", LIMITS["tasks_per_round"])
        number_list(j.train_time, source, f"{f}.train_time", m, LIMITS["train_time"])
        number_list(j.sync_time, source, f"{f}.sync_time", m, LIMITS["sync_time"])
        tasks += j.rounds * j.tasks_per_round
        if tasks > MAX_COUNT:
            raise InstanceError(
                source,
                f"{f}.rounds",
                j.rounds,
                f"more than {MAX_COUNT:g} tasks in all (rounds x tasks_per_round, summed)",
            )
    unique_names([j.name for j in inst.jobs], source, "jobs")


def _times(r: Reader, key: str, gpus: tuple[str, ...]) -> tuple[float, ...]:
    raw = r.raw(key)
    field_name = r.field(key)
    if isinstance(raw, dict):  # keyed by GPU name (an accepted extension)
        check_keys(raw, gpus, r.source, field_name, "GPU")
        missing = [g for g in gpus if g not in raw]
        if missing:
            raise InstanceError(r.source, field_name, raw, f"no value for GPU '{missing[0]}'")
        raw = [raw[g] for g in gpus]
    return number_list(raw, r.source, field_name, len(gpus), LIMITS[key])


def hare_from_dict(data: Any, source: str) -> HareInstance:
    r = Reader(data, source, fields=_FIELDS)
    name = r.string("name")
    gpus = []
    for k, g in enumerate(r.array("gpus")):
        if isinstance(g, dict):  # {"name": ...} objects are accepted too
            g = r.child("gpus", g, k, fields=("name",)).string("name")
        if not isinstance(g, str) or not g:
            raise InstanceError(source, f"gpus[{k}]", g, "expected a non-empty string")
        gpus.append(g)
    gpus_t = tuple(gpus)
    jobs = []
    for i, j in enumerate(r.array("jobs")):
        jr = r.child("jobs", j, i, fields=_JOB_FIELDS)
        jobs.append(
            HareJob(
                name=jr.string("name"),
                arrival=jr.number("arrival", LIMITS["arrival"], 0.0),
                weight=jr.number("weight", LIMITS["weight"], 1.0),
                rounds=jr.integer("rounds", LIMITS["rounds"]),
                tasks_per_round=jr.integer("tasks_per_round", LIMITS["tasks_per_round"]),
                train_time=_times(jr, "train_time", gpus_t),
                sync_time=_times(jr, "sync_time", gpus_t),
            )
        )
    description = r.string("description", "", empty=True)
    return built(
        source, HareInstance, name=name, gpus=gpus_t, jobs=tuple(jobs), description=description
    )


def hare_to_dict(inst: HareInstance) -> dict[str, Any]:
    return {
        "family": "hare",
        "name": inst.name,
        "description": inst.description,
        "gpus": list(inst.gpus),
        "jobs": [
            {
                "name": j.name,
                "arrival": j.arrival,
                "weight": j.weight,
                "rounds": j.rounds,
                "tasks_per_round": j.tasks_per_round,
                "train_time": list(j.train_time),
                "sync_time": list(j.sync_time),
            }
            for j in inst.jobs
        ],
    }
