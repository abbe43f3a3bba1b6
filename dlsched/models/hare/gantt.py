"""Gantt charts of hare schedules (matplotlib): one row per GPU, a solid bar for the training
time T^c (which occupies the GPU) and a hatched bar for the synchronization T^s (which does not,
Algorithm 1 line 16), one colour per job (named in the legend), round and task index written in
the bar, a dotted line at each job's completion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.plotting import default_title, save_chart

#: Jobs named in the legend; colours repeat beyond this (the tab20 palette).
LEGEND_JOBS = 20
SYNC_STYLE: dict[str, Any] = {"alpha": 0.6, "hatch": "///", "edgecolor": "grey", "lw": 0.3}


def _colour(job: int) -> Any:
    """tab20 with the ten dark hues first, so neighbouring jobs never share a hue."""
    import matplotlib.pyplot as plt

    k = job % LEGEND_JOBS
    return plt.get_cmap("tab20")(2 * (k % 10) + k // 10)


def _draw_task(ax: Any, instance: HareInstance, e: Any) -> bool:
    """Draw one task; True when it has a synchronization bar."""
    job = instance.jobs[e.job]
    tc, ts = job.train_time[e.gpu], job.sync_time[e.gpu]
    colour = _colour(e.job)
    ax.barh(e.gpu, tc, left=e.start, height=0.6, color=colour, edgecolor="black", lw=0.5)
    if ts > 0:
        ax.barh(e.gpu + 0.33, ts, left=e.start + tc, height=0.12, color=colour, **SYNC_STYLE)
    label = f"{job.name}\nr{e.round}.{e.index}"
    ax.text(e.start + tc / 2, e.gpu, label, ha="center", va="center", fontsize=6)
    return ts > 0


def _legend(ax: Any, instance: HareInstance, used: set[int], sync: bool) -> None:
    """Jobs' colours, the sync hatch (if drawn) and the completion lines, outside the axes."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    jobs = sorted(used)
    handles: list[Any] = [
        Patch(facecolor=_colour(n), edgecolor="black", lw=0.5, label=instance.jobs[n].name)
        for n in jobs[:LEGEND_JOBS]
    ]
    if len(jobs) > LEGEND_JOBS:
        rest = len(jobs) - LEGEND_JOBS
        handles.append(Patch(color="none", label=f"+{rest} jobs (colours repeat)"))
    if sync:
        handles.append(Patch(facecolor="white", label="synchronization $T^s$", **SYNC_STYLE))
    handles.append(Line2D([], [], color="grey", ls=":", lw=0.8, label="job completion"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)


def gantt(instance: HareInstance, schedule: TaskSchedule, ax: Any = None, title: str = "") -> Any:
    """Draw ``schedule`` on ``ax`` (a new figure if None) and return the axes."""
    import matplotlib.pyplot as plt

    ev = check_schedule(instance, schedule)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.6 * instance.num_gpus + 1.4))
    sync = False
    for e in schedule.entries:
        sync = _draw_task(ax, instance, e) or sync
    for n, c in enumerate(ev.completion):
        ax.axvline(c, color=_colour(n), ls=":", lw=0.8)
    _legend(ax, instance, {e.job for e in schedule.entries}, sync)
    ax.set_yticks(range(instance.num_gpus), instance.gpus)
    ax.invert_yaxis()
    ax.set_xlabel("time")
    ax.set_title(title or default_title(instance, ev.objective))
    return ax


def save_gantt(instance: HareInstance, outcome: Any, path: Path) -> Path:
    """The Gantt chart of ``outcome``'s schedule, saved (the family's ``plot``)."""
    return save_chart(gantt, instance, outcome, TaskSchedule, path)
