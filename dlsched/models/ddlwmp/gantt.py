"""The ``plot`` of the ddlwmp family: a Gantt chart of a schedule, one row per GPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlsched.models.ddlwmp.check import busy_slots, check_schedule, run_seconds
from dlsched.models.ddlwmp.instance import DdlwmpInstance
from dlsched.models.ddlwmp.solution import Schedule
from dlsched.plotting import default_title, save_chart


def gpu_rows(
    instance: DdlwmpInstance, sched: Schedule, alphas: Any
) -> list[tuple[int, int, float, float]]:
    """(job, GPU row, start, end) bars: each job's GPUs of server m get the lowest GPU rows of
    m free at its start (a valid colouring since no server is overcommitted)."""
    c = instance.cluster
    busy_until: dict[int, float] = {}
    bars = []
    for i in sorted(range(instance.num_jobs), key=lambda i: sched.starts[i]):
        t = sched.starts[i]
        held = busy_slots(run_seconds(instance.jobs[i], alphas[i]), c.slot_s) * c.slot_s
        for m, row in sched.placements[i]:
            free = [
                r
                for r in range(m * c.gpus_per_server, (m + 1) * c.gpus_per_server)
                if busy_until.get(r, 0.0) <= t + 1e-9
            ]
            for r in free[: sum(row)]:
                busy_until[r] = t + held
                bars.append((i, r, t, t + run_seconds(instance.jobs[i], alphas[i])))
    return bars


def gantt(
    instance: DdlwmpInstance, sched: Schedule, ax: Any = None, title: str | None = None
) -> Any:
    """Draw ``sched`` (verified first) on ``ax`` (a new figure if None); return the axes."""
    import matplotlib.pyplot as plt

    ev = check_schedule(instance, sched)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.35 * instance.cluster.total_gpus + 1.2))
    colors = plt.get_cmap("tab20")
    for i, r, a, b in gpu_rows(instance, sched, ev.alphas):
        ax.barh(r, b - a, left=a, color=colors(i % 20), edgecolor="black", linewidth=0.4)
        ax.text(a + (b - a) / 2, r, instance.jobs[i].name, ha="center", va="center", fontsize=7)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("GPU (server x g + index)")
    ax.set_title(title or default_title(instance, ev.objective, "sum of completions (s)"))
    ax.invert_yaxis()
    return ax


def save_gantt(instance: DdlwmpInstance, outcome: Any, path: Path) -> Path:
    """The Gantt chart of ``outcome``'s schedule, saved (the family's ``plot``)."""
    return save_chart(gantt, instance, outcome, Schedule, path)


__all__ = ["gantt", "gpu_rows", "save_gantt"]
