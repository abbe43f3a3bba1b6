"""Hypothesis strategies that build valid instances directly, and brute forces shared by
several test files."""

from __future__ import annotations

import itertools
import math

from hypothesis import strategies as st

from dlsched.models.hare.instance import HareInstance
from dlsched.models.placement.instance import PlacementInstance, PlacementJob, Worker


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
