"""Offline rules written as a user writes them: plain functions ``instance -> answer``, each
returning the form ``dlsched solve --json`` prints under ``solution`` (docs/user-methods.md).

    dlsched compare hare/toy-2gpu --methods examples/rules.py:hare_all_on_gpu0
    dlsched compare placement/liu2024-motivating --methods examples/rules.py:placement_greedy

Two are naive on purpose (``hare_all_on_gpu0``, ``placement_all_on_fastest``): the worst-case
search finds instances where they are far from the optimum. The others are simple greedy rules.
"""

from __future__ import annotations

import math
from typing import Any


def hare_all_on_gpu0(instance: Any) -> dict[str, Any]:
    """hare: every task on GPU 0, jobs in order of arrival, one task after another (so each
    round starts after the previous one has trained and synchronised)."""
    tasks, now = [], 0.0
    for job in sorted(instance.jobs, key=lambda j: j.arrival):
        now = max(now, job.arrival)
        for r in range(job.rounds):
            for k in range(job.tasks_per_round):
                tasks.append({"job": job.name, "round": r, "index": k, "gpu": 0, "start": now})
                now += job.train_time[0] + job.sync_time[0]
    return {"tasks": tasks}


def hare_greedy(instance: Any) -> dict[str, Any]:
    """hare: jobs in order of arrival, each task on the GPU where its training ends first
    (a round starts once the previous round has trained and synchronised)."""
    free = [0.0] * len(instance.gpus)
    tasks = []
    for job in sorted(instance.jobs, key=lambda j: j.arrival):
        ready = job.arrival
        for r in range(job.rounds):
            end = ready
            for k in range(job.tasks_per_round):
                g = min(range(len(free)), key=lambda m: max(free[m], ready) + job.train_time[m])
                start = max(free[g], ready)
                free[g] = start + job.train_time[g]
                end = max(end, free[g] + job.sync_time[g])
                tasks.append({"job": job.name, "round": r, "index": k, "gpu": g, "start": start})
            ready = end
    return {"tasks": tasks}


def placement_all_on_fastest(instance: Any) -> dict[str, Any]:
    """placement: the jobs share the workers of the fastest node (most samples per second in
    all), one after another; every other worker serves the last job."""
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


def placement_greedy(instance: Any) -> dict[str, Any]:
    """placement: each worker in turn to the job it speeds up most for its share (its
    throughput for the job over the job's workers so far, plus one)."""
    count = [0] * len(instance.jobs)
    jobs: dict[str, list[str]] = {j.name: [] for j in instance.jobs}
    for k, w in enumerate(instance.workers):
        i = max(range(len(count)), key=lambda i: instance.throughput[i][k] / (count[i] + 1))
        if 0 in count and count[i] > 0:  # every job needs one worker first
            i = count.index(0)
        count[i] += 1
        jobs[instance.jobs[i].name].append(w.name)
    return {"jobs": jobs}


def elastic_one_at_a_time(instance: Any) -> dict[str, Any]:
    """elastic: jobs in order of arrival, one after another, each with one worker of the
    first type (and one parameter server of the first type) on the first server; the duration
    is left out (dlsched derives the fewest slots that train the job)."""
    from dlsched.models.elastic.instance import duration

    jobs, now = {}, 0
    server = instance.servers[0].name
    for j in sorted(range(instance.num_jobs), key=lambda j: instance.jobs[j].arrival):
        job = instance.jobs[j]
        start = max(now, job.arrival)
        run: dict[str, Any] = {"start": start, "worker_type": 0, "workers": {server: 1}}
        if instance.is_ps:
            run |= {"ps_type": 0, "ps": {server: 1}}
        jobs[job.name] = run
        now = start + duration(instance, j, 0, 0 if instance.is_ps else None, 1, True)
    return {"jobs": jobs}


def ddlwmp_one_at_a_time(instance: Any) -> dict[str, Any]:
    """ddlwmp: jobs in order of release, one after another on the slot grid, each stage's
    replicas packed on the servers in order."""
    from dlsched.models.ddlwmp.alpha import alpha_ms
    from dlsched.models.ddlwmp.check import busy_slots, run_seconds

    cluster, now = instance.cluster, 0.0
    jobs = {}
    for job in sorted(instance.jobs, key=lambda j: j.release):
        rows: dict[int, list[int]] = {}
        m, room = 0, cluster.gpus_per_server
        for s, stage in enumerate(job.stages):
            for _ in range(stage.replicas):
                if room == 0:
                    m, room = m + 1, cluster.gpus_per_server
                rows.setdefault(m, [0] * len(job.stages))[s] += 1
                room -= 1
        start = max(now, math.ceil(job.release / cluster.slot_s) * cluster.slot_s)
        placement = tuple((server, tuple(row)) for server, row in sorted(rows.items()))
        took = busy_slots(run_seconds(job, alpha_ms(job, cluster, placement)), cluster.slot_s)
        now = start + took * cluster.slot_s
        jobs[job.name] = {"start": start, "placement": {str(k): v for k, v in rows.items()}}
    return {"jobs": jobs}
