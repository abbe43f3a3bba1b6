"""Gantt charts of elastic schedules (matplotlib): one row per server, one bar per job on each
server it uses, from its start to its completion, split into lanes where jobs share a server at
the same time; the bar says how many workers (and PSs) the job has there and is hatched when
the job is spread over several servers (q_j = 0, slower, eq. 1/14); one colour per job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlsched.models.elastic.check import check_schedule
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.solution import ElasticSchedule, JobSchedule
from dlsched.plotting import default_title, save_chart

#: Jobs named in the legend; colours repeat beyond this (the tab20 palette).
LEGEND_JOBS = 20
TEXT_BOX = {"facecolor": "white", "alpha": 0.75, "lw": 0, "pad": 0.6}


def _colour(job: int) -> Any:
    import matplotlib.pyplot as plt

    k = job % LEGEND_JOBS
    return plt.get_cmap("tab20")(2 * (k % 10) + k // 10)


def lanes(entries: list[JobSchedule]) -> tuple[dict[int, int], int]:
    """Each entry (by index) its lane on one server: the lowest lane free at its start
    (interval colouring in start order); and the number of lanes."""
    ends: list[int] = []
    out = {}
    for k in sorted(range(len(entries)), key=lambda i: (entries[i].start, entries[i].job)):
        e = entries[k]
        lane = next((i for i, end in enumerate(ends) if end <= e.start), len(ends))
        if lane == len(ends):
            ends.append(e.end)
        else:
            ends[lane] = e.end
        out[k] = lane
    return out, max(len(ends), 1)


def _label(inst: ElasticInstance, e: JobSchedule, h: int) -> str:
    text = f"{inst.jobs[e.job].name} {e.workers[h]}w"
    if inst.is_ps and e.ps[h]:
        text += f"+{e.ps[h]}ps"
    return text


def _draw_server(ax: Any, inst: ElasticInstance, h: int, entries: list[JobSchedule]) -> None:
    here = [e for e in entries if e.workers[h] or (inst.is_ps and e.ps[h])]
    lane_of, count = lanes(here)
    height = 0.8 / count
    for k, e in enumerate(here):
        y = h - 0.4 + height * (lane_of[k] + 0.5)
        hatch = None if e.colocated() else "//"
        ax.barh(y, e.duration, left=e.start, height=height * 0.9, color=_colour(e.job),
                edgecolor="black", lw=0.5, hatch=hatch)  # fmt: skip
        ax.text(e.start + e.duration / 2, y, _label(inst, e, h), ha="center", va="center",
                fontsize=6, bbox=TEXT_BOX)  # fmt: skip


def _legend(ax: Any, inst: ElasticInstance, jobs: list[int]) -> None:
    from matplotlib.patches import Patch

    handles: list[Any] = [
        Patch(facecolor=_colour(n), edgecolor="black", lw=0.5, label=inst.jobs[n].name)
        for n in jobs[:LEGEND_JOBS]
    ]
    if len(jobs) > LEGEND_JOBS:
        handles.append(Patch(color="none", label=f"+{len(jobs) - LEGEND_JOBS} jobs"))
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="spread (q=0)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)


def gantt(
    instance: ElasticInstance, schedule: ElasticSchedule, ax: Any = None, title: str = ""
) -> Any:
    """Draw ``schedule`` (verified first) on ``ax`` (a new figure if None); return the axes."""
    import matplotlib.pyplot as plt

    ev = check_schedule(instance, schedule)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.6 * instance.num_servers + 1.4))
    entries = list(schedule.entries)
    for h in range(instance.num_servers):
        _draw_server(ax, instance, h, entries)
    _legend(ax, instance, sorted({e.job for e in entries}))
    ax.set_yticks(range(instance.num_servers), [s.name for s in instance.servers])
    ax.set_ylim(instance.num_servers - 0.5, -0.5)
    ax.set_xlim(0, max([instance.horizon, *(e.end for e in entries)]))
    ax.set_xlabel("time slot")
    ax.set_title(title or default_title(instance, ev.objective))
    return ax


def save_gantt(instance: ElasticInstance, outcome: Any, path: Path) -> Path:
    """The Gantt chart of ``outcome``'s schedule, saved (the family's ``plot``)."""
    return save_chart(gantt, instance, outcome, ElasticSchedule, path)


__all__ = ["gantt", "lanes", "save_gantt"]
