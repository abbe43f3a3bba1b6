"""Theorem 4 of Hare (Chen et al., HPDC 2022, Section 5.3), checked instance by instance.

Theorem 4 states that Algorithm 1 is an alpha(2 + alpha)-approximation for Hare_Sched, with
alpha = max_i max(T^c_max / T^c_min, T^s_max / T^s_min) (Lemma 3). For an instance we report
alpha, the guarantee, the certified optimum (CP-SAT), Algorithm 1's objective and its ratio to
the optimum, and the relaxation's value and its ratio to the optimum (<= 1 since RL relaxes
Hare_Sched). The proof goes through H_i <= the relaxation, so the ratio of Algorithm 1 to the
relaxation is reported too (``ratio_to_relaxation``): exceeding the guarantee there contradicts
the proof's chain (22) without contradicting the theorem.

The sweep over random instances is the core's (``dlsched verify``, :mod:`dlsched.verify`), and
the theorem itself (its guarantee in ``dlsched compare``, its record in ``dlsched verify``, the
sweep) is defined once, in :mod:`.theorems`: this module keeps what is particular to measuring
it (the guarantee's formula, the per-instance record, the instance generator). Any instance on
which a stated bound fails is written as a JSON counterexample (instance and record) and
reported; nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dlsched import bounds
from dlsched.bounds import SLACK
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.result import json_safe
from dlsched.solvers import SolveOptions, Status


def theorem4_guarantee(instance: HareInstance) -> float:
    """Theorem 4: Algorithm 1 is an alpha(2 + alpha)-approximation."""
    a = instance.alpha()
    return a * (2 + a)


@dataclass(frozen=True)
class Theorem4Record:
    instance: str
    num_tasks: int
    num_gpus: int
    alpha: float
    guarantee: float  # alpha (2 + alpha)
    optimum: float | None
    optimum_status: str
    relaxation: float | None  # certified lower bound from RL
    relaxation_ratio: float | None  # RL / OPT, must be <= 1
    algorithm: dict[str, float] = field(default_factory=dict)  # method -> objective
    ratio: dict[str, float] = field(default_factory=dict)  # method -> ALG / OPT
    ratio_to_relaxation: dict[str, float] = field(default_factory=dict)  # ALG / RL
    violations: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = json_safe(asdict(self))
        return out


def theorem4_record(
    instance: HareInstance,
    solve_options: SolveOptions | None = None,
    methods: Sequence[str] = ("hare",),
) -> Theorem4Record:
    """Solve exactly, solve RL, run Algorithm 1 (and variants); compare with the theorem."""
    so = solve_options or SolveOptions()
    opts = MethodOptions(solve=so.settings, time_limit=so.time_limit)
    # CP-SAT alone: on the few tasks a theorem is checked on it proves the optimum in
    # milliseconds, where the time-indexed LP bound takes tenths of a second
    exact = run_method(instance, "exact-cpsat", replace(opts, params={"lp": False}))
    rel = run_method(instance, "relaxation", opts)
    alpha = instance.alpha()
    guarantee = theorem4_guarantee(instance)
    opt = exact.objective if exact.status == Status.OPTIMAL else None
    lb = rel.bound
    violations = []
    rr = None
    if opt is not None and lb is not None:
        rr = lb / opt
        if rr > 1 + SLACK:
            violations.append(f"relaxation {lb} exceeds the optimum {opt}")
    algo, ratio, ratio_rl = {}, {}, {}
    for name in methods:
        out = run_method(instance, name, opts)
        assert out.objective is not None
        algo[name] = out.objective
        if opt is not None:
            ratio[name] = out.objective / opt
            if ratio[name] < 1 - SLACK:
                violations.append(f"{name} {out.objective} beats the certified optimum {opt}")
            if ratio[name] > guarantee * (1 + SLACK):
                violations.append(
                    f"Theorem 4: {name}/OPT = {ratio[name]:.4f} > alpha(2+alpha) = {guarantee:.4f}"
                )
        if lb is not None and lb > 0:
            ratio_rl[name] = out.objective / lb
    return Theorem4Record(
        instance=instance.name,
        num_tasks=instance.num_tasks,
        num_gpus=instance.num_gpus,
        alpha=alpha,
        guarantee=guarantee,
        optimum=opt,
        optimum_status=str(exact.status),
        relaxation=lb,
        relaxation_ratio=rr,
        algorithm=algo,
        ratio=ratio,
        ratio_to_relaxation=ratio_rl,
        violations=tuple(violations),
    )


def save_counterexample(instance: HareInstance, record: Theorem4Record, directory: Path) -> Path:
    """The core's counterexample file, as ``directory/counterexample-<instance name>.json``."""
    return bounds.save_counterexample(
        instance, record.to_json(), directory, stem=f"counterexample-{instance.name}"
    )


def random_small_instance(
    rng: np.random.Generator,
    *,
    max_gpus: int = 2,
    max_jobs: int = 2,
    max_tasks: int = 4,
    name: str = "rand",
) -> HareInstance:
    """A random instance with at most ``max_tasks`` tasks (times on a 0.5 grid); sync times are
    positive, or zero on every GPU for a job, so that alpha is finite."""
    gpus = int(rng.integers(1, max_gpus + 1))
    jobs = []
    budget = max_tasks
    for n in range(int(rng.integers(1, max_jobs + 1))):
        if budget <= 0:
            break
        rounds = int(rng.integers(1, min(2, budget) + 1))
        tasks = int(rng.integers(1, max(1, budget // rounds) + 1))
        budget -= rounds * tasks
        no_sync = bool(rng.random() < 0.2)  # all-zero sync keeps alpha finite
        jobs.append(
            HareJob(
                name=f"j{n}",
                arrival=float(rng.integers(0, 4)) / 2,
                weight=float(rng.integers(1, 4)),
                rounds=rounds,
                tasks_per_round=tasks,
                train_time=tuple(float(rng.integers(1, 9)) / 2 for _ in range(gpus)),
                sync_time=tuple(
                    0.0 if no_sync else float(rng.integers(1, 4)) / 2 for _ in range(gpus)
                ),
            )
        )
    return HareInstance(name=name, gpus=tuple(f"g{k}" for k in range(gpus)), jobs=tuple(jobs))
