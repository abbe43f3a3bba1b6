"""The record every method returns: a verified solution with status, objective, bound, gap."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dlsched.solvers.base import SolveResult, Status, relative_gap


@dataclass(frozen=True)
class Outcome:
    """A method's answer on one instance.

    ``objective`` is always the checker's re-evaluation of ``solution`` (never a solver's own
    number); ``bound`` is a certified lower bound (minimization) or None; ``status`` is
    ``optimal`` only when a solver proved it.
    """

    method: str
    instance: str
    instance_hash: str
    status: Status
    objective: float | None
    bound: float | None
    wall_time: float
    solution: Any = None
    evaluation: Any = None
    solver: SolveResult | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        if self.status == Status.OPTIMAL:
            return 0.0
        return relative_gap(self.objective, self.bound)

    def to_json(self, instance: Any = None) -> dict[str, Any]:
        sol = None
        if self.solution is not None:
            sol = self.solution.to_json(instance) if instance is not None else repr(self.solution)
        out: dict[str, Any] = {
            "method": self.method,
            "instance": self.instance,
            "instance_hash": self.instance_hash,
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_time": self.wall_time,
            "checked": self.solution is not None,
            "solution": sol,
        }
        if self.solver is not None:
            out["solver"] = self.solver.summary()
        if self.details:
            out["details"] = dict(self.details)
        return out
