"""The claims of seeds 002 (Hare, HPDC 2022) and 004 (Hare online, IEEE TCC 2024) as
:class:`~dlsched.verify.Theorem` records, checked by ``dlsched verify``.

- 002-thm4: Algorithm 1 (``hare``) is an alpha(2 + alpha)-approximation (Theorem 4), measured
  against the certified optimum (``exact``). It fails as printed (E002-8,
  ``hare/theorem4-counterexample``).
- 002-lemma2: Lemma 2, (10): on every GPU m, the training time of Algorithm 1's tasks on m up to
  and including pi(j) is at most 2 H_{pi(j)}; the ratio is the largest prefix / (2 H) (<= 1).
- 004-online: the online policies (HLAS, HLAS-P, FIFO, 2D-LAS, ...) against the certified offline
  optimum. The paper proves no competitive ratio: the worst ratio is reported.

002-thm4 is also Algorithm 1's guarantee in ``dlsched compare``; :func:`sweep` runs it over
random small instances on the core's runner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.guarantees import theorem4_guarantee
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.online.methods import ONLINE_POLICIES
from dlsched.solvers import SolveOptions, Status
from dlsched.verify.theorem import (
    Measurement,
    Paper,
    Theorem,
    at_most_one,
    drop_each,
    timed,
    valid,
)

PAPER_002 = "seed 002: Chen, Li, Wu, Guo, Hare, HPDC 2022"
PAPER_004 = "seed 004: Chen, Li, Wu, Guo, Non-Clairvoyant Scheduling (Hare online), IEEE TCC 2024"


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


def small(seed: int, jobs: int | None = None, gpus: int | None = None) -> HareInstance:
    """At most ``jobs`` jobs on at most ``gpus`` GPUs and 2 jobs' worth of tasks more than
    jobs (times on a 0.5 grid): :func:`random_small_instance`."""
    j, g = jobs or 3, gpus or 2
    rng = np.random.default_rng(seed)
    return random_small_instance(rng, max_gpus=g, max_jobs=j, max_tasks=j + 2)


def online(seed: int, jobs: int | None = None, gpus: int | None = None) -> HareInstance:
    """Seed 004's setting on small instances: the paper's GPU types (high heterogeneity), load 1
    (:func:`~dlsched.models.hare.online.ratios.ratio_instance`)."""
    from dlsched.models.hare.online.ratios import ratio_instance

    return ratio_instance(jobs or 3, gpus or 2, seed, load=1.0, heterogeneity="high")


def finite_alpha(inst: HareInstance) -> str | None:
    a = inst.alpha()
    return None if np.isfinite(a) else "alpha is infinite (a sync time 0 on some GPUs only)"


# --- Theorem 4 --------------------------------------------------------------------------------


def theorem4_measure(
    theorem: Theorem, inst: HareInstance, options: MethodOptions
) -> list[Measurement]:
    """The certified optimum (CP-SAT alone: on the few tasks a theorem is checked on it proves
    the optimum in milliseconds, where the time-indexed LP bound takes tenths of a second), RL
    over it (<= 1: RL relaxes Hare_Sched) and each method over it against the theorem's bound
    alpha(2 + alpha). The proof goes through H_i <= RL, so each method's ratio to RL is in its
    details too: exceeding the bound there contradicts the proof's chain (22), not the theorem."""
    exact = run_method(inst, theorem.reference, dataclasses.replace(options, params={"lp": False}))
    rel = run_method(inst, "relaxation", options)
    opt = exact.objective if exact.status == Status.OPTIMAL else None
    kind = "optimum" if opt is not None else "none"
    lb = rel.bound

    def over(value: float | None, by: float | None) -> float | None:
        return None if value is None or by is None else value / by

    bound = theorem.bound(inst) if theorem.bound is not None else None  # alpha(2 + alpha)
    rows = [
        Measurement(theorem.reference, opt, opt, kind, None, None, str(exact.status),
                    wall_time=exact.wall_time),
        Measurement("relaxation", lb, opt, kind, over(lb, opt), 1.0, "bound",
                    wall_time=rel.wall_time),
    ]  # fmt: skip
    for m in theorem.methods:
        out = run_method(inst, m, options)
        to_rl = over(out.objective, lb) if lb is not None and lb > 0 else None
        rows.append(
            Measurement(
                m,
                out.objective,
                opt,
                kind,
                over(out.objective, opt),
                bound,
                wall_time=out.wall_time,
                details={"alpha": inst.alpha(), "ratio_to_relaxation": to_rl},
            )  # fmt: skip
        )
    return rows


# --- Lemma 2 ----------------------------------------------------------------------------------


def lemma2_measure(
    theorem: Theorem, inst: HareInstance, options: MethodOptions
) -> list[Measurement]:
    """(10) on every task: the prefix of Algorithm 1's training time on the task's GPU over
    2 H of the task, H from RL's optimum (the relaxation ``hare`` rounds)."""
    from dlsched.models.hare.relaxation import solve_relaxation
    from dlsched.models.hare.rounding import list_schedule, middle_completion, priority_order
    from dlsched.solvers import Status

    def measure() -> Measurement:
        rel = solve_relaxation(inst, options.solve, deadline=options.started().deadline)
        if rel.status != Status.OPTIMAL:
            return Measurement("hare", None, None, "none", None, 1.0, str(rel.status),
                               note="RL not solved to optimality")  # fmt: skip
        h = middle_completion(inst, rel.x, rel.y, "max")
        order = priority_order(inst, h)
        placed = list_schedule(inst, order).as_dict()
        prefix = [0.0] * inst.num_gpus
        worst, at = 0.0, None
        for task in order:  # pi(1), pi(2), ...
            g = placed[task][0]
            prefix[g] += inst.jobs[task[0]].train_time[g]
            if prefix[g] / (2 * h[task]) > worst:
                worst, at = prefix[g] / (2 * h[task]), task
        assert at is not None
        job = inst.jobs[at[0]]
        where = f"{job.name}/r{at[1]}/k{at[2]}"
        return Measurement(
            "hare", worst * 2 * h[at], 2 * h[at], "exact", worst, 1.0, "optimal",
            note=f"tightest task {where}", details={"task": where, "H": h[at]},
        )  # fmt: skip

    return [timed(measure)]


