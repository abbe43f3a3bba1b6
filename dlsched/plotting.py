"""What every family's pictures share: the title of an outcome, the solution a picture needs,
drawing it inline and saving a figure; and the picture of :func:`dlsched.api.compare`'s ratios.
A drawing function returns its axes (in Jupyter the figure shows inline); only :func:`save`
writes a file, and nothing here chooses matplotlib's backend (without a display matplotlib
draws off screen by itself)."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Any

from dlsched.errors import OptionError

#: Jobs told apart by colour: the tab20 palette, colours repeating beyond this many.
PALETTE_JOBS = 20


def job_colour(job: int) -> Any:
    """Job ``job``'s colour: tab20 with its ten dark hues first, so that neighbouring jobs never
    share a hue."""
    import matplotlib.pyplot as plt

    k = job % PALETTE_JOBS
    return plt.get_cmap("tab20")(2 * (k % 10) + k // 10)


def outcome_title(instance: Any, outcome: Any) -> str:
    """``name / method: status, objective X``, plus bound and gap unless proven optimal."""
    status = str(getattr(outcome, "status", ""))
    head = f"{instance.name} / {getattr(outcome, 'method', '')}: {status}"
    objective = getattr(outcome, "objective", None)
    if objective is not None:
        head += f", objective {objective:g}"
    bound, gap = getattr(outcome, "bound", None), getattr(outcome, "gap", None)
    if status != "optimal" and bound is not None and gap is not None:
        head += f", bound {bound:g}, gap {gap:.2%}"
    return head


def solution_of(outcome: Any, kind: type, path: Path | None = None) -> Any:
    """The outcome's solution (or ``outcome`` itself, a bare solution) if it is a ``kind``;
    else the one-line error: of ``--plot`` naming ``path``, or of ``plot`` naming the method
    when drawn inline (no ``path``)."""
    solution = getattr(outcome, "solution", outcome)
    if not isinstance(solution, kind):
        method = getattr(outcome, "method", "this method")
        if path is None:
            raise OptionError("plot", method, "the method returns no schedule to draw")
        raise OptionError("--plot", str(path), f"{method} returns no schedule to draw")
    return solution


def drawn_kind(draw: Any) -> type:
    """The solution type a drawing function ``draw(instance, solution, ax=None, title=None)``
    draws: the annotation of its second parameter."""
    second = list(inspect.signature(draw).parameters)[1]
    kind: type = typing.get_type_hints(draw)[second]
    return kind


def draw_chart(draw: Any, instance: Any, outcome: Any, ax: Any = None) -> Any:
    """``draw(instance, solution, ax=ax, title=...)`` of ``outcome``'s solution, titled by
    :func:`outcome_title`: the ``draw`` of a family (:meth:`dlsched.result.Outcome.plot`)."""
    solution = solution_of(outcome, drawn_kind(draw))
    return draw(instance, solution, ax=ax, title=outcome_title(instance, outcome))


def default_title(instance: Any, objective: float, what: str = "total weighted completion") -> str:
    """The title of a chart drawn with none given: the instance and the checked objective."""
    return f"{instance.name}: {what} {objective:g}"


def save_chart(draw: Any, instance: Any, outcome: Any, kind: type, path: Path) -> Path:
    """``draw(instance, solution, title=...)`` of ``outcome``'s solution (a ``kind``), titled
    by :func:`outcome_title`, saved to ``path``: the ``plot`` of a family."""
    solution = solution_of(outcome, kind, path)
    return save(draw(instance, solution, title=outcome_title(instance, outcome)), path)


def plot_ratios(frame: Any, x: str = "jobs", ax: Any = None) -> Any:
    """The ratios of :func:`dlsched.api.compare` frames (several instances' concatenated)
    against ``x`` (a column: the instance's ``jobs`` by default), one line per method through
    its mean ratio at each ``x``, each instance's ratio a dot; the reference's own rows and rows
    without a ratio are left out, and a grey line marks 1 (the reference). Returns the axes.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"method": ["exact", "hare", "hare", "hare"],
    ...     "reference_method": "exact", "jobs": [2, 2, 2, 4], "ratio": [1.0, 1.0, 1.5, 2.0]})
    >>> ax = plot_ratios(frame)
    >>> [(line.get_label(), line.get_ydata().tolist()) for line in ax.get_lines()[1:]]
    [('hare', [1.25, 2.0])]
    """
    import matplotlib.pyplot as plt

    from dlsched import arguments

    arguments.frame("frame", frame, ("method", "reference_method", "ratio", arguments.text("x", x)))
    rows = frame[(frame["method"] != frame["reference_method"]) & frame["ratio"].notna()]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.axhline(1.0, color="grey", lw=0.8)
    if rows[x].nunique() <= 1:  # one size (one instance): a bar per method
        return _ratio_bars(rows, ax)
    for n, (method, group) in enumerate(rows.groupby("method", sort=False)):
        mean = group.groupby(x, sort=True)["ratio"].mean()
        colour = job_colour(n)
        ax.plot(mean.index, mean.to_numpy(), marker="o", color=colour, label=str(method))
        ax.scatter(group[x], group["ratio"], s=10, alpha=0.4, color=colour)
    if rows[x].dtype.kind in "iu":  # instance sizes: whole ticks
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(x)
    ax.set_ylabel("ratio to the reference")
    ax.legend(fontsize=8)
    return ax


def _ratio_bars(rows: Any, ax: Any) -> Any:
    """One bar per method: its mean ratio to the reference, a black tick at its guarantee."""
    means = rows.groupby("method", sort=False)["ratio"].mean()
    ax.bar(range(len(means)), means.to_numpy(), color=[job_colour(n) for n in range(len(means))])
    if "guarantee" in rows:
        bound = rows.groupby("method", sort=False)["guarantee"].first().to_numpy(dtype=float)
        shown = [n for n, b in enumerate(bound) if b == b and b != float("inf")]  # finite
        ax.scatter(shown, bound[shown], marker="_", s=400, color="black", label="guarantee")
        if shown:
            ax.legend(fontsize=8)
    ax.set_xticks(range(len(means)), [str(m) for m in means.index], rotation=30, ha="right")
    ax.set_ylabel("ratio to the reference")
    return ax


def save(ax: Any, path: Path) -> Path:
    """Write the figure of ``ax`` to ``path`` and release it."""
    import matplotlib.pyplot as plt

    try:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    finally:
        plt.close(ax.figure)
    return path


__all__ = [
    "PALETTE_JOBS",
    "default_title",
    "draw_chart",
    "drawn_kind",
    "job_colour",
    "outcome_title",
    "plot_ratios",
    "save",
    "save_chart",
    "solution_of",
]
