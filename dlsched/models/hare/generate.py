"""Random Hare_Sched instances on the paper's four GPU types (Section 6 of the HPDC paper)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.hare.instance import HareInstance, HareJob

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
