"""The picture of a P1 placement (matplotlib): one column per worker, grouped by node (then GPU
type), coloured by the job it serves, as tall as the time it is busy with that job. All jobs
start together and run on disjoint workers, so a column is the job's JCT Lambda_i (7): the
worker's own computation T_i |pi_ik| / rho_ik (solid, eq. 2), its wait for the job's slowest
worker (pale; none under the proportional split (12)), and the ring all-reduce T_i l_c (hatched,
eq. 6). The worker's throughput rho_ik for its job is written in its column and its name in
its job's colour; the legend gives each job's workers, throughput V_i (13) and JCT; a dashed
line marks the average JCT (8). When the JCTs differ by more than :data:`LOG_SPREAD` times the
time axis is logarithmic, so that the shortest job's columns still show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlsched.models.placement.check import PlacementEvaluation, check_placement
from dlsched.models.placement.instance import PlacementInstance
from dlsched.models.placement.solution import Placement
from dlsched.plotting import default_title, job_colour, save_chart

#: Most workers whose throughput is written in their column (beyond, the text would not fit).
LABELLED_WORKERS = 40
#: Ratio of the longest to the shortest JCT above which the time axis is logarithmic.
LOG_SPREAD = 20
#: Most workers whose names are written across (beyond, they are turned upright).
ACROSS_WORKERS = 10
COMM_STYLE: dict[str, Any] = {"alpha": 0.55, "hatch": "///", "edgecolor": "grey", "lw": 0.3}
WAIT_STYLE: dict[str, Any] = {"alpha": 0.25, "edgecolor": "grey", "lw": 0.3}


def worker_order(instance: PlacementInstance) -> list[int]:
    """Workers by node (in order of first appearance), then GPU type, then index."""
    nodes = {h: n for n, h in enumerate(instance.nodes)}
    workers = instance.workers
    return sorted(range(instance.num_workers), key=lambda k: (nodes[workers[k].node],
                                                              workers[k].gpu, k))  # fmt: skip


def busy_times(
    instance: PlacementInstance, placement: Placement, ev: PlacementEvaluation
) -> list[tuple[float, float, float]]:
    """Per worker k: (its computation T_i |pi_ik| / rho_ik, its wait for the job's slowest
    worker, the job's communication T_i l_c), i = the job it serves; they add up to Lambda_i."""
    out = []
    for k, i in enumerate(placement.assignment):
        mine = placement.workers_of(i)
        epochs = instance.jobs[i].epochs
        own = epochs * ev.data_split[i][mine.index(k)] / instance.throughput[i][k]
        out.append((own, max(ev.computation[i] - own, 0.0), ev.communication[i]))
    return out


def _label(w: Any) -> str:
    return w.name if w.gpu.lower() in w.name.lower() else f"{w.name} ({w.gpu})"


def _nodes(ax: Any, instance: PlacementInstance, order: list[int], x: list[float]) -> None:
    """Each node's name above its columns and a dotted line between nodes."""
    from matplotlib.transforms import blended_transform_factory

    top = blended_transform_factory(ax.transData, ax.transAxes)
    start = 0
    for n in range(1, len(order) + 1):
        node = instance.workers[order[start]].node
        if n == len(order) or instance.workers[order[n]].node != node:
            ax.text((x[start] + x[n - 1]) / 2, 0.99, node, transform=top, ha="center",
                    va="top", fontsize=7, color="dimgrey")  # fmt: skip
            if n < len(order):
                ax.axvline((x[n - 1] + x[n]) / 2, color="grey", ls=":", lw=0.8)
            start = n


def _job_label(instance: PlacementInstance, ev: PlacementEvaluation, i: int) -> str:
    """Job i, its number of workers K_i, throughput V_i (13) and JCT Lambda_i (7)."""
    workers = f"{ev.workers[i]} worker{'s' * (ev.workers[i] > 1)}"
    return (
        f"{instance.jobs[i].name}: {workers}, V {ev.throughput[i]:,.0f}/s, JCT {ev.jct[i]:,.0f} s"
    )


def _legend(ax: Any, instance: PlacementInstance, ev: PlacementEvaluation, waits: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [
        Patch(facecolor=job_colour(i), edgecolor="black", lw=0.5, label=_job_label(instance, ev, i))
        for i in range(instance.num_jobs)
    ]
    if waits:
        handles.append(Patch(facecolor="white", label="waiting for the slowest worker",
                             **WAIT_STYLE))  # fmt: skip
    if any(ev.communication):
        handles.append(Patch(facecolor="white", label="ring all-reduce", **COMM_STYLE))
    handles.append(Line2D([], [], color="black", ls="--", lw=0.8, label="average JCT"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)


def _throughputs(
    ax: Any, instance: PlacementInstance, placement: Placement, order: list[int], x: list[float]
) -> None:
    """rho_ik written upright at the foot of each column."""
    from matplotlib.transforms import blended_transform_factory

    foot = blended_transform_factory(ax.transData, ax.transAxes)
    for xk, k in zip(x, order, strict=True):
        rho = instance.throughput[placement.assignment[k]][k]
        ax.text(xk, 0.01, f"{rho:,.0f}/s", transform=foot, rotation=90, ha="center",
                va="bottom", fontsize=7 if len(order) <= ACROSS_WORKERS else 6)  # fmt: skip


def _time_axis(ax: Any, ev: PlacementEvaluation) -> None:
    """Linear from 0, or logarithmic when the JCTs spread over more than LOG_SPREAD times."""
    low, high = min(ev.jct), max(ev.jct)
    if low > 0 and high > LOG_SPREAD * low:
        ax.set_yscale("log")
        ax.set_ylim(low / 4, high * 2.5)
    else:
        ax.set_ylim(0, 1.12 * high)


def _worker_names(
    ax: Any, instance: PlacementInstance, placement: Placement, order: list[int], x: list[float]
) -> None:
    """Each column's worker (and GPU type) below it, in the colour of its job."""
    across = len(order) <= ACROSS_WORKERS
    size = 8 if across else 7 if len(order) <= LABELLED_WORKERS else 5
    ax.set_xticks(x, [_label(instance.workers[k]) for k in order], rotation=0 if across else 90,
                  fontsize=size)  # fmt: skip
    for tick, k in zip(ax.get_xticklabels(), order, strict=True):
        tick.set_color(job_colour(placement.assignment[k]))
    ax.set_xlim(x[0] - 0.6, x[-1] + 0.6)


def picture(
    instance: PlacementInstance, placement: Placement, ax: Any = None, title: str | None = None
) -> Any:
    """Draw ``placement`` (verified first) on ``ax`` (a new figure if None); return the axes.
    The computation bars are ``ax.containers[0]``, one per worker in :func:`worker_order`."""
    import matplotlib.pyplot as plt

    ev = check_placement(instance, placement)
    order = worker_order(instance)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(max(0.22 * len(order) + 3, 7), 26), 4.2))
    nodes = {h: n for n, h in enumerate(instance.nodes)}
    x = [n + 0.5 * nodes[instance.workers[k].node] for n, k in enumerate(order)]
    busy = busy_times(instance, placement, ev)
    colours = [job_colour(placement.assignment[k]) for k in order]
    own, wait, comm = ([busy[k][part] for k in order] for part in range(3))
    ax.bar(x, own, width=0.8, color=colours, edgecolor="black", lw=0.5)
    ax.bar(x, wait, bottom=own, width=0.8, color=colours, **WAIT_STYLE)
    ax.bar(x, comm, bottom=[a + b for a, b in zip(own, wait, strict=True)], width=0.8,
           color=colours, **COMM_STYLE)  # fmt: skip
    if len(order) <= LABELLED_WORKERS:
        _throughputs(ax, instance, placement, order, x)
    ax.axhline(ev.objective, color="black", ls="--", lw=0.8)
    _time_axis(ax, ev)
    _nodes(ax, instance, order, x)
    _legend(ax, instance, ev, any(w > 1e-9 * max(ev.jct) for w in wait))
    _worker_names(ax, instance, placement, order, x)
    ax.set_ylabel("time busy with its job (s)")
    ax.set_title(title or default_title(instance, ev.objective, "average JCT (s)"))
    return ax


def save_picture(instance: PlacementInstance, outcome: Any, path: Path) -> Path:
    """The picture of ``outcome``'s placement, saved (the family's ``plot``)."""
    return save_chart(picture, instance, outcome, Placement, path)


__all__ = ["busy_times", "picture", "save_picture", "worker_order"]