# --- shrinking --------------------------------------------------------------------------------


def _without_gpu(inst: HareInstance, g: int) -> HareInstance:
    jobs = tuple(
        dataclasses.replace(
            j,
            train_time=j.train_time[:g] + j.train_time[g + 1 :],
            sync_time=j.sync_time[:g] + j.sync_time[g + 1 :],
        )
        for j in inst.jobs
    )
    return dataclasses.replace(inst, gpus=inst.gpus[:g] + inst.gpus[g + 1 :], jobs=jobs)


def _smaller_jobs(inst: HareInstance) -> Iterator[HareInstance]:
    for n, j in enumerate(inst.jobs):
        fewer = []
        if j.rounds > 1:
            fewer.append(dataclasses.replace(j, rounds=j.rounds - 1))
        if j.tasks_per_round > 1:
            fewer.append(dataclasses.replace(j, tasks_per_round=j.tasks_per_round - 1))
        for smaller in fewer:
            yield dataclasses.replace(inst, jobs=(*inst.jobs[:n], smaller, *inst.jobs[n + 1 :]))


def shrink(inst: HareInstance) -> Iterator[HareInstance]:
    """Candidates one step smaller: a job removed, a GPU removed, a round or a task fewer."""
    yield from drop_each(inst, "jobs")
    if inst.num_gpus > 1:
        yield from (_without_gpu(inst, g) for g in range(inst.num_gpus))
    yield from _smaller_jobs(inst)


def shrink_valid(inst: HareInstance) -> Iterator[HareInstance]:
    return (c for c in shrink(inst) if valid(c))


SEED_002 = Paper(PAPER_002, "hare", small, {"jobs": 3, "gpus": 2}, shrink_valid)

THEOREMS: list[Theorem] = [
    SEED_002.theorem(
        "002-thm4",
        "Theorem 4. Algorithm 1 is alpha(2 + alpha)-approximation.",
        ["hare"],
        "exact-cpsat",
        "Algorithm 1 / optimum",
        guarantee="Theorem 4: alpha(2+alpha)",
        bound=theorem4_guarantee,
        assumptions=finite_alpha,
        measure=theorem4_measure,
    ),
    SEED_002.theorem(
        "002-lemma2",
        "Lemma 2. For any task pi(j) in pi on GPU m, we have: "
        "sum_{k=1}^{j} y~_{pi(k),m} T^c_{pi(k),m} <= 2 H_{pi(j)}. (10)",
        ["hare"],
        "2 H of RL's optimum",
        "max over tasks of prefix / (2 H)",
        bound=at_most_one,  # (10) divided by its right-hand side
        measure=lemma2_measure,
    ),
    SEED_002.theorem(
        "004-online",
        "HLAS 'can efficiently schedule DML jobs without prior knowledge about job sizes and "
        "arrival time' and 'always outperforms others' (online simulations); no competitive "
        "ratio is proved.",
        ONLINE_POLICIES,
        "exact",
        "online policy / offline optimum",
        paper=PAPER_004,
        generate=online,
    ),
]


# --- Theorem 4 over random instances, on the core's runner -----------------------------------


def sweep(
    count: int,
    seed: int = 0,
    *,
    directory: Path | None = None,
    methods: Sequence[str] = ("hare",),
    solve_options: SolveOptions | None = None,
    **size: int,
) -> tuple[list[dict[str, Any]], list[Path]]:
    """Theorem 4 (``002-thm4``) over ``count`` random small instances (instance k drawn by
    :func:`random_small_instance` with seed ``seed + k`` and ``size``), by the core's
    :func:`dlsched.verify.check.sample`: one JSON line per row in ``directory/verify.jsonl``
    (resumable), every violation saved under ``directory/counterexamples`` and shrunk. Returns
    the rows (the optimum's, RL's and each method's per instance) and the saved files
    (instances, then minimal counterexamples)."""
    from dlsched.verify.check import sample

    unknown = sorted(set(size) - {"max_gpus", "max_jobs", "max_tasks"})
    if unknown:
        raise TypeError(f"sweep() got an unexpected keyword argument {unknown[0]!r}")

    def draw(s: int, jobs: int | None = None, gpus: int | None = None) -> HareInstance:
        rng = np.random.default_rng(s)
        g, j, t = (size.get(k, d) for k, d in (("max_gpus", 2), ("max_jobs", 2), ("max_tasks", 4)))
        return random_small_instance(rng, max_gpus=g, max_jobs=j, max_tasks=t)

    return sample(
        "002-thm4", count, seed, generate=draw, methods=methods, directory=directory,
        solve=solve_options, shrink=3,
    )  # fmt: skip


__all__ = ["THEOREMS", "lemma2_measure", "random_small_instance", "shrink", "sweep"]
