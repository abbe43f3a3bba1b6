"""The rules the package declares (the same as examples/rules.py's, so that a test compares the
rows of the entry points with those of the same functions named by file)."""

from __future__ import annotations

from typing import Any

import dlsched


def hare_all_on_gpu0(instance: Any) -> dict[str, Any]:
    """hare: every task on GPU 0, jobs in order of arrival, one task after another."""
    tasks, now = [], 0.0
    for job in sorted(instance.jobs, key=lambda j: j.arrival):
        now = max(now, job.arrival)
        for r in range(job.rounds):
            for k in range(job.tasks_per_round):
                tasks.append({"job": job.name, "round": r, "index": k, "gpu": 0, "start": now})
                now += job.train_time[0] + job.sync_time[0]
    return {"tasks": tasks}


def placement_all_on_fastest(instance: Any) -> dict[str, Any]:
    """placement: the jobs share the workers of the fastest node; the others serve the last."""
    speed: dict[str, float] = {}
    for k, w in enumerate(instance.workers):
        speed[w.node] = speed.get(w.node, 0.0) + sum(row[k] for row in instance.throughput)
    fastest = max(speed, key=lambda node: speed[node])
    order = sorted(range(len(instance.workers)), key=lambda k: instance.workers[k].node != fastest)
    near = max(sum(w.node == fastest for w in instance.workers), len(instance.jobs))
    jobs: dict[str, list[str]] = {j.name: [] for j in instance.jobs}
    for n, k in enumerate(order):
        job = instance.jobs[n % len(instance.jobs) if n < near else -1]
        jobs[job.name].append(instance.workers[k].name)
    return {"jobs": jobs}


GPU0 = dlsched.UserMethod(
    hare_all_on_gpu0, family="hare", guarantee=100.0, summary="every task on GPU 0 (userpkg)"
)
