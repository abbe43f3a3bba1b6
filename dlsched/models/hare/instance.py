"""Instances of the hare family: offline task scheduling on heterogeneous GPUs (Hare_Sched).

Chen, Chen, Li, Guo, Zhang, Li, Sun, Guo. *Hare: Exploiting Inter-job and Intra-job Parallelism
of Distributed Machine Learning on Heterogeneous GPUs*. HPDC 2022, Section 5.

Job n arrives at ``arrival`` (a_n), has weight ``weight`` (w_n), ``rounds`` training rounds
(|R_n|) of ``tasks_per_round`` parallel tasks (|D_r|). One task of job n takes
``train_time[m]`` (T^c_{n,m}) to train and ``sync_time[m]`` (T^s_{n,m}) to synchronize on GPU m
(lists aligned with ``gpus``). Times are in any consistent unit (seconds in the paper).

A task is identified by ``(n, r, k)``: job index, round index (0-based), index within the round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dlsched.errors import InstanceError
from dlsched.instances.validate import Reader, check_integer, check_number, unique_names

Task = tuple[int, int, int]


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
class HareInstance:
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
    def num_jobs(self) -> int:
        return len(self.jobs)

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
    for i, j in enumerate(inst.jobs):
        f = f"jobs[{i}]"
        check_number(j.arrival, source, f"{f}.arrival", nonnegative=True)
        check_number(j.weight, source, f"{f}.weight", positive=True)
        check_integer(j.rounds, source, f"{f}.rounds", minimum=1)
        check_integer(j.tasks_per_round, source, f"{f}.tasks_per_round", minimum=1)
        for key, values, positive in (
            ("train_time", j.train_time, True),
            ("sync_time", j.sync_time, False),
        ):
            if len(values) != m:
                raise InstanceError(
                    source,
                    f"{f}.{key}",
                    list(values),
                    f"expected {m} entries (one per GPU), got {len(values)}",
                )
            for k, v in enumerate(values):
                check_number(
                    v, source, f"{f}.{key}[{k}]", positive=positive, nonnegative=not positive
                )
    unique_names([j.name for j in inst.jobs], source, "jobs")


def _times(r: Reader, key: str, gpus: tuple[str, ...], positive: bool) -> tuple[float, ...]:
    raw = r.raw(key)
    field_name = r._field(key)
    if isinstance(raw, dict):  # keyed by GPU name (an accepted extension)
        missing = [g for g in gpus if g not in raw]
        if missing:
            raise InstanceError(r.source, field_name, raw, f"no value for GPU '{missing[0]}'")
        raw = [raw[g] for g in gpus]
    if not isinstance(raw, list):
        raise InstanceError(r.source, field_name, raw, "expected a JSON array of numbers")
    if len(raw) != len(gpus):
        raise InstanceError(
            r.source,
            field_name,
            raw,
            f"expected {len(gpus)} entries (one per GPU), got {len(raw)}",
        )
    return tuple(
        check_number(v, r.source, f"{field_name}[{k}]", positive=positive, nonnegative=not positive)
        for k, v in enumerate(raw)
    )


def hare_from_dict(data: Any, source: str) -> HareInstance:
    r = Reader(data, source)
    name = r.string("name")
    gpus_raw = r.array("gpus")
    gpus = []
    for k, g in enumerate(gpus_raw):
        if isinstance(g, dict):  # {"name": ...} objects are accepted too
            g = r.child("gpus", g, k).string("name")
        if not isinstance(g, str) or not g:
            raise InstanceError(source, f"gpus[{k}]", g, "expected a non-empty string")
        gpus.append(g)
    gpus_t = tuple(gpus)
    jobs = []
    for i, j in enumerate(r.array("jobs")):
        jr = r.child("jobs", j, i)
        jobs.append(
            HareJob(
                name=jr.string("name"),
                arrival=jr.number("arrival", 0.0, nonnegative=True),
                weight=jr.number("weight", 1.0, positive=True),
                rounds=jr.integer("rounds", minimum=1),
                tasks_per_round=jr.integer("tasks_per_round", minimum=1),
                train_time=_times(jr, "train_time", gpus_t, positive=True),
                sync_time=_times(jr, "sync_time", gpus_t, positive=False),
            )
        )
    try:
        return HareInstance(
            name=name, gpus=gpus_t, jobs=tuple(jobs), description=str(r.raw("description", ""))
        )
    except InstanceError as e:
        raise InstanceError(source, e.field, e.value, e.reason) from None


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
