"""Hypothesis strategies that build valid instances directly, and brute forces shared by
several test files."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st

from dlsched.models.hare.generate import GPU_TYPES
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.online.grouping import spread
from dlsched.models.placement.check import check_placement
from dlsched.models.placement.instance import PlacementInstance, PlacementJob, Worker
from dlsched.models.placement.solution import Placement


@st.composite
def placement_instances(draw, max_jobs: int = 3, max_workers: int = 6) -> PlacementInstance:
    s = draw(st.integers(1, max_jobs))
    k = draw(st.integers(s, max_workers))
    num_nodes = draw(st.integers(1, 3))
    kinds = draw(st.integers(1, 3))
    gpu = [draw(st.integers(0, kinds - 1)) for _ in range(k)]
    node = [draw(st.integers(0, num_nodes - 1)) for _ in range(k)]
    jobs = []
    rows = []
    for i in range(s):
        per_kind = [draw(st.integers(50, 2000)) for _ in range(kinds)]
        rows.append(tuple(float(per_kind[g]) for g in gpu))
        jobs.append(
            PlacementJob(
                name=f"j{i}",
                dataset_size=float(draw(st.integers(1_000, 100_000))),
                epochs=draw(st.integers(1, 200)),
                model_size_mb=float(draw(st.sampled_from([0, 5, 50, 500]))),
            )
        )
    intra = float(draw(st.sampled_from([10, 100, 300])))
    inter = float(draw(st.sampled_from([1, 10]))) if intra > 10 else 10.0
    return PlacementInstance(
        name="hyp",
        jobs=tuple(jobs),
        workers=tuple(Worker(f"w{k_}", f"g{gpu[k_]}", f"n{node[k_]}") for k_ in range(k)),
        throughput=tuple(rows),
        intra_node_gbps=intra,
        inter_node_gbps=inter,
    )


def hare_brute_force(inst: HareInstance) -> float:
    """Minimum over every task order (rounds in order) and every assignment of the semi-active
    list schedule; every semi-active schedule arises this way (sorted by start)."""
    tasks = inst.tasks
    best = math.inf
    for order in itertools.permutations(tasks):
        pos = {t: p for p, t in enumerate(order)}
        if any(
            pos[(n, r - 1, k2)] > pos[(n, r, k)]
            for (n, r, k) in tasks
            if r > 0
            for k2 in range(inst.jobs[n].tasks_per_round)
        ):
            continue
        for assign in itertools.product(range(inst.num_gpus), repeat=len(tasks)):
            a = dict(zip(tasks, assign, strict=True))
            phi = [0.0] * inst.num_gpus
            fin: dict[tuple[int, int], float] = {}
            comp = [0.0] * inst.num_jobs
            for t in order:
                n, r, _ = t
                j = inst.jobs[n]
                g = a[t]
                ready = j.arrival if r == 0 else fin[(n, r - 1)]
                s = max(ready, phi[g])
                phi[g] = s + j.train_time[g]
                f = phi[g] + j.sync_time[g]
                fin[(n, r)] = max(fin.get((n, r), f), f)
                comp[n] = max(comp[n], f)
            best = min(best, sum(j.weight * c for j, c in zip(inst.jobs, comp, strict=True)))
    return best


def placement_brute_force(inst) -> float:
    """Independent optimum: the checker on every assignment of workers to jobs."""
    best = math.inf
    for a in itertools.product(range(inst.num_jobs), repeat=inst.num_workers):
        if len(set(a)) == inst.num_jobs:
            best = min(best, check_placement(inst, Placement(a)).avg_jct)
    return best


@st.composite
def tiny_instances(draw, max_tasks: int = 4, max_gpus: int = 2):
    gpus = draw(st.integers(1, max_gpus))
    jobs = []
    budget = max_tasks
    for n in range(draw(st.integers(1, 2))):
        rounds = draw(st.integers(1, 2))
        tasks = draw(st.integers(1, 2))
        if rounds * tasks > budget:
            break
        budget -= rounds * tasks
        half = st.integers(1, 8).map(lambda v: v / 2)
        jobs.append(
            HareJob(
                name=f"j{n}",
                arrival=draw(st.integers(0, 3)) / 2,
                weight=draw(st.integers(1, 3)),
                rounds=rounds,
                tasks_per_round=tasks,
                train_time=tuple(draw(half) for _ in range(gpus)),
                sync_time=tuple(draw(st.integers(0, 2)) / 2 for _ in range(gpus)),
            )
        )
    if not jobs:
        jobs.append(HareJob("j0", 0.0, 1.0, 1, 1, (1.0,) * gpus, (0.0,) * gpus))
    return HareInstance(name="hyp", gpus=tuple(f"g{k}" for k in range(gpus)), jobs=tuple(jobs))


@st.composite
def small_jobs(draw, max_tasks: int = 5):
    """3-4 jobs of at most 5 tasks in all on 1-2 GPUs: blocks of one job each (block_tasks=1),
    so runs of two or three blocks are segments with parts inside."""
    gpus = draw(st.integers(1, 2))
    sizes = draw(st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 1, 1), (1, 1, 1, 1)]))
    jobs = []
    for n, tasks in enumerate(sizes[:max_tasks]):
        jobs.append(
            HareJob(
                f"j{n}",
                draw(st.integers(0, 3)) / 2,
                draw(st.integers(1, 3)),
                1,
                tasks,
                tuple(draw(st.integers(1, 6)) / 2 for _ in range(gpus)),
                tuple(draw(st.integers(0, 2)) / 2 for _ in range(gpus)),
            )
        )
    return HareInstance("small", tuple(f"g{m}" for m in range(gpus)), tuple(jobs))


def mixed(counts, jobs=3, seed=0):
    """One GPU type per count (the paper's four types), ``jobs`` random job profiles."""
    rng = np.random.default_rng(seed)
    types = [t for t, c in zip(GPU_TYPES, counts, strict=False) for _ in range(c)]
    js = []
    for n in range(jobs):
        bc, bs = rng.uniform(1, 5), rng.uniform(0.1, 1)
        js.append(
            HareJob(
                f"j{n}",
                0.0,
                1.0,
                1,
                1,
                tuple(round(bc * GPU_TYPES[t][0], 1) for t in types),
                tuple(round(bs * GPU_TYPES[t][1], 1) for t in types),
            )
        )
    return HareInstance("mixed", tuple(f"{t}-{k}" for k, t in enumerate(types)), tuple(js))


def partitions(items, k):
    """Every partition of ``items`` into exactly k non-empty groups."""
    if k == 1:
        yield (tuple(items),)
        return
    if len(items) < k:
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest, k - 1):
        yield ((first,), *p)
    for p in partitions(rest, k):
        for i in range(len(p)):
            yield (*p[:i], (first, *p[i]), *p[i + 1 :])


def brute_force_spread(s, k):
    return min(spread(s, p) for p in partitions(list(range(s.shape[1])), k))
