"""The objective of the CP-SAT model of Hare_Sched, min sum_n w_n C_n, with what is known
about it stated: the proven bounds of earlier stages below it, a known schedule's cost above."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..scaling import ScaledData


def add_objective(
    cp: Any,
    d: ScaledData,
    completion: list[Any],
    upper: int | None,
    lower: int | None,
    partial: Sequence[tuple[Sequence[int], int]],
) -> None:
    """min sum_n w_n C_n (Hare_Sched's objective), with the proven bounds stated: each
    group's sum of weighted completions >= its bound, the total within [lower, upper]."""
    for group, bound in partial:
        cp.add(sum(d.weight[n] * completion[n] for n in group) >= bound)
    objective = sum(w * c for w, c in zip(d.weight, completion, strict=True))
    if upper is not None:
        cp.add(objective <= upper)
    if lower is not None:
        cp.add(objective >= lower)
    cp.minimize(objective)


__all__ = ["add_objective"]
