"""Gantt charts of hare schedules (matplotlib): one row per GPU, a solid bar for the training
time T^c (which occupies the GPU) and a hatched bar for the synchronization T^s (which does not,
Algorithm 1 line 16), one colour per job, round and task index written in the bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlsched.errors import OptionError
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule


def gantt(instance: HareInstance, schedule: TaskSchedule, ax: Any = None, title: str = "") -> Any:
    """Draw ``schedule`` on ``ax`` (a new figure if None) and return the axes."""
    import matplotlib.pyplot as plt

    ev = check_schedule(instance, schedule)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.6 * instance.num_gpus + 1.4))
    cmap = plt.get_cmap("tab20")
    for e in schedule.entries:
        job = instance.jobs[e.job]
        tc, ts = job.train_time[e.gpu], job.sync_time[e.gpu]
        colour = cmap(e.job % 20)
        ax.barh(e.gpu, tc, left=e.start, height=0.6, color=colour, edgecolor="black", lw=0.5)
        if ts > 0:
            ax.barh(
                e.gpu + 0.33,
                ts,
                left=e.start + tc,
                height=0.12,
                color=colour,
                alpha=0.6,
                hatch="///",
                edgecolor="grey",
                lw=0.3,
            )
        ax.text(
            e.start + tc / 2,
            e.gpu,
            f"{job.name}\nr{e.round}.{e.index}",
            ha="center",
            va="center",
            fontsize=6,
        )
    for n, c in enumerate(ev.completion):
        ax.axvline(c, color=cmap(n % 20), ls=":", lw=0.8)
    ax.set_yticks(range(instance.num_gpus), instance.gpus)
    ax.invert_yaxis()
    ax.set_xlabel("time")
    ax.set_title(title or f"{instance.name}: total weighted completion {ev.objective:g}")
    return ax


def save_gantt(instance: HareInstance, outcome: Any, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    sched = getattr(outcome, "solution", outcome)
    if not isinstance(sched, TaskSchedule):
        raise OptionError("--plot", str(path), "this method returns no schedule to draw")
    ax = gantt(instance, sched, title=f"{instance.name} / {getattr(outcome, 'method', '')}")
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=120)
    plt.close(ax.figure)
    return path
