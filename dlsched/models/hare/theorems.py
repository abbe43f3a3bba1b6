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
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from dlsched.models import MethodOptions
from dlsched.models.hare.guarantees import (
    Theorem4Record,
    random_small_instance,
    theorem4_guarantee,
    theorem4_record,
)
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.online.methods import ONLINE_POLICIES
from dlsched.solvers import SolveOptions
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


def small(seed: int, jobs: int | None = None, gpus: int | None = None) -> HareInstance:
    """At most ``jobs`` jobs on at most ``gpus`` GPUs and 2 jobs' worth of tasks more than
    jobs (times on a 0.5 grid): :func:`~dlsched.models.hare.guarantees.random_small_instance`."""
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
    """:func:`~dlsched.models.hare.guarantees.theorem4_record` as rows: the certified optimum
    (the whole record in its details), RL over the optimum (<= 1: a relaxation), and each method
    over the optimum against the theorem's bound (alpha(2 + alpha))."""
    t0 = time.perf_counter()
    rec = theorem4_record(inst, options.solve.limited(options.time_limit), theorem.methods)
    wall = time.perf_counter() - t0
    kind = "optimum" if rec.optimum is not None else "none"
    notes = "; ".join(rec.violations)
    bound = theorem.bound(inst) if theorem.bound is not None else None  # alpha(2 + alpha)
    record = {"record": rec.to_json()}
    rows = [
        Measurement(theorem.reference, rec.optimum, rec.optimum, kind, None, None,
                    rec.optimum_status, wall_time=wall, note=notes, details=record),
        Measurement("relaxation", rec.relaxation, rec.optimum, kind, rec.relaxation_ratio, 1.0,
                    "bound"),
    ]  # fmt: skip
    for m in theorem.methods:
        rows.append(
            Measurement(
                m,
                rec.algorithm.get(m),
                rec.optimum,
                kind,
                rec.ratio.get(m),
                bound,
                details={"alpha": rec.alpha, "ratio_to_relaxation": rec.ratio_to_relaxation.get(m)},
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
) -> tuple[list[Theorem4Record], list[Path]]:
    """Theorem 4 (``002-thm4``) over ``count`` random small instances
    (instance k drawn by :func:`random_small_instance` with seed ``seed + k`` and ``size``),
    run by the core's verify runner in this process: one JSON line per comparison in
    ``directory/verify.jsonl`` (resumable), every violation saved under
    ``directory/counterexamples`` and shrunk. Returns each instance's record and the saved
    files (instances, then minimal counterexamples). Without a directory the run goes to a
    temporary folder and nothing is kept."""
    import tempfile

    from dlsched.verify.runner import VerifyOptions, read_log, run

    unknown = sorted(set(size) - {"max_gpus", "max_jobs", "max_tasks"})
    if unknown:
        raise TypeError(f"sweep() got an unexpected keyword argument {unknown[0]!r}")

    def draw(s: int, jobs: int | None = None, gpus: int | None = None) -> HareInstance:
        rng = np.random.default_rng(s)
        g, j, t = (size.get(k, d) for k, d in (("max_gpus", 2), ("max_jobs", 2), ("max_tasks", 4)))
        return random_small_instance(rng, max_gpus=g, max_jobs=j, max_tasks=t)

    base = next(t for t in THEOREMS if t.id == "002-thm4")
    theorem = dataclasses.replace(base, methods=tuple(methods), generate=draw)
    so = solve_options or SolveOptions()
    opts = VerifyOptions(count=count, first_seed=seed, solve=so, processes=0, progress=False)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(directory) if directory is not None else Path(scratch)
        run([theorem], folder, opts)
        wanted = {f"002-thm4-s{seed + k}" for k in range(count)}
        records = [
            Theorem4Record(**{**r["details"]["record"], "violations": tuple(
                r["details"]["record"]["violations"])})
            for r in read_log(folder / "verify.jsonl")
            if r["method"] == theorem.reference and r["instance"] in wanted
            and r["time_limit"] == so.time_limit and r["seed"] == so.seed
        ]  # fmt: skip
        saved = sorted((folder / "counterexamples").glob("*.json")) if directory else []
    return records, saved


__all__ = ["THEOREMS", "lemma2_measure", "shrink", "sweep"]
