"""Random Hare_Sched instances on the paper's four GPU types (Section 6 of the HPDC paper).

Every parameter is checked (name, type, range) before anything is drawn; a bad one raises
:class:`~dlsched.errors.OptionError` naming it. Limits: ``jobs`` x ``workers`` at most
:data:`MAX_CELLS`; ``rounds`` and ``tasks`` pairs ``[low, high]`` with 1 <= low <= high <=
:data:`MAX_COUNT`; ``arrival_span`` in [0, :data:`MAX_SPAN`]; ``decimals`` in [0, 6] (the exact
routes scale times by at most 10^6); ``seed`` in [0, 2^32).
"""

from __future__ import annotations

import math
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

#: Largest jobs x workers (the instance holds one training and one sync time per pair).
MAX_CELLS = 10**6
#: Largest number of rounds per job and of tasks per round.
MAX_COUNT = 10**6
#: Largest arrival span (time units; 1e9 seconds is three decades).
MAX_SPAN = 1e9
MAX_DECIMALS = 6
PARAMS = ("rounds", "tasks", "arrival_span", "decimals", "shape")
#: ``shape`` values: the paper's jobs, or R || sum w_j C_j as in the literature's benchmark sets.
SHAPES = ("hare", "unrelated")


def _integer(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OptionError(name, value, f"expected an integer in [{low}, {high}]")
    return value


def _pair(name: str, value: Any) -> tuple[int, int]:
    ok = isinstance(value, list | tuple) and len(value) == 2
    if not ok or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise OptionError(name, value, "expected a pair of integers [low, high], e.g. [1, 3]")
    low, high = value
    if not 1 <= low <= high <= MAX_COUNT:
        raise OptionError(name, value, f"expected 1 <= low <= high <= {MAX_COUNT}")
    return low, high


def _span(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionError("arrival_span", value, "expected a number")
    if not (math.isfinite(value) and 0 <= value <= MAX_SPAN):
        raise OptionError("arrival_span", value, f"expected a number in [0, {MAX_SPAN:g}]")
    return float(value)


def check_size(jobs: Any, workers: Any, seed: Any) -> None:
    """OptionError unless jobs, workers and seed are integers in range."""
    _integer("--jobs", jobs, 1, MAX_CELLS)
    _integer("--gpus", workers, 1, MAX_CELLS)
    _integer("--seed", seed, 0, 2**32 - 1)
    if jobs * workers > MAX_CELLS:
        raise OptionError("--jobs/--gpus", (jobs, workers), f"jobs x workers > {MAX_CELLS}")


def _job(n: int, rng: np.random.Generator, gpu_types: list[str], **p: Any) -> HareJob:
    base_c = float(rng.uniform(1.0, 5.0))
    base_s = float(rng.uniform(0.1, 1.0))
    d = p["decimals"]
    return HareJob(
        name=f"j{n}",
        arrival=round(float(rng.uniform(0, p["arrival_span"])), d),
        weight=float(rng.integers(1, 4)),
        rounds=int(rng.integers(p["rounds"][0], p["rounds"][1] + 1)),
        tasks_per_round=int(rng.integers(p["tasks"][0], p["tasks"][1] + 1)),
        train_time=tuple(round(base_c * GPU_TYPES[t][0], d) for t in gpu_types),
        sync_time=tuple(round(base_s * GPU_TYPES[t][1], d) for t in gpu_types),
    )


def generate(
    jobs: int,
    workers: int,
    seed: int = 0,
    *,
    rounds: tuple[int, int] = (1, 3),
    tasks: tuple[int, int] = (1, 3),
    arrival_span: float = 10.0,
    decimals: int = 1,
    shape: str = "hare",
    **unknown: Any,
) -> HareInstance:
    """Random instance: ``workers`` GPUs of the paper's four types, ``jobs`` jobs with random
    rounds, tasks per round, base times in [1, 5], sync in [0.1, 1]; times rounded to
    ``decimals`` (so CP-SAT's scaling stays small). Limits: see the module docstring.
    ``shape="unrelated"``: :func:`generate_unrelated` (the other parameters do not apply)."""
    if unknown and "trace" not in unknown:
        name = sorted(unknown)[0]
        raise OptionError(name, unknown[name], f"unknown parameter (known: {', '.join(PARAMS)})")
    if shape not in SHAPES:
        raise OptionError("shape", shape, f"expected one of {', '.join(SHAPES)}")
    check_size(jobs, workers, seed)
    if "trace" in unknown:  # a Gavel trace's jobs on ``workers`` GPUs (docs/traces.md)
        from dlsched.models.hare.online.traces import from_params

        return from_params(workers, unknown)
    if shape == "unrelated":
        return generate_unrelated(jobs, workers, seed)
    params = {
        "rounds": _pair("rounds", rounds),
        "tasks": _pair("tasks", tasks),
        "arrival_span": _span(arrival_span),
        "decimals": _integer("decimals", decimals, 0, MAX_DECIMALS),
    }
    rng = np.random.default_rng(seed)
    types = list(GPU_TYPES)
    gpu_types = [types[k % len(types)] for k in range(workers)]
    out = [_job(n, rng, gpu_types, **params) for n in range(jobs)]
    gpus = tuple(f"{t}-{k}" for k, t in enumerate(gpu_types))
    return HareInstance(name=f"random-{jobs}x{workers}-s{seed}", gpus=gpus, jobs=tuple(out))


def generate_unrelated(jobs: int, workers: int, seed: int = 0) -> HareInstance:
    """R || sum w_j C_j as in the published benchmark sets: one task per job, all released at
    0, no sync, training time of each (job, GPU) an integer drawn uniformly in [1, 30] and
    weight an integer in [1, 100], independently (unrelated GPUs)."""
    check_size(jobs, workers, seed)
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 31, size=(jobs, workers))
    w = rng.integers(1, 101, size=jobs)
    out = tuple(
        HareJob(f"j{n}", 0.0, float(w[n]), 1, 1, tuple(map(float, p[n])), (0.0,) * workers)
        for n in range(jobs)
    )
    gpus = tuple(f"g{k}" for k in range(workers))
    return HareInstance(name=f"unrelated-{workers}x{jobs}-s{seed}", gpus=gpus, jobs=out)
