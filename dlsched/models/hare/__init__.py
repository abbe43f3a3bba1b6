"""Hare_Sched: offline task scheduling of DL jobs on heterogeneous GPUs (seed 002).

Chen et al., *Hare: Exploiting Inter-job and Intra-job Parallelism of Distributed Machine
Learning on Heterogeneous GPUs*, HPDC 2022, Section 5.

>>> from dlsched.instances import load
>>> from dlsched.models import run_method
>>> out = run_method(load("hare/toy-2gpu"), "exact")
>>> str(out.status), out.objective
('optimal', 13.5)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dlsched.instances.hare import HareInstance, HareJob
from dlsched.models import Method

from .methods import (
    _baseline,
    _hare,
    run_exact,
    run_exact_cpsat,
    run_exact_milp,
    run_greedy,
    run_relaxation,
    run_relaxation_strong,
)

_HARE_PARAMS = ("h", "gpu_rule", "relaxation", "backend", "random_ties")

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "exact",
            run_exact,
            "certified optimum of Hare_Sched (4)-(8); backend=auto|cpsat|milp|special",
            exact=True,
            params=("backend", "hint", "transformation", "pooled", "subsets"),
        ),
        Method(
            "exact-cpsat",
            run_exact_cpsat,
            "native CP-SAT: optional intervals, a cumulative per class of identical GPUs "
            "(pooled=false: a NoOverlap per GPU), time-indexed LP and job-subset bounds",
            exact=True,
            params=("hint", "pooled", "subsets"),
        ),
        Method(
            "exact-milp",
            run_exact_milp,
            "pyomo.gdp disjunctive model, big-M, HiGHS",
            exact=True,
            params=("transformation",),
        ),
        Method(
            "relaxation",
            run_relaxation,
            "Hare_Sched_RL (9): lower bound (no schedule)",
            params=("backend",),
        ),
        Method(
            "relaxation-strong",
            run_relaxation_strong,
            "RL + Queyranne subset inequalities (separated): lower bound",
            params=("max_rounds",),
        ),
        Method(
            "hare",
            _hare("max", "earliest-available", "hare"),
            "Algorithm 1 as written (H max over all GPUs, earliest-available GPU)",
            params=_HARE_PARAMS,
        ),
        Method(
            "hare-assigned",
            _hare("assigned", "earliest-available", "hare-assigned"),
            "Algorithm 1 variant: H_i on the GPU the relaxation assigned",
            params=_HARE_PARAMS,
        ),
        Method(
            "hare-eft",
            _hare("max", "earliest-finish", "hare-eft"),
            "Algorithm 1 variant: earliest-finish GPU instead of earliest-available",
            params=_HARE_PARAMS,
        ),
        Method(
            "hare-strong",
            _hare("max", "earliest-available", "hare-strong", "strong"),
            "Algorithm 1 variant: x^ from RL + Queyranne subset inequalities",
            params=_HARE_PARAMS,
        ),
        Method("gavel-fifo", _baseline("gavel-fifo"), "FIFO gang scheduling on fastest idle GPUs"),
        Method("srtf", _baseline("srtf"), "shortest remaining time first (gang, non-preemptive)"),
        Method(
            "sched-homo",
            _baseline("sched-homo"),
            "heterogeneity-oblivious Smith's rule, gang, job-level non-preemptive",
        ),
        Method(
            "sched-allox",
            _baseline("sched-allox"),
            "AlloX min-cost matching, one GPU per job (no intra-job parallelism)",
        ),
        Method("greedy", run_greedy, "list schedule by arrival and round, earliest-finish GPU"),
    )
}


GPU_TYPES = {  # relative (training, sync) time factors of the paper's four GPU types
    "V100": (1.0, 1.0),
    "T4": (1.9, 1.3),
    "K80": (3.4, 1.6),
    "M60": (2.6, 1.5),
}


def generate(
    jobs: int,
    workers: int,
    seed: int = 0,
    *,
    rounds: tuple[int, int] = (1, 3),
    tasks: tuple[int, int] = (1, 3),
    arrival_span: float = 10.0,
    decimals: int = 1,
    **_: Any,
) -> HareInstance:
    """Random instance: ``workers`` GPUs of the paper's four types, ``jobs`` jobs with random
    rounds, tasks per round, base times in [1, 5], sync in [0.1, 1]; times rounded to
    ``decimals`` (so CP-SAT's scaling stays small)."""
    if jobs < 1 or workers < 1:
        from dlsched.errors import OptionError

        raise OptionError("--jobs/--workers", (jobs, workers), "must be at least 1")
    rng = np.random.default_rng(seed)
    types = list(GPU_TYPES)
    gpu_types = [types[k % len(types)] for k in range(workers)]
    out = []
    for n in range(jobs):
        base_c = float(rng.uniform(1.0, 5.0))
        base_s = float(rng.uniform(0.1, 1.0))
        out.append(
            HareJob(
                name=f"j{n}",
                arrival=round(float(rng.uniform(0, arrival_span)), decimals),
                weight=float(rng.integers(1, 4)),
                rounds=int(rng.integers(rounds[0], rounds[1] + 1)),
                tasks_per_round=int(rng.integers(tasks[0], tasks[1] + 1)),
                train_time=tuple(round(base_c * GPU_TYPES[t][0], decimals) for t in gpu_types),
                sync_time=tuple(round(base_s * GPU_TYPES[t][1], decimals) for t in gpu_types),
            )
        )
    gpus = tuple(f"{t}-{k}" for k, t in enumerate(gpu_types))
    return HareInstance(name=f"random-{jobs}x{workers}-s{seed}", gpus=gpus, jobs=tuple(out))


def plot(instance: HareInstance, outcome: Any, path: Path | str) -> Path:
    """Gantt chart of an outcome's schedule saved to ``path``."""
    from .gantt import save_gantt

    return save_gantt(instance, outcome, Path(path))


__all__ = ["METHODS", "generate", "plot"]
