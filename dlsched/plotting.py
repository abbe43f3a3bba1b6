"""What every family's pictures share: the title of an outcome, the solution a picture needs,
and saving a figure. A drawing function returns its axes (in Jupyter the figure shows inline);
only :func:`save` writes a file, and nothing here chooses matplotlib's backend (without a
display matplotlib draws off screen by itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlsched.errors import OptionError


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


def solution_of(outcome: Any, kind: type, path: Path) -> Any:
    """The outcome's solution (or ``outcome`` itself, a bare solution) if it is a ``kind``;
    else the one-line error of ``--plot``."""
    solution = getattr(outcome, "solution", outcome)
    if not isinstance(solution, kind):
        method = getattr(outcome, "method", "this method")
        raise OptionError("--plot", str(path), f"{method} returns no schedule to draw")
    return solution


def default_title(instance: Any, objective: float, what: str = "total weighted completion") -> str:
    """The title of a chart drawn with none given: the instance and the checked objective."""
    return f"{instance.name}: {what} {objective:g}"


def save_chart(draw: Any, instance: Any, outcome: Any, kind: type, path: Path) -> Path:
    """``draw(instance, solution, title=...)`` of ``outcome``'s solution (a ``kind``), titled
    by :func:`outcome_title`, saved to ``path``: the ``plot`` of a family."""
    solution = solution_of(outcome, kind, path)
    return save(draw(instance, solution, title=outcome_title(instance, outcome)), path)


def save(ax: Any, path: Path) -> Path:
    """Write the figure of ``ax`` to ``path`` and release it."""
    import matplotlib.pyplot as plt

    try:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    finally:
        plt.close(ax.figure)
    return path


__all__ = ["default_title", "outcome_title", "save", "save_chart", "solution_of"]
